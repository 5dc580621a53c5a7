// word2vec on strads (Figure 4 of the STRADS-AP paper): word2vec_serial.cc with the sentences
// and embeddings in dvectors and the pass a SyncFor over mini-batches of sentences.
//
// Every worker trains its mini-batch on its own copy of the embeddings; at the end of a clock
// the copies' changes are added (not averaged: a word's row is touched by few mini-batches, and
// averaging would divide every update by the worker count). BSP (default) sees the others'
// updates of a clock at its end, SSP(s) (--sync ssp) up to s clocks later: the serial twin sees
// every update at once. BSP results do not depend on --nodes vs mpiexec -n; SSP ones depend on
// timing (record and replay such runs).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "common/w2v_corpus.h"
#include "strads/strads.h"
#include "strads/sync_for.h"

using examples::Sentence;
using examples::Vec;

namespace examples {

// Skip-gram with negative sampling over sentence `index` in epoch `epoch`: for each kept word
// and each context word within a random window, one logistic step on (context, word) and on
// `negatives` sampled words. `in(w)` and `out(w)` give the rows (Vec&). Alpha 0 evaluates:
// no writes, returns the summed loss and the number of pairs (training returns loss 0).
template <class In, class Out>
std::pair<double, int64_t> TrainSentence(const W2vFlags& f, const Sampler& sampler,
                                         const Sentence& sentence, int64_t index, int epoch,
                                         float alpha, In&& in, Out&& out) {
  const int64_t base = index * kMaxSentence;
  int32_t kept[kMaxSentence];
  int64_t position[kMaxSentence];
  int n = 0;
  for (int i = 0; i < sentence.n; ++i)
    if (UnitDouble(Draw(f.seed, epoch, base + i, 1)) < sampler.keep[sentence.w[i]])
      kept[n] = sentence.w[i], position[n++] = base + i;
  double loss = 0;
  int64_t pairs = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t h = Draw(f.seed, epoch, position[i], 2);
    const int reach = f.window - static_cast<int>(h % static_cast<uint64_t>(f.window));
    for (int j = std::max(0, i - reach); j <= std::min(n - 1, i + reach); ++j) {
      if (j == i) continue;
      Vec& context = in(kept[j]);
      Vec gradient{};
      for (int d = 0; d <= f.negatives; ++d) {
        int32_t target = kept[i];
        if (d > 0) {
          const uint64_t r = SplitMix64(h + static_cast<uint64_t>(j * 64 + d));
          target = sampler.table[r % sampler.table.size()];
          if (target == kept[i]) continue;
        }
        Vec& row = out(target);
        const float score = Dot(context, row), label = d == 0 ? 1.0f : 0.0f;
        const float p = Sigmoid(score);
        if (alpha == 0) {  // evaluating: the loss; training skips the logarithm
          loss -= std::log(std::max(1e-7f, d == 0 ? p : 1.0f - p));
          continue;
        }
        const float g = (label - p) * alpha;
        for (int l = 0; l < kDim; ++l) gradient[l] += g * row[l];
        for (int l = 0; l < kDim; ++l) row[l] += g * context[l];
      }
      if (alpha != 0)
        for (int l = 0; l < kDim; ++l) context[l] += gradient[l];
      ++pairs;
    }
  }
  return {loss, pairs};
}

// The loss per pair of the embeddings on every 10th sentence, with the draws of epoch 0
// (fixed, so that epochs compare): a fold in sentence order, the same in both programs.
inline double EvalLoss(const W2vFlags& f, const Sampler& sampler, const W2vCorpus& c, const Vec* in,
                       const Vec* out) {
  double loss = 0;
  int64_t pairs = 0;
  auto row = [](const Vec* rows) {
    return [rows](int32_t w) -> Vec& { return const_cast<Vec&>(rows[w]); };
  };
  for (size_t s = 0; s < c.sentences.size(); s += 10) {
    const auto [l, n] = TrainSentence(f, sampler, c.sentences[s], static_cast<int64_t>(s), 0, 0.0f,
                                      row(in), row(out));  // alpha 0: reads only
    loss += l, pairs += n;
  }
  return loss / static_cast<double>(std::max<int64_t>(1, pairs));
}

}  // namespace examples

