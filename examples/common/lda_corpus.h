// Corpora and the sampling kernel of the LDA examples (lda_serial.cc, lda.cc): a seeded
// synthetic corpus any process can generate token by token, a UCI bag-of-words loader
// (docword.txt), the collapsed Gibbs step and the log-likelihood terms.
#pragma once

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/memory.h"
#include "common/number_flags.h"
#include "common/quote.h"
#include "common/sgd_kernel.h"
#include "strads/delta.h"
#include "strads/flag_checks.h"
#include "strads/fnv1a.h"

namespace examples {

inline constexpr int kMaxTopics = 64;  // capacity of a count row

// One token: a word occurrence in a document (0-based ids).
struct Token {
  int32_t doc;
  int32_t word;
};

// Topic counts of one document or one word.
struct TopicRow {
  int32_t n[kMaxTopics];
};
static_assert(std::is_trivially_copyable_v<TopicRow>);

struct LdaFlags {
  int64_t docs = 10000;
  int64_t words = 10000;
  int doc_length = 100;  // tokens per synthetic document
  int topics = 20;
  double alpha = 0.1, beta = 0.01;
  int epochs = 5;
  uint64_t seed = 11;
  std::string data_path;  // UCI docword.txt; empty: the synthetic corpus
  bool timing = false;
};

inline void AddLdaFlags(CLI::App& app, LdaFlags& f) {
  app.add_option("--docs", f.docs, "Synthetic corpus: documents")->check(CLI::Range(1, 1 << 30));
  app.add_option("--words", f.words, "Synthetic corpus: vocabulary size")
      ->check(CLI::Range(2, 1 << 30));
  app.add_option("--doc-length", f.doc_length, "Synthetic corpus: tokens per document")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--topics", f.topics, "Topics K")->check(CLI::Range(2, kMaxTopics));
  app.add_option("--alpha", f.alpha, "Document-topic prior")->check(PositiveFinite());
  app.add_option("--beta", f.beta, "Topic-word prior")->check(PositiveFinite());
  app.add_option("--epochs", f.epochs, "Gibbs sweeps")->check(CLI::Range(0, 1000000));
  app.add_option("--data-seed", f.seed, "Seed of the synthetic corpus and of the sampler")
      ->check(strads::NonNegativeInteger<uint64_t>());
  app.add_option("--data", f.data_path, "UCI bag-of-words file (docword.txt)")->type_name("FILE");
  app.add_flag("--time", f.timing, "Print the mean time per epoch of the sweeps");
}

// Token t of the synthetic corpus: document t / doc_length mixes two of the `topics` hidden
// topics; a hidden topic's words are a band of the vocabulary, drawn with a Zipf-like skew.
inline Token SyntheticToken(const LdaFlags& f, int64_t t) {
  const int64_t doc = t / f.doc_length;
  const uint64_t d = SplitMix64(f.seed ^ (static_cast<uint64_t>(doc) * 0x9e3779b97f4a7c15ULL));
  const uint64_t h = SplitMix64(d ^ SplitMix64(static_cast<uint64_t>(t) + 1));
  const int hidden = f.topics;
  const int64_t topic = static_cast<int64_t>(((h & 3) != 0 ? d >> 8 : d >> 24) % hidden);
  const int64_t band = std::max<int64_t>(1, f.words / hidden);
  const double u = static_cast<double>((h >> 11) & ((1ULL << 40) - 1)) * 0x1.0p-40;
  const int64_t offset = std::min<int64_t>(band - 1, static_cast<int64_t>(u * u * u * band));
  return {static_cast<int32_t>(doc), static_cast<int32_t>((topic * band + offset) % f.words)};
}

// A corpus in memory: tokens ordered by document.
struct Corpus {
  int64_t docs = 0, words = 0;
  std::vector<Token> tokens;
};

inline Corpus SyntheticCorpus(const LdaFlags& f) {
  // Its tokens, and the program's topics z and count rows.
  const double tokens = static_cast<double>(f.docs) * f.doc_length;
  CheckFitsInMemory("the synthetic corpus (--docs " + std::to_string(f.docs) + " x --doc-length " +
                        std::to_string(f.doc_length) + " tokens, --words " +
                        std::to_string(f.words) + ")",
                    tokens * (sizeof(Token) + sizeof(int32_t)) +
                        static_cast<double>(f.docs + f.words) * sizeof(TopicRow));
  Corpus c;
  c.docs = f.docs;
  c.words = f.words;
  c.tokens.resize(static_cast<size_t>(f.docs * f.doc_length));
  for (size_t t = 0; t < c.tokens.size(); ++t)
    c.tokens[t] = SyntheticToken(f, static_cast<int64_t>(t));
  return c;
}

// The most tokens that fit in this machine's physical memory (unknown: no bound).
inline int64_t MaxTokensInMemory() {
  return PhysicalMemoryBytes() / static_cast<int64_t>(sizeof(Token));
}

// UCI bag-of-words (docword.txt): three header lines D, W, NNZ, then NNZ lines "doc word count"
// (1-based ids, documents in non-decreasing order). Throws std::runtime_error
// "path:line: what" on any defect, also before the corpus would exceed `max_tokens` (a 12-byte
// line can ask for 2^20 tokens: a few KB of file must not exhaust the machine's memory) and
// before D or W rows of topic counts would exceed the same number of bytes.
inline Corpus LoadDocword(const std::string& path, int64_t max_tokens = MaxTokensInMemory()) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  Corpus c;
  std::string line;
  int64_t line_number = 0, headers = 0, header[3] = {0, 0, 0}, entries = 0, last_doc = 0;
  const char* names[3] = {"document count D", "vocabulary size W", "entry count NNZ"};
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(path + ":" + std::to_string(line_number) + ": " + what);
  };
  auto parse = [&](std::string_view text, const char* what, int64_t lo, int64_t hi) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
      fail(std::string(what) + " " + Quote(text) + " is not an integer");
    if (v < lo || v > hi)
      fail(std::string(what) + " " + std::to_string(v) + " is outside [" + std::to_string(lo) +
           ", " + std::to_string(hi) + "]");
    return v;
  };
  while (std::getline(in, line)) {
    ++line_number;
    std::vector<std::string_view> fields;
    for (size_t pos = 0; pos < line.size();) {
      while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r'))
        ++pos;
      const size_t start = pos;
      while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t' && line[pos] != '\r') ++pos;
      if (pos > start) fields.push_back(std::string_view(line).substr(start, pos - start));
    }
    if (fields.empty()) continue;
    if (headers < 3) {
      if (fields.size() != 1) fail("expected one number, the " + std::string(names[headers]));
      header[headers] = parse(fields[0], names[headers], 1, int64_t{1} << 30);
      // D and W each size a row of topic counts per document or word (InitialCounts), in the
      // bound's bytes: refused here, naming the line, before any allocation.
      const int64_t max_rows =
          max_tokens / static_cast<int64_t>(sizeof(TopicRow)) * static_cast<int64_t>(sizeof(Token));
      if (headers < 2 && header[headers] > max_rows)
        fail(std::string(names[headers]) + " " + std::to_string(header[headers]) +
             " needs that many rows of " + std::to_string(sizeof(TopicRow)) +
             "-byte topic counts, more than " + std::to_string(max_rows) +
             ", over this machine's memory");
      ++headers;
      continue;
    }
    if (fields.size() != 3)
      fail("expected 'doc word count', found " + std::to_string(fields.size()) + " fields");
    const int64_t doc = parse(fields[0], "document id", 1, header[0]);
    const int64_t word = parse(fields[1], "word id", 1, header[1]);
    const int64_t count = parse(fields[2], "count", 1, 1 << 20);
    if (doc < last_doc)
      fail("document " + std::to_string(doc) + " after document " + std::to_string(last_doc) +
           " (documents must be in order)");
    if (++entries > header[2]) fail("more entries than NNZ = " + std::to_string(header[2]));
    last_doc = doc;
    if (count > max_tokens - static_cast<int64_t>(c.tokens.size()))
      fail("count " + std::to_string(count) + " makes the corpus more than " +
           std::to_string(max_tokens) + " tokens, over this machine's memory");
    c.tokens.insert(c.tokens.end(), static_cast<size_t>(count),
                    Token{static_cast<int32_t>(doc - 1), static_cast<int32_t>(word - 1)});
  }
  if (in.bad()) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
  if (headers < 3) {
    ++line_number;
    fail("missing header line (" + std::string(names[headers]) + ")");
  }
  if (entries != header[2])
    throw std::runtime_error(path + ":" + std::to_string(line_number) + ": " +
                             std::to_string(entries) +
                             " entries, the header says NNZ = " + std::to_string(header[2]));
  c.docs = header[0];
  c.words = header[1];
  return c;
}

