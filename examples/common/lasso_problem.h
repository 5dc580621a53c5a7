// The Lasso examples (lasso_serial.cc, lasso.cc): the problem (a seeded sparse synthetic one
// with a known support, or a LIBSVM regression file) and the thesis' dynamic scheduler (seed
// 001, section 4), which both programs run on the driver: lasso_serial in one thread, lasso
// with its pieces on the node's threads (strads::ParallelFor), with the same picks. The
// coordinate update, the training routine, is in each program.
//
//   minimize 1/2 ||y - X beta||^2 + lambda ||beta||_1,   r = y - X beta kept up to date.
//
// A round picks coordinates: a seeded sample weighted by priority (the square of each
// coordinate's last change, plus a floor; coordinates never updated come first), dropping any
// whose column is too correlated with one already picked, so that coordinates updated together
// barely interact. The programs then update the picked set, which shares the residual r where
// columns share rows.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/libsvm.h"
#include "common/memory.h"
#include "common/number_flags.h"
#include "common/sgd_kernel.h"
#include "strads/flag_checks.h"

namespace examples {

struct LassoFlags {
  int64_t samples = 100000;   // rows n of the synthetic problem
  int64_t features = 200000;  // columns p (and the model's size for --data)
  int column_nnz = 48;        // nonzeros per synthetic column
  int64_t support = 2000;     // nonzeros of the synthetic problem's true beta
  double noise = 0.01;
  double lambda_ratio = 0.05;  // lambda = ratio x max_j |x_j' y|
  int batch = 2000;            // coordinates picked per round
  double correlation = 0.1;    // a candidate more correlated than this with a picked one drops
  int epochs = 5;              // an epoch is features / batch rounds
  uint64_t seed = 7;
  std::string data_path;  // LIBSVM regression file; empty: the synthetic problem
  bool timing = false;
};

inline void AddLassoFlags(CLI::App& app, LassoFlags& f) {
  app.add_option("--samples", f.samples, "Synthetic problem: rows")->check(CLI::Range(1, 1 << 30));
  app.add_option("--features", f.features, "Columns (the model's size, also for --data)")
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--column-nnz", f.column_nnz, "Synthetic problem: nonzeros per column")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--support", f.support, "Synthetic problem: nonzeros of the true beta")
      ->check(strads::NonNegativeInteger<int64_t>());
  app.add_option("--noise", f.noise, "Synthetic problem: noise of y")->check(NonNegativeFinite());
  app.add_option("--lambda-ratio", f.lambda_ratio, "lambda as a fraction of max |x_j' y|")
      ->check(PositiveFinite());
  app.add_option("--batch", f.batch, "Coordinates picked per round")->check(CLI::Range(1, 1 << 24));
  app.add_option("--correlation", f.correlation,
                 "Largest correlation between the columns of coordinates picked together")
      ->check(FiniteIn(0.0, 1.0));
  app.add_option("--epochs", f.epochs, "Epochs (features / batch rounds each)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--data-seed", f.seed, "Seed of the synthetic problem and of the scheduler")
      ->check(strads::NonNegativeInteger<uint64_t>());
  app.add_option("--data", f.data_path, "LIBSVM regression file (target idx:val ...)")
      ->type_name("FILE");
  app.add_flag("--time", f.timing, "Print the mean time per epoch");
}

// X by columns (CSC), the targets y, and the true support when known.
struct LassoProblem {
  int64_t rows = 0, columns = 0;
  std::vector<int64_t> begin;  // column j: entries begin[j] .. begin[j + 1]
  std::vector<int32_t> row;
  std::vector<float> value;
  std::vector<double> y;
  std::vector<double> squared_norm;  // per column
  std::vector<char> in_support;      // per column; all zero for --data
  int64_t support = 0;
  double lambda = 0;
};

// A coefficient and whether the true beta has it (for the support line); no padding, so that
// checksums of its bytes are defined.
struct Coefficient {
  double value;
  int64_t in_support;
};

