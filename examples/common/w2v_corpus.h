// Corpora and the training kernel of the word2vec examples (word2vec_serial.cc, word2vec.cc):
// a seeded synthetic Zipf corpus, a text loader (whitespace-separated tokens, one sentence a
// line), the vocabulary with a min-count, subsampling of frequent words, the unigram^0.75
// table for negatives and one skip-gram step with negative sampling (SGNS), as in Google's
// word2vec. Every random choice (subsampling, window, negatives) is a hash of (seed, epoch,
// token position): the same in both programs and on any node (docs/porting.md).
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/memory.h"
#include "common/number_flags.h"
#include "common/sgd_kernel.h"
#include "strads/flag_checks.h"

namespace examples {

inline constexpr int kDim = kRank;       // embedding dimension (Dot from sgd_kernel.h)
inline constexpr int kMaxSentence = 32;  // longer lines are cut, as word2vec cuts at 1000
using Vec = Row;

// A sentence: up to kMaxSentence word ids. Trivially copyable, so that it can live in a dvector.
struct Sentence {
  int32_t n;
  int32_t w[kMaxSentence];
};

struct W2vFlags {
  int64_t tokens = 2000000;  // synthetic corpus: tokens
  int64_t words = 30000;     // synthetic corpus: vocabulary size
  int clusters = 50;         // synthetic corpus: hidden word clusters
  int64_t min_count = 5;
  double sample = 1e-4;  // subsampling threshold
  int window = 2, negatives = 5, epochs = 3;
  float alpha = 0.025f;
  uint64_t seed = 5;
  std::string data_path;  // text corpus; empty: the synthetic corpus
  bool timing = false;
};

inline void AddW2vFlags(CLI::App& app, W2vFlags& f) {
  app.add_option("--tokens", f.tokens, "Synthetic corpus: tokens")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  app.add_option("--words", f.words, "Synthetic corpus: vocabulary size")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 30));
  app.add_option("--clusters", f.clusters, "Synthetic corpus: hidden word clusters")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--min-count", f.min_count, "Drop words seen fewer times")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--sample", f.sample, "Subsampling threshold (0: off)")->check(FiniteIn(0.0, 1.0));
  app.add_option("--window", f.window, "Maximum context distance")->check(CLI::Range(1, 10));
  app.add_option("--negatives", f.negatives, "Negative samples per pair")->check(CLI::Range(1, 20));
  app.add_option("--epochs", f.epochs, "Passes over the corpus")->check(CLI::Range(0, 100000));
  app.add_option("--alpha", f.alpha, "Starting learning rate")->check(PositiveFinite());
  app.add_option("--data-seed", f.seed, "Seed of the synthetic corpus and of the sampler")
      ->check(strads::NonNegativeInteger<uint64_t>());
  app.add_option("--data", f.data_path, "Text corpus: whitespace-separated tokens")
      ->type_name("FILE");
  app.add_flag("--time", f.timing, "Print the mean time per epoch of the training loop");
}

// A uniform draw in [0, 1) from a hash.
inline double UnitDouble(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// The hash of random choice `what` at token position `t` in epoch `epoch` (0: evaluation).
inline uint64_t Draw(uint64_t seed, int epoch, int64_t t, uint64_t what) {
  return SplitMix64(SplitMix64(seed ^ (static_cast<uint64_t>(epoch) << 48) ^ what) +
                    static_cast<uint64_t>(t) * 0x9e3779b97f4a7c15ULL);
}

// The corpus: sentences of word ids (ranked by count, 0 the most frequent) and the vocabulary.
struct W2vCorpus {
  std::vector<std::string> names;
  std::vector<int64_t> counts;
  std::vector<Sentence> sentences;
  int64_t tokens = 0;
};

// Raw ids to vocabulary ids: words seen at least min_count times, by count (ties by name).
// Sentences are cut at kMaxSentence words; dropped words leave no gap.
inline W2vCorpus BuildCorpus(const std::vector<std::string>& raw_names,
                             const std::vector<std::vector<int32_t>>& lines, int64_t min_count) {
  std::vector<int64_t> raw_counts(raw_names.size());
  for (const auto& line : lines)
    for (int32_t w : line) ++raw_counts[w];
  std::vector<int32_t> order;
  for (size_t w = 0; w < raw_names.size(); ++w)
    if (raw_counts[w] >= min_count) order.push_back(static_cast<int32_t>(w));
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return raw_counts[a] != raw_counts[b] ? raw_counts[a] > raw_counts[b]
                                          : raw_names[a] < raw_names[b];
  });
  std::vector<int32_t> id(raw_names.size(), -1);
  W2vCorpus c;
  for (size_t i = 0; i < order.size(); ++i) {
    id[order[i]] = static_cast<int32_t>(i);
    c.names.push_back(raw_names[order[i]]);
    c.counts.push_back(raw_counts[order[i]]);
  }
  for (const auto& line : lines) {
    Sentence s{};
    for (int32_t w : line) {
      if (id[w] < 0) continue;
      s.w[s.n++] = id[w];
      ++c.tokens;
      if (s.n == kMaxSentence) c.sentences.push_back(s), s = Sentence{};
    }
    if (s.n > 0) c.sentences.push_back(s);
  }
  return c;
}

