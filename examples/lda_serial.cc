// LDA by collapsed Gibbs sampling, serial: each epoch one sweep over the tokens, in order.
//
//   for epoch in 1..E:  for each token t (document d, word w, topic z[t]):
//     take t out of nd[d], nw[w] and nk;  z[t] = a topic sampled from the rest;  put t back
//
// lda.cc is this program on strads (the diff is the port); per epoch it prints the joint
// log-likelihood per token, at the end a checksum of the counts.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/lda_corpus.h"

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

int main(int argc, char** argv) {
  examples::LdaFlags f;
  CLI::App app{"LDA by collapsed Gibbs sampling"};
  examples::AddLdaFlags(app, f);
  CLI11_PARSE(app, argc, argv);
  {
    examples::Corpus corpus;
    try {
      corpus = examples::LoadCorpus(f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lda_serial: %s\n", e.what());
      return 2;
    }
    const int64_t n = static_cast<int64_t>(corpus.tokens.size());
    const int K = f.topics;
    examples::Counts c = examples::InitialCounts(f, corpus);
    const std::vector<Token>& tokens = corpus.tokens;
    std::vector<int32_t> z = examples::InitialTopics(f, n);
    std::vector<TopicRow>& nd = c.nd;
    std::vector<TopicRow>& nw = c.nw;
    std::vector<int64_t>& nk = c.nk;

    double seconds = 0;
    for (int epoch = 1; epoch <= f.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      for (int64_t t = 0; t < n; ++t) {
        const Token tok = tokens[t];
        TopicRow& d = nd[tok.doc];
        TopicRow& w = nw[tok.word];
        const int old = z[t];
        --d.n[old], --w.n[old], --nk[old];
        const int k = examples::SampleTopic(
            f, corpus.words, d, w, [&](int j) { return nk[j]; }, examples::Uniform(f, epoch, t));
        ++d.n[k], ++w.n[k], ++nk[k];
        z[t] = k;
      }
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double ll = examples::TotalsLogGamma([&](int j) { return nk[j]; }, K, corpus.words, f.beta);
      for (const TopicRow& row : nw) ll += examples::RowLogGamma(row, K, f.beta);
      for (const TopicRow& row : nd) ll += examples::RowLogGamma(row, K, f.alpha);
      std::printf("epoch %d loglik %.6f\n", epoch, ll / static_cast<double>(n));
    }

    if (f.timing) std::printf("time per epoch: %.3f ms\n", 1e3 * seconds / std::max(1, f.epochs));
    std::printf("checksum: %s\n", examples::CountsChecksum(c).c_str());
  }
  return 0;
}