inline Corpus LoadCorpus(const LdaFlags& f) {
  return f.data_path.empty() ? SyntheticCorpus(f) : LoadDocword(f.data_path);
}

// The initial topic of token t.
inline int InitialTopic(const LdaFlags& f, int64_t t) {
  return static_cast<int>(SplitMix64(f.seed ^ 0x5eedULL ^ (static_cast<uint64_t>(t) << 20)) %
                          static_cast<uint64_t>(f.topics));
}

// The counts of the initial assignment: per document, per word and per topic.
struct Counts {
  std::vector<TopicRow> nd, nw;
  std::vector<int64_t> nk;
};

inline Counts InitialCounts(const LdaFlags& f, const Corpus& c) {
  Counts counts{std::vector<TopicRow>(static_cast<size_t>(c.docs)),
                std::vector<TopicRow>(static_cast<size_t>(c.words)),
                std::vector<int64_t>(static_cast<size_t>(f.topics))};
  for (size_t t = 0; t < c.tokens.size(); ++t) {
    const int z = InitialTopic(f, static_cast<int64_t>(t));
    ++counts.nd[c.tokens[t].doc].n[z], ++counts.nw[c.tokens[t].word].n[z], ++counts.nk[z];
  }
  return counts;
}

inline std::vector<int32_t> InitialTopics(const LdaFlags& f, int64_t n) {
  std::vector<int32_t> z(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) z[t] = InitialTopic(f, t);
  return z;
}