// SyncFor's aggregation of the embeddings: the workers' changes added, in their fixed order.
Vec AddDeltas(const Vec& before, std::span<const Vec> deltas) {
  Vec sum = before;
  for (const Vec& d : deltas)
    for (int l = 0; l < examples::kDim; ++l) sum[l] += d[l];
  return sum;
}

int main(int argc, char** argv) {
  examples::W2vFlags f;
  CLI::App app{"word2vec: skip-gram with negative sampling"};
  examples::AddW2vFlags(app, f);
  int64_t minibatch = 1000;
  std::string sync = "bsp";
  int staleness = 1;
  app.add_option("--minibatch", minibatch, "Sentences per mini-batch")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--sync", sync, "Synchronisation: bsp or ssp")
      ->check(CLI::IsMember({"bsp", "ssp"}, CLI::ignore_case));
  app.add_option("--staleness", staleness, "SSP staleness bound")->check(CLI::Range(0, 1000000));
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    examples::W2vCorpus corpus;
    try {
      corpus = examples::LoadW2vCorpus(f);
    } catch (const std::exception& e) {
      throw strads::CollectiveUsageError(e.what());  // every node read the same file
    }
    const int64_t words = static_cast<int64_t>(corpus.names.size());
    const int64_t n = static_cast<int64_t>(corpus.sentences.size());
    const examples::Sampler sampler = examples::MakeSampler(f, corpus);
    const auto& data =
        strads::MakeDVector<Sentence>(rt, n, [&](int64_t s) { return corpus.sentences[s]; });
    auto& in = strads::MakeDVector<Vec>(
        rt, words, [&](int64_t w) { return examples::InitialInput(f.seed, w); }, "in");
    auto& out = strads::MakeDVector<Vec>(
        rt, words, [](int64_t) { return Vec{}; }, "out");
    // Through a lambda, not AddDeltas' address: the engine's typed loop over the elements can
    // then inline the sum.
    const auto add = [](const Vec& before, std::span<const Vec> deltas) {
      return AddDeltas(before, deltas);
    };
    strads::RegisterAggregationFunc(in, add);
    strads::RegisterAggregationFunc(out, add);
    const strads::SyncOption option = sync == "ssp" ? strads::SSP(staleness) : strads::BSP();

    double seconds = 0;
    for (int epoch = 1; epoch <= f.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      strads::SyncFor(
          data, minibatch,
          [&, epoch](std::span<const Sentence> batch, int64_t first) {
            for (int64_t s = first; s < first + static_cast<int64_t>(batch.size()); ++s) {
              examples::TrainSentence(
                  f, sampler, batch[s - first], s, epoch, examples::LearningRate(f, epoch, s, n),
                  [&](int32_t w) -> Vec& { return in[w]; },
                  [&](int32_t w) -> Vec& { return out[w]; });
            }
          },
          option);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // Every node holds the whole model after SyncFor: read it directly.
      const Vec* in_rows = static_cast<const strads::dvector<Vec>&>(in).data();
      const Vec* out_rows = static_cast<const strads::dvector<Vec>&>(out).data();
      if (rt.leader())
        std::printf("epoch %d loss %.6f\n", epoch,
                    examples::EvalLoss(f, sampler, corpus, in_rows, out_rows));
    }

    if (f.timing && rt.leader())
      std::printf("time per epoch: %.3f ms\n", 1e3 * seconds / std::max(1, f.epochs));
    if (rt.leader())
      std::printf("%s\n", examples::NeighbourLine(
                              corpus, static_cast<const strads::dvector<Vec>&>(in).data())
                              .c_str());
    const uint64_t checksum = strads::Checksum(rt, {&in, &out});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