// The synthetic corpus: word w has Zipf frequency ~ 1 / (w + 1) and belongs to hidden cluster
// w % clusters. A sentence of 20 tokens has a cluster; each token is, with probability 0.7, a
// Zipf draw among that cluster's words, else a Zipf draw among all words. Words of one cluster
// share contexts, so their embeddings should end up near each other.
inline W2vCorpus SyntheticCorpus(const W2vFlags& f) {
  // The sentences' word ids (20 to a vector of capacity 32: 8 bytes a token or more), and the
  // corpus built from them (4). Measured: 16.7 bytes a token at the peak (--epochs 0). Per word
  // of the vocabulary, its Zipf CDF entry and its name.
  CheckFitsInMemory("the synthetic corpus (--tokens " + std::to_string(f.tokens) + ", --words " +
                        std::to_string(f.words) + ")",
                    static_cast<double>(f.tokens) * 3 * sizeof(int32_t) +
                        static_cast<double>(f.words) * (sizeof(double) + sizeof(std::string)));
  const int64_t V = f.words, C = std::min<int64_t>(f.clusters, V);
  auto cdf = [](int64_t n) {
    std::vector<double> c(static_cast<size_t>(n));
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) c[i] = (sum += 1.0 / static_cast<double>(i + 1));
    for (double& x : c) x /= sum;
    return c;
  };
  const std::vector<double> all = cdf(V), within = cdf((V + C - 1) / C);
  auto pick = [](const std::vector<double>& c, double u) {
    return static_cast<int64_t>(std::upper_bound(c.begin(), c.end() - 1, u) - c.begin());
  };
  std::vector<std::string> names(static_cast<size_t>(V));
  for (int64_t w = 0; w < V; ++w) names[w] = "w" + std::to_string(w);
  constexpr int kLength = 20;
  std::vector<std::vector<int32_t>> lines(static_cast<size_t>((f.tokens + kLength - 1) / kLength));
  for (int64_t t = 0; t < f.tokens; ++t) {
    const int64_t line = t / kLength;
    const int64_t cluster =
        static_cast<int64_t>(SplitMix64(f.seed ^ static_cast<uint64_t>(line)) % C);
    const uint64_t h = Draw(f.seed, 0, t, 0x5e17);
    int64_t w = pick(all, UnitDouble(SplitMix64(h)));
    if (UnitDouble(h) < 0.7) {
      const int64_t in_cluster = (V - cluster + C - 1) / C;  // words cluster, cluster + C, ...
      w = cluster + C * std::min(in_cluster - 1, pick(within, UnitDouble(SplitMix64(h + 1))));
    }
    lines[line].push_back(static_cast<int32_t>(w));
  }
  return BuildCorpus(names, lines, f.min_count);
}

// A text corpus: whitespace-separated tokens, a line a sentence. Throws std::runtime_error
// "path:line: what" on a defect (a control character or an empty vocabulary).
inline W2vCorpus LoadText(const std::string& path, int64_t min_count) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  std::unordered_map<std::string, int32_t> ids;
  std::vector<std::string> names;
  std::vector<std::vector<int32_t>> lines;
  std::string line;
  int64_t line_number = 0;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(path + ":" + std::to_string(line_number) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++line_number;
    std::vector<int32_t> words;
    for (size_t pos = 0; pos < line.size();) {
      auto space = [&](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; };
      while (pos < line.size() && space(line[pos])) ++pos;
      const size_t start = pos;
      while (pos < line.size() && !space(line[pos])) {
        const auto ch = static_cast<unsigned char>(line[pos]);
        if (ch < 0x20 || ch == 0x7f)
          fail("control character " + std::to_string(ch) + " in column " + std::to_string(pos + 1) +
               " (expected text)");
        ++pos;
      }
      if (pos == start) continue;
      const auto [it, added] =
          ids.emplace(line.substr(start, pos - start), static_cast<int32_t>(names.size()));
      if (added) names.push_back(it->first);
      words.push_back(it->second);
    }
    if (!words.empty()) lines.push_back(std::move(words));
  }
  if (in.bad()) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
  W2vCorpus c = BuildCorpus(names, lines, min_count);
  if (c.names.size() < 2)
    fail("fewer than 2 words occur at least " + std::to_string(min_count) + " times (--min-count)");
  return c;
}