// A uniform draw in [0, 1) for token t in epoch e.
inline double Uniform(const LdaFlags& f, int epoch, int64_t t) {
  const uint64_t h = SplitMix64(SplitMix64(f.seed + static_cast<uint64_t>(epoch)) ^
                                static_cast<uint64_t>(t) * 0xd1b54a32d192ed03ULL);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// ln Gamma(x) without the global `signgam` that std::lgamma writes: in-process nodes (--nodes)
// compute the log-likelihood on several threads at once, and a global written by all of them is
// a data race (TSan found it); lgamma_r returns the sign instead, with the same value.
inline double LogGamma(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

// log p(words | z) and log p(z) without the constant terms, split by row: the sum of
// RowLogGamma over word rows and document rows plus TotalsLogGamma is the joint
// log-likelihood up to a constant.
inline double RowLogGamma(const TopicRow& row, int topics, double prior) {
  double s = 0;
  for (int k = 0; k < topics; ++k) s += LogGamma(row.n[k] + prior) - LogGamma(prior);
  return s;
}

template <class Totals>
double TotalsLogGamma(const Totals& nk, int topics, int64_t vocabulary, double beta) {
  double s = 0;
  const double wbeta = static_cast<double>(vocabulary) * beta;
  for (int k = 0; k < topics; ++k) s += LogGamma(wbeta) - LogGamma(nk(k) + wbeta);
  return s;
}

// The checksum of the counts (the bytes of nd, nw and nk, in order), as strads::Checksum
// computes it for the same tables.
inline std::string CountsChecksum(const Counts& c) {
  strads::Fnv1a checksum;
  checksum.Update(c.nd.data(), c.nd.size() * sizeof(TopicRow));
  checksum.Update(c.nw.data(), c.nw.size() * sizeof(TopicRow));
  checksum.Update(c.nk.data(), c.nk.size() * sizeof(int64_t));
  return checksum.hex();
}

}  // namespace examples

// The lock engine (--async-engine locks) merges the changes several nodes made to one count
// row at its owner: counts add (the default would average them).
template <>
struct strads::Delta<examples::TopicRow> {
  static void Merge(examples::TopicRow& x, const examples::TopicRow& start,
                    std::span<const examples::TopicRow> afters) {
    for (int k = 0; k < examples::kMaxTopics; ++k) {
      int32_t sum = start.n[k];
      for (const examples::TopicRow& a : afters) sum += a.n[k] - start.n[k];
      x.n[k] = sum;
    }
  }
};
