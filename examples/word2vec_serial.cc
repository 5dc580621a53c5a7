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
