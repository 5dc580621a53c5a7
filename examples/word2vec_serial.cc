// word2vec, serial: skip-gram with negative sampling, each epoch one pass over the sentences.
//
//   for epoch in 1..E:  for each sentence s:
//     for each (word, context) pair in a random window:  one logistic step on the pair and on
//     `negatives` words drawn from unigram^0.75 (in: the context's row, out: the words' rows)
//
// word2vec.cc is this program on strads (the diff is the port); per epoch it prints the loss
// per pair, at the end the neighbours of a few words and a checksum of the embeddings.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/w2v_corpus.h"
#include "strads/fnv1a.h"

using examples::Sentence;
using examples::Vec;

int main(int argc, char** argv) {
  examples::W2vFlags f;
  CLI::App app{"word2vec: skip-gram with negative sampling"};
  examples::AddW2vFlags(app, f);
  CLI11_PARSE(app, argc, argv);
  {
    examples::W2vCorpus corpus;
    try {
      corpus = examples::LoadW2vCorpus(f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "word2vec_serial: %s\n", e.what());
      return 2;
    }
    const int64_t words = static_cast<int64_t>(corpus.names.size());
    const int64_t n = static_cast<int64_t>(corpus.sentences.size());
    const examples::Sampler sampler = examples::MakeSampler(f, corpus);
    const std::vector<Sentence>& data = corpus.sentences;
    std::vector<Vec> in(static_cast<size_t>(words)), out(static_cast<size_t>(words));
    for (int64_t w = 0; w < words; ++w) in[w] = examples::InitialInput(f.seed, w), out[w] = Vec{};

    double seconds = 0;
    for (int epoch = 1; epoch <= f.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      for (int64_t s = 0; s < n; ++s) {
        examples::TrainSentence(
            f, sampler, data[s], s, epoch, examples::LearningRate(f, epoch, s, n),
            [&](int32_t w) -> Vec& { return in[w]; }, [&](int32_t w) -> Vec& { return out[w]; });
      }
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double loss = examples::EvalLoss(f, sampler, corpus, in.data(), out.data());
      std::printf("epoch %d loss %.6f\n", epoch, loss);
    }

    if (f.timing) std::printf("time per epoch: %.3f ms\n", 1e3 * seconds / std::max(1, f.epochs));
    std::printf("%s\n", examples::NeighbourLine(corpus, in.data()).c_str());
    strads::Fnv1a checksum;
    checksum.Update(in.data(), in.size() * sizeof(Vec));
    checksum.Update(out.data(), out.size() * sizeof(Vec));
    std::printf("checksum: %s\n", checksum.hex().c_str());
  }
  return 0;
}