inline double UnitDouble(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

inline void FinishProblem(const LassoFlags& f, LassoProblem& p) {
  p.squared_norm.assign(static_cast<size_t>(p.columns), 0);
  double largest = 0;
  for (int64_t j = 0; j < p.columns; ++j) {
    double dot = 0, sq = 0;
    for (int64_t e = p.begin[j]; e < p.begin[j + 1]; ++e) {
      dot += p.value[e] * p.y[p.row[e]];
      sq += static_cast<double>(p.value[e]) * p.value[e];
    }
    p.squared_norm[j] = sq;
    largest = std::max(largest, std::abs(dot));
  }
  p.lambda = f.lambda_ratio * largest;
}

// Column j's rows lie in a band of the rows around j * n / p (a locality genomic and text
// features also have: neighbouring features share samples); values have unit column norm.
// The true beta has `support` nonzeros of magnitude 1 to 2 at seeded columns; y = X beta* + noise.
inline LassoProblem SyntheticLasso(const LassoFlags& f) {
  // The matrix's entries (a row and a value each) and column starts; per row, y, the residual
  // and the scheduler's list head and stamp (LassoScheduler's head_ and stamp_).
  CheckFitsInMemory("the synthetic problem (--features " + std::to_string(f.features) +
                        " x --column-nnz " + std::to_string(f.column_nnz) + " entries, --samples " +
                        std::to_string(f.samples) + ")",
                    static_cast<double>(f.features) *
                            (static_cast<double>(f.column_nnz) * (sizeof(int32_t) + sizeof(float)) +
                             sizeof(int64_t)) +
                        static_cast<double>(f.samples) *
                            (2 * sizeof(double) + sizeof(int32_t) + sizeof(uint64_t)));
  LassoProblem p;
  p.rows = f.samples;
  p.columns = f.features;
  const int64_t band = std::max<int64_t>(f.column_nnz * 4, f.samples / 64);
  p.begin.assign(1, 0);
  std::vector<int32_t> rows;
  for (int64_t j = 0; j < p.columns; ++j) {
    const uint64_t h = SplitMix64(f.seed ^ (static_cast<uint64_t>(j) * 0x9e3779b97f4a7c15ULL));
    const int64_t centre = j * p.rows / p.columns;
    rows.clear();
    for (int k = 0; k < f.column_nnz; ++k) {
      const uint64_t u = SplitMix64(h + static_cast<uint64_t>(k));
      const int64_t offset = static_cast<int64_t>(u % static_cast<uint64_t>(band)) - band / 2;
      rows.push_back(static_cast<int32_t>(((centre + offset) % p.rows + p.rows) % p.rows));
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    const float scale = 1.0f / std::sqrt(static_cast<float>(rows.size()));
    for (int32_t i : rows) {
      p.row.push_back(i);
      p.value.push_back(UnitDouble(SplitMix64(h ^ static_cast<uint64_t>(i))) < 0.5 ? -scale
                                                                                   : scale);
    }
    p.begin.push_back(static_cast<int64_t>(p.row.size()));
  }
  p.in_support.assign(static_cast<size_t>(p.columns), 0);
  p.y.assign(static_cast<size_t>(p.rows), 0);
  const int64_t support = std::min(f.support, p.columns);
  for (int64_t s = 0; s < support; ++s) {
    const int64_t j = s * p.columns / std::max<int64_t>(support, 1) +
                      static_cast<int64_t>(SplitMix64(f.seed + 77 * static_cast<uint64_t>(s)) %
                                           static_cast<uint64_t>(p.columns / support));
    const uint64_t h = SplitMix64(f.seed ^ (0xb5ad4eceda1ce2a9ULL + static_cast<uint64_t>(j)));
    const double beta = (1 + UnitDouble(h)) * ((h & 1) ? 1 : -1);
    p.in_support[j] = 1;
    for (int64_t e = p.begin[j]; e < p.begin[j + 1]; ++e) p.y[p.row[e]] += beta * p.value[e];
  }
  p.support = support;
  for (int64_t i = 0; i < p.rows; ++i)
    p.y[i] += f.noise * (UnitDouble(SplitMix64(f.seed * 31 + static_cast<uint64_t>(i))) - 0.5);
  FinishProblem(f, p);
  return p;
}

// A LIBSVM regression file: one sample (row) per line, "target idx:val ...", feature ids in
// [1, --features]. Throws std::runtime_error "path:line: what" on any defect, also before the
// matrix would exceed `max_entries`.
inline LassoProblem LoadLibsvmLasso(const LassoFlags& f, int64_t max_entries = int64_t{1} << 28) {
  std::ifstream in(f.data_path);
  if (!in) throw std::runtime_error(f.data_path + ": cannot open: " + std::strerror(errno));
  std::vector<int64_t> counts(static_cast<size_t>(f.features) + 1, 0);
  std::vector<RegressionSample> samples;
  std::string line;
  int64_t line_number = 0, entries = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      samples.push_back(ParseLibsvmRegression(line, f.features));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(f.data_path + ":" + std::to_string(line_number) + ": " + e.what());
    }
    entries += static_cast<int64_t>(samples.back().features.size());
    if (entries > max_entries)
      throw std::runtime_error(f.data_path + ":" + std::to_string(line_number) + ": more than " +
                               std::to_string(max_entries) + " nonzeros");
    for (const auto& [id, v] : samples.back().features) ++counts[static_cast<size_t>(id) + 1];
  }
  if (in.bad()) throw std::runtime_error(f.data_path + ": read error: " + std::strerror(errno));
  if (samples.empty()) throw std::runtime_error(f.data_path + ":1: no samples");
  LassoProblem p;
  p.rows = static_cast<int64_t>(samples.size());
  p.columns = f.features;
  p.begin.assign(counts.size(), 0);
  for (size_t j = 1; j < counts.size(); ++j) p.begin[j] = p.begin[j - 1] + counts[j];
  p.row.resize(static_cast<size_t>(entries));
  p.value.resize(static_cast<size_t>(entries));
  std::vector<int64_t> next(p.begin.begin(), p.begin.end() - 1);
  for (int64_t i = 0; i < p.rows; ++i) {
    p.y.push_back(samples[i].target);
    for (const auto& [id, v] : samples[i].features) {
      p.row[next[id]] = static_cast<int32_t>(i);
      p.value[next[id]++] = v;
    }
  }
  p.in_support.assign(static_cast<size_t>(p.columns), 0);
  FinishProblem(f, p);
  return p;
}

