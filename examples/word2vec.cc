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
    strads::RegisterAggregationFunc(in, AddDeltas);
    strads::RegisterAggregationFunc(out, AddDeltas);
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
