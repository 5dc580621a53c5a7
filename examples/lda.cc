// LDA by collapsed Gibbs sampling, on strads: lda_serial.cc with the tables in dvectors, the
// sweep an AsyncFor and the per-topic totals nk an accumulator (strads/accumulator.h).
//
// Reconnaissance sees token t touch its document's row nd[d], its word's row nw[w] and z[t];
// the scheduler blocks the tables and runs conflict-free groups of tokens in rounds. Adds to
// nk are buffered and never conflict: a token sees the totals as its AsyncFor call began plus
// its own adds (less its old topic) and the call's deltas are added at its end, the staleness
// every distributed LDA accepts for nk (the serial twin sees fresh totals). A sweep is --slices
// calls over consecutive token ranges, so the totals are at most a slice old. Results do not depend
// on --nodes, mpiexec -n or --threads; with --async-engine locks they do (record and replay such
// runs).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/epoch_times.h"
#include "common/lda_corpus.h"
#include "strads/strads.h"

using examples::Token;
using examples::TopicRow;

namespace examples {

// Collapsed Gibbs: the topic of a token whose own assignment is already removed from the
// counts, given its document's and word's counts and the per-topic totals `nk`.
template <class Totals>
int SampleTopic(const LdaFlags& f, int64_t vocabulary, const TopicRow& nd, const TopicRow& nw,
                const Totals& nk, double u) {
  double p[kMaxTopics];
  double sum = 0;
  const double wbeta = static_cast<double>(vocabulary) * f.beta;
  for (int k = 0; k < f.topics; ++k) {
    sum += (nd.n[k] + f.alpha) * (nw.n[k] + f.beta) / (static_cast<double>(nk(k)) + wbeta);
    p[k] = sum;
  }
  const double target = u * sum;
  int k = 0;
  while (k + 1 < f.topics && p[k] <= target) ++k;
  return k;
}

}  // namespace examples

// AsyncFor(0, n - 1, body) as `slices` calls over consecutive ranges: the totals are added at
// the end of each, so they are at most a slice old.
template <class F>
void SlicedAsyncFor(int64_t n, int slices, F&& body) {
  const int64_t slice = std::max<int64_t>(1, (n + slices - 1) / slices);
  for (int64_t first = 0; first < n; first += slice)
    strads::AsyncFor(first, std::min(n, first + slice) - 1, body);
}

int main(int argc, char** argv) {
  examples::LdaFlags f;
  CLI::App app{"LDA by collapsed Gibbs sampling"};
  examples::AddLdaFlags(app, f);
  int slices = 8;  // a call site keeps the plans of 8 loop bounds (docs/async_for.md)
  app.add_option("--slices", slices,
                 "AsyncFor calls per sweep (the totals nk are added at the "
                 "end of each)")
      ->check(CLI::Range(1, 8));
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    examples::Corpus corpus;
    try {
      corpus = examples::LoadCorpus(f);
    } catch (const std::exception& e) {
      throw strads::CollectiveUsageError(e.what());  // every node read the same file
    }
    const int64_t n = static_cast<int64_t>(corpus.tokens.size());
    const int K = f.topics;
    examples::Counts c = examples::InitialCounts(f, corpus);
    const auto& tokens =
        strads::MakeDVector<Token>(rt, n, [&](int64_t t) { return corpus.tokens[t]; });
    std::vector<Token>().swap(corpus.tokens);  // the dvector holds them now
    auto& z = strads::MakeDVector<int32_t>(rt, n,
                                           [&](int64_t t) { return examples::InitialTopic(f, t); });
    auto& nd = strads::MakeDVector<TopicRow>(rt, corpus.docs, [&](int64_t d) { return c.nd[d]; });
    auto& nw = strads::MakeDVector<TopicRow>(rt, corpus.words, [&](int64_t w) { return c.nw[w]; });
    auto& nk = strads::MakeAccumulator<int64_t>(rt, K, [&](int64_t k) { return c.nk[k]; });

    examples::EpochTimes times(f.epochs);
    for (int epoch = 1; epoch <= f.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      SlicedAsyncFor(n, slices, [&, epoch](int64_t t) {
        const Token tok = tokens[t];
        TopicRow& d = nd[tok.doc];
        TopicRow& w = nw[tok.word];
        const int old = z[t];
        --d.n[old], --w.n[old], nk.Add(old, -1);
        const int k = examples::SampleTopic(
            f, corpus.words, d, w, [&](int j) { return nk[j]; }, examples::Uniform(f, epoch, t));
        ++d.n[k], ++w.n[k], nk.Add(k, 1);
        z[t] = k;
      });
      times.Add(epoch,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      double ll = examples::TotalsLogGamma([&](int j) { return nk[j]; }, K, corpus.words, f.beta);
      ll += strads::Sum(rt, nw,
                        [&](const TopicRow& row) { return examples::RowLogGamma(row, K, f.beta); });
      ll += strads::Sum(
          rt, nd, [&](const TopicRow& row) { return examples::RowLogGamma(row, K, f.alpha); });
      if (rt.leader()) std::printf("epoch %d loglik %.6f\n", epoch, ll / static_cast<double>(n));
    }

    if (f.timing && rt.leader()) times.Print();
    const uint64_t checksum = strads::Checksum(rt, {&nd, &nw, &nk});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