inline LassoProblem LoadLassoProblem(const LassoFlags& f) {
  return f.data_path.empty() ? SyntheticLasso(f) : LoadLibsvmLasso(f);
}

// Runs piece(0), ..., piece(count - 1), in any order and on any threads: the scheduler's pieces
// write disjoint data and read none that another piece writes. lasso_serial runs them in a loop,
// lasso with strads::ParallelFor; both get the same picks, bit for bit.
using PieceRunner = std::function<void(int64_t count, const std::function<void(int64_t)>& piece)>;

inline void RunPiecesInOrder(int64_t count, const std::function<void(int64_t)>& piece) {
  for (int64_t i = 0; i < count; ++i) piece(i);
}

// The dynamic scheduler (docs/lasso.md): priorities in a sum tree, and the correlation filter.
// A round (1) draws 2 x --batch coordinates from the tree as it stands, in parallel pieces of
// kDrawPiece draws; (2) keeps the first --batch distinct ones in draw order, the candidates
// (skipping repeats is drawing without replacement, as a tree zeroed after each draw would); (3)
// computes the candidates' pairwise dot products in parallel over kRowRanges fixed ranges of rows,
// each range its own partial sums; (4) accepts the candidates in order, serially, dropping one
// whose summed dot product (the ranges' partials in range order) with an accepted one exceeds the
// bound. Nothing depends on how the pieces are spread over threads, and the work per round follows
// the candidates, never the number of columns: per-row lists are stamped with the round.
// The greedy pass of (4) is serial, so whatever does not depend on earlier acceptances runs in
// pieces of kAcceptPiece candidates before it: summing each pair's partials and testing it against
// the bound; the serial pass then only looks up, per candidate, its too-correlated earlier ones.
// UpdatePicked sets the picked leaves and rebuilds the tree above them in pieces of subtrees.
class LassoScheduler {
 public:
  static constexpr int64_t kDrawPiece = 256;
  static constexpr int64_t kRowRanges = 16;
  static constexpr int64_t kAcceptPiece = 128;  // candidates a piece tests against the bound
  static constexpr int64_t kSubtrees = 64;      // pieces of UpdatePicked's tree rebuild

  LassoScheduler(const LassoProblem& p, const LassoFlags& f, PieceRunner run = RunPiecesInOrder)
      : p_(p),
        f_(f),
        run_(std::move(run)),
        leaves_(1),
        ranges_(std::min<int64_t>(kRowRanges, p.rows)),
        known_(static_cast<size_t>(p.columns), 0),
        drawn_(static_cast<size_t>(p.columns), 0),
        head_(static_cast<size_t>(p.rows), -1),
        stamp_(static_cast<size_t>(p.rows), 0),
        of_range_(static_cast<size_t>(ranges_)) {
    while (leaves_ < p.columns) leaves_ *= 2;
    tree_.assign(2 * static_cast<size_t>(leaves_), 0);
    for (int64_t j = 0; j < p.columns; ++j) tree_[leaves_ + j] = kUntried;
    for (int64_t k = leaves_ - 1; k >= 1; --k) tree_[k] = tree_[2 * k] + tree_[2 * k + 1];
  }