inline W2vCorpus LoadW2vCorpus(const W2vFlags& f) {
  return f.data_path.empty() ? SyntheticCorpus(f) : LoadText(f.data_path, f.min_count);
}

// What training needs besides the embeddings: the probability of keeping each word
// (word2vec's subsampling) and the unigram^0.75 table negatives are drawn from.
struct Sampler {
  std::vector<float> keep;
  std::vector<int32_t> table;
};

inline Sampler MakeSampler(const W2vFlags& f, const W2vCorpus& c) {
  Sampler s;
  const double threshold = f.sample * static_cast<double>(c.tokens);
  for (int64_t n : c.counts)
    s.keep.push_back(f.sample <= 0 ? 1.0f
                                   : static_cast<float>((std::sqrt(n / threshold) + 1) * threshold /
                                                        static_cast<double>(n)));
  double total = 0;
  for (int64_t n : c.counts) total += std::pow(static_cast<double>(n), 0.75);
  s.table.resize(1 << 20);
  size_t w = 0;
  double reach = std::pow(static_cast<double>(c.counts[0]), 0.75) / total;
  for (size_t i = 0; i < s.table.size(); ++i) {
    s.table[i] = static_cast<int32_t>(w);
    if (static_cast<double>(i + 1) / static_cast<double>(s.table.size()) > reach &&
        w + 1 < c.counts.size())
      reach += std::pow(static_cast<double>(c.counts[++w]), 0.75) / total;
  }
  return s;
}

// Initial embeddings: input rows uniform in [-0.5, 0.5) / kDim, output rows zero (word2vec).
inline Vec InitialInput(uint64_t seed, int64_t w) {
  Vec v;
  for (int l = 0; l < kDim; ++l)
    v[l] = (UnitFloat(SplitMix64(seed ^ (static_cast<uint64_t>(w) * kDim + l))) - 0.5f) / kDim;
  return v;
}

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-std::clamp(x, -6.0f, 6.0f))); }

// The learning rate of sentence s of `sentences` in epoch `epoch` (1-based): word2vec's linear
// decay over the whole run.
inline float LearningRate(const W2vFlags& f, int epoch, int64_t s, int64_t sentences) {
  const double progress =
      (epoch - 1 + static_cast<double>(s) / static_cast<double>(sentences)) / std::max(1, f.epochs);
  return f.alpha * static_cast<float>(std::max(1e-4, 1.0 - progress));
}

// The nearest neighbours (cosine) of word w among all words, best first.
inline std::vector<int32_t> Neighbours(const Vec* rows, int64_t words, int32_t w, int k) {
  auto norm = [](const Vec& v) { return std::sqrt(std::max(1e-30f, Dot(v, v))); };
  std::vector<std::pair<float, int32_t>> scored;
  for (int64_t v = 0; v < words; ++v)
    if (v != w) scored.push_back({-Dot(rows[w], rows[v]) / norm(rows[v]), static_cast<int32_t>(v)});
  k = std::min<int>(k, static_cast<int>(scored.size()));
  std::partial_sort(scored.begin(), scored.begin() + k, scored.end());
  std::vector<int32_t> best;
  for (int i = 0; i < k; ++i) best.push_back(scored[i].second);
  return best;
}

// The nearest-neighbour line: the 5 neighbours of the words ranked 10, 100 and 1000 (those
// that exist).
inline std::string NeighbourLine(const W2vCorpus& c, const Vec* rows) {
  std::string line = "neighbours";
  const int64_t words = static_cast<int64_t>(c.names.size());
  for (int64_t w : {10, 100, 1000}) {
    if (w >= words) break;
    line += " " + c.names[w] + ":";
    for (int32_t v : Neighbours(rows, words, static_cast<int32_t>(w), 5)) line += " " + c.names[v];
  }
  return line;
}

}  // namespace examples