  // Round `round`'s coordinates, in the order drawn: at most --batch, fewer when the filter
  // drops some (or 2 x --batch draws repeat coordinates).
  const std::vector<int64_t>& Pick(uint64_t round) {
    ++picks_;
    picked_.clear();
    candidates_.clear();
    const double total = tree_[1];
    if (total <= 0) return picked_;
    const int64_t want = std::min<int64_t>(f_.batch, p_.columns), draws = 2 * want;
    draws_.resize(static_cast<size_t>(draws));
    run_((draws + kDrawPiece - 1) / kDrawPiece, [&](int64_t piece) {
      for (int64_t d = piece * kDrawPiece; d < std::min(draws, (piece + 1) * kDrawPiece); ++d) {
        const uint64_t h = SplitMix64(round * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(d));
        draws_[d] = Find(UnitDouble(SplitMix64(f_.seed ^ h)) * total);
      }
    });
    for (size_t d = 0; d < draws_.size() && static_cast<int64_t>(candidates_.size()) < want; ++d) {
      const int64_t j = draws_[d];
      if (drawn_[j] == picks_ || tree_[leaves_ + j] <= 0) continue;  // again, or rounding
      drawn_[j] = picks_;
      candidates_.push_back(j);
    }
    run_(ranges_, [&](int64_t r) { DotsInRange(r); });
    const int64_t pieces =
        (static_cast<int64_t>(candidates_.size()) + kAcceptPiece - 1) / kAcceptPiece;
    if (of_piece_.size() < static_cast<size_t>(pieces))
      of_piece_.resize(static_cast<size_t>(pieces));
    run_(pieces, [&](int64_t q) { TooCorrelatedInPiece(q); });
    Accept(pieces);
    return picked_;
  }

  // The last Pick's candidates, in draw order (tests check the greedy pass against them).
  const std::vector<int64_t>& candidates() const { return candidates_; }

  // After the round: coordinate j's value now; its priority is the square of its change.
  void Updated(int64_t j, double value) { Set(j, Record(j, value)); }

  // After the round: values[i] is the value now of the last Pick's i-th coordinate. The same as
  // Updated(picked[i], values[i]) for each i in turn, bit for bit (a node of the tree ends as the
  // sum of its children's last values, whatever the order of the updates below it), with the
  // leaves set and the paths above them summed in pieces of subtrees, then the levels above the
  // subtrees summed. Throws std::invalid_argument unless values has one value per coordinate.
  void UpdatePicked(const std::vector<double>& values) {
    if (values.size() != picked_.size())
      throw std::invalid_argument("LassoScheduler::UpdatePicked: " + std::to_string(values.size()) +
                                  " values for " + std::to_string(picked_.size()) +
                                  " picked coordinates");
    const int64_t subtrees = std::min(kSubtrees, leaves_), width = leaves_ / subtrees;
    group_begin_.assign(static_cast<size_t>(subtrees) + 1, 0);  // picks by subtree, in order
    for (int64_t j : picked_) ++group_begin_[static_cast<size_t>(j / width) + 1];
    for (int64_t s = 0; s < subtrees; ++s) group_begin_[s + 1] += group_begin_[s];
    group_next_.assign(group_begin_.begin(), group_begin_.end() - 1);
    grouped_.resize(picked_.size());
    for (size_t i = 0; i < picked_.size(); ++i)
      grouped_[group_next_[static_cast<size_t>(picked_[i] / width)]++] = static_cast<int32_t>(i);
    run_(subtrees, [&](int64_t s) {
      for (int64_t g = group_begin_[s]; g < group_begin_[s + 1]; ++g) {
        const int32_t i = grouped_[g];
        const int64_t j = picked_[i];
        int64_t k = leaves_ + j;
        tree_[k] = Record(j, values[i]);
        for (k /= 2; k >= subtrees; k /= 2) tree_[k] = tree_[2 * k] + tree_[2 * k + 1];
      }
    });
    for (int64_t k = subtrees - 1; k >= 1; --k) tree_[k] = tree_[2 * k] + tree_[2 * k + 1];
  }

 private:
  static constexpr double kUntried = 1.0;  // before a coordinate's first update
  static constexpr double kFloor = 1e-6;

  struct Entry {  // a candidate's value in a row, and the row's entry of the candidate before
    int32_t candidate;
    float value;
    int32_t next;
  };
  struct Partial {  // one range's part of the dot product of two candidates
    int32_t later, earlier;
    double dot;
  };
  // Ranges and pieces run on the node's threads at once, each writing its own state's vectors
  // (their end pointers at every push_back): a cache line each, or two threads' states shared
  // lines, and lasso's 2-thread epoch took 20 % longer in a build whose heap put the array
  // across lines differently (the same instructions, by callgrind).
  struct alignas(64) RangeState {  // a range's own lists and sums, kept from round to round
    std::vector<Entry> entries;
    std::vector<double> dot;  // per earlier candidate: the running dot product
    std::vector<int32_t> touched;
    std::vector<Partial> partials;  // by later candidate
  };
  struct Conflict {  // two candidates more correlated than the bound
    int32_t later, earlier;
  };
  struct alignas(64) PieceState {  // a piece of candidates' own sums, kept from round to round
    std::vector<double> dot;       // per earlier candidate: the summed dot product
    std::vector<int32_t> touched;
    std::vector<Conflict> conflicts;  // by later candidate
  };

  // Keeps coordinate j's value now and returns its priority, the square of its change.
  double Record(int64_t j, double value) {
    const double change = value - known_[j];
    known_[j] = value;
    return change * change + kFloor;
  }
  void Set(int64_t j, double weight) {
    int64_t k = leaves_ + j;
    tree_[k] = weight;
    for (k /= 2; k >= 1; k /= 2) tree_[k] = tree_[2 * k] + tree_[2 * k + 1];
  }
  int64_t Find(double u) const {
    int64_t k = 1;
    while (k < leaves_) {
      if (u < tree_[2 * k] || tree_[2 * k + 1] <= 0) {
        k = 2 * k;
      } else {
        u -= tree_[2 * k];
        k = 2 * k + 1;
      }
    }
    return std::min(k - leaves_, p_.columns - 1);
  }
  // The range of the rows `row` is in: the last r with r * rows / ranges <= row, as DotsInRange
  // cuts them.
  size_t RangeOf(int32_t row) const {
    return static_cast<size_t>(((int64_t{row} + 1) * ranges_ - 1) / p_.rows);
  }
  // Range r's partial dot products of each candidate with the earlier ones sharing its rows in
  // the range, summed in the later candidate's row order. Rows of different ranges are
  // disjoint, so the ranges share the per-row lists.
  void DotsInRange(int64_t r) {
    RangeState& s = of_range_[static_cast<size_t>(r)];
    s.entries.clear();
    s.partials.clear();
    if (s.dot.size() < candidates_.size()) s.dot.resize(candidates_.size(), 0);
    const auto lo = static_cast<int32_t>(r * p_.rows / ranges_);
    const auto hi = static_cast<int32_t>((r + 1) * p_.rows / ranges_);
    for (size_t b = 0; b < candidates_.size(); ++b) {
      const int64_t j = candidates_[b];
      const int32_t* const first = p_.row.data() + p_.begin[j];
      const int32_t* const last = p_.row.data() + p_.begin[j + 1];
      if (first == last || *first >= hi || last[-1] < lo) continue;  // a column's rows ascend
      s.touched.clear();
      for (const int32_t* at = std::lower_bound(first, last, lo); at != last && *at < hi; ++at) {
        const int32_t row = *at;
        const float value = p_.value[static_cast<size_t>(at - p_.row.data())];
        if (stamp_[row] != picks_) stamp_[row] = picks_, head_[row] = -1;
        for (int32_t x = head_[row]; x >= 0; x = s.entries[x].next) {
          const Entry& entry = s.entries[x];
          if (s.dot[entry.candidate] == 0) s.touched.push_back(entry.candidate);
          s.dot[entry.candidate] += static_cast<double>(entry.value * value);
        }
        s.entries.push_back({static_cast<int32_t>(b), value, head_[row]});
        head_[row] = static_cast<int32_t>(s.entries.size() - 1);
      }
      for (int32_t a : s.touched) {
        s.partials.push_back({static_cast<int32_t>(b), a, s.dot[a]});
        s.dot[a] = 0;
      }
    }
  }
  // Piece q's candidates b: each one's too-correlated earlier candidates, accepted or not, in
  // the order of their first partial. A pair's dot product is its ranges' partials summed in range
  // order, as it was when the greedy pass summed them.
  void TooCorrelatedInPiece(int64_t q) {
    PieceState& s = of_piece_[static_cast<size_t>(q)];
    s.conflicts.clear();
    const auto first = static_cast<int32_t>(q * kAcceptPiece);
    const auto last = static_cast<int32_t>(
        std::min<int64_t>(static_cast<int64_t>(candidates_.size()), (q + 1) * kAcceptPiece));
    if (s.dot.size() < static_cast<size_t>(last)) s.dot.resize(static_cast<size_t>(last), 0);
    size_t at_of_range[kRowRanges];
    for (size_t r = 0; r < of_range_.size(); ++r) {
      const std::vector<Partial>& partials = of_range_[r].partials;
      at_of_range[r] = static_cast<size_t>(
          std::lower_bound(partials.begin(), partials.end(), first,
                           [](const Partial& part, int32_t b) { return part.later < b; }) -
          partials.begin());
    }
    for (int32_t b = first; b < last; ++b) {
      s.touched.clear();
      const int64_t j = candidates_[b];
      if (p_.begin[j] == p_.begin[j + 1]) continue;  // no rows, no partials
      // Only the ranges from its first row's to its last row's can hold b's partials (a column's
      // rows ascend); the others' cursors stay where they are.
      const size_t r_last = RangeOf(p_.row[p_.begin[j + 1] - 1]);
      for (size_t r = RangeOf(p_.row[p_.begin[j]]); r <= r_last; ++r) {
        const std::vector<Partial>& partials = of_range_[r].partials;
        for (size_t& at = at_of_range[r]; at < partials.size() && partials[at].later == b; ++at) {
          const Partial& part = partials[at];
          if (s.dot[part.earlier] == 0) s.touched.push_back(part.earlier);
          s.dot[part.earlier] += part.dot;
        }
      }
      for (int32_t a : s.touched) {
        const double norms = std::sqrt(p_.squared_norm[j] * p_.squared_norm[candidates_[a]]);
        if (norms > 0 && std::abs(s.dot[a]) > f_.correlation * norms) s.conflicts.push_back({b, a});
        s.dot[a] = 0;
      }
    }
  }
  // The candidates in order: each is picked unless one of its too-correlated earlier candidates
  // was picked.
  void Accept(int64_t pieces) {
    accepted_.assign(candidates_.size(), 0);
    for (int64_t q = 0; q < pieces; ++q) {
      const std::vector<Conflict>& conflicts = of_piece_[static_cast<size_t>(q)].conflicts;
      size_t at = 0;
      const auto last = static_cast<int32_t>(
          std::min<int64_t>(static_cast<int64_t>(candidates_.size()), (q + 1) * kAcceptPiece));
      for (auto b = static_cast<int32_t>(q * kAcceptPiece); b < last; ++b) {
        bool too = false;
        for (; at < conflicts.size() && conflicts[at].later == b; ++at)
          too = too || accepted_[conflicts[at].earlier];
        if (too) continue;
        accepted_[b] = 1;
        picked_.push_back(candidates_[b]);
      }
    }
  }

  const LassoProblem& p_;
  const LassoFlags& f_;
  PieceRunner run_;
  int64_t leaves_;
  int64_t ranges_;
  std::vector<double> tree_;     // sum tree of the priorities, leaves at [leaves_, 2 leaves_)
  std::vector<double> known_;    // each coordinate's value after its last update
  uint64_t picks_ = 0;           // Pick calls so far: stamps of this round's rows and draws
  std::vector<uint64_t> drawn_;  // per column: the round that last drew it
  std::vector<int64_t> draws_;
  std::vector<int64_t> candidates_;  // this round's distinct draws, in draw order
  std::vector<int32_t> head_;        // per row: its last candidate entry in its range's list
  std::vector<uint64_t> stamp_;
  std::vector<RangeState> of_range_;
  std::vector<PieceState> of_piece_;  // per piece of kAcceptPiece candidates
  std::vector<char> accepted_;        // per candidate
  std::vector<int64_t> picked_;
  std::vector<int64_t> group_begin_, group_next_;  // UpdatePicked: per subtree, its picks
  std::vector<int32_t> grouped_;                   // indices into picked_, by subtree
};

// The epoch line: the objective from the residual's squared norm and beta's L1 norm, the
// coefficients != 0 and how many of them the true beta has.
inline void PrintEpoch(int epoch, const LassoProblem& p, double squared_residual, double l1,
                       int64_t found, int64_t true_found) {
  std::printf("epoch %d objective %.6f nonzeros %lld true %lld of %lld\n", epoch,
              0.5 * squared_residual + p.lambda * l1, static_cast<long long>(found),
              static_cast<long long>(true_found), static_cast<long long>(p.support));
}

}  // namespace examples
