// The Lasso examples' scheduler (examples/common/lasso_problem.h): its picks do not depend on
// how its pieces run (in order as in lasso_serial, in reverse, or on threads as ParallelFor
// runs them in lasso), and no two coordinates picked together are more correlated than the
// bound.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/lasso_problem.h"

namespace {

examples::LassoFlags SmallFlags() {
  examples::LassoFlags f;
  f.samples = 3000;
  f.features = 6000;
  f.column_nnz = 12;  // two shared rows of the same sign make 2/12 > the bound 0.1: drops happen
  f.support = 60;
  f.batch = 400;
  return f;
}

// Rounds of picks, each followed by made-up updates that depend on the picks only: reported all
// at once (UpdatePicked, as the programs do) or one by one (Updated).
std::vector<std::vector<int64_t>> PicksOf(const examples::LassoProblem& p,
                                          const examples::LassoFlags& f, examples::PieceRunner run,
                                          int rounds, bool one_by_one = false) {
  examples::LassoScheduler scheduler(p, f, std::move(run));
  std::vector<std::vector<int64_t>> picks;
  std::vector<double> values;
  for (int round = 0; round < rounds; ++round) {
    picks.push_back(scheduler.Pick(static_cast<uint64_t>(round)));
    values.clear();
    for (int64_t j : picks.back()) values.push_back(std::sin(static_cast<double>(j * (round + 1))));
    if (one_by_one) {
      for (size_t i = 0; i < values.size(); ++i) scheduler.Updated(picks.back()[i], values[i]);
    } else {
      scheduler.UpdatePicked(values);
    }
  }
  return picks;
}

void InReverse(int64_t count, const std::function<void(int64_t)>& piece) {
  for (int64_t i = count - 1; i >= 0; --i) piece(i);
}

void OnThreeThreads(int64_t count, const std::function<void(int64_t)>& piece) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (int64_t i = t; i < count; i += 3) piece(i);
    });
  for (auto& thread : threads) thread.join();
}

double Correlation(const examples::LassoProblem& p, int64_t a, int64_t b) {
  double dot = 0;
  for (int64_t e = p.begin[a]; e < p.begin[a + 1]; ++e)
    for (int64_t x = p.begin[b]; x < p.begin[b + 1]; ++x)
      if (p.row[e] == p.row[x]) dot += static_cast<double>(p.value[e]) * p.value[x];
  return std::abs(dot) / std::sqrt(p.squared_norm[a] * p.squared_norm[b]);
}

}  // namespace

TEST_CASE("Lasso scheduler: the picks do not depend on the order or threads of its pieces") {
  const examples::LassoFlags f = SmallFlags();
  const examples::LassoProblem p = examples::SyntheticLasso(f);
  const auto in_order = PicksOf(p, f, examples::RunPiecesInOrder, 40);
  CHECK(PicksOf(p, f, InReverse, 40) == in_order);
  CHECK(PicksOf(p, f, OnThreeThreads, 40) == in_order);
  size_t picked = 0;
  for (const auto& round : in_order) picked += round.size();
  CHECK(picked > 0);
  CHECK(picked < 40 * static_cast<size_t>(f.batch));  // repeated draws and the filter drop some
}

// UpdatePicked sums the tree in pieces of subtrees, then the levels above them; Updated sums each
// coordinate's whole path. The trees must agree bit for bit, or the draws, and so the picks,
// part. 6000 columns make 8192 leaves: subtrees of 128 leaves under 6 levels summed at the end.
TEST_CASE("Lasso scheduler: the picked coordinates' updates at once or one by one, same picks") {
  const examples::LassoFlags f = SmallFlags();
  const examples::LassoProblem p = examples::SyntheticLasso(f);
  const auto one_by_one = PicksOf(p, f, examples::RunPiecesInOrder, 40, true);
  CHECK(PicksOf(p, f, examples::RunPiecesInOrder, 40) == one_by_one);
  CHECK(PicksOf(p, f, InReverse, 40) == one_by_one);
  CHECK(PicksOf(p, f, OnThreeThreads, 40) == one_by_one);
  examples::LassoFlags tiny =
      f;  // fewer leaves than subtrees: one leaf each, all summed at the end
  tiny.features = 20;
  tiny.batch = 6;
  const examples::LassoProblem q = examples::SyntheticLasso(tiny);
  CHECK(PicksOf(q, tiny, OnThreeThreads, 40) ==
        PicksOf(q, tiny, examples::RunPiecesInOrder, 40, true));
}

// The greedy pass against its definition, with dot products summed here row by row: a candidate
// is picked iff no earlier picked one is more correlated with it than the bound. A column's 12
// draws make 1 to 12 distinct rows of +-1/sqrt(rows), so correlations are k / sqrt(n1 n2); the
// bound 0.13 is at least 9e-4 from every such value (0.1 is one: 1 / sqrt(10 x 10)), so the two
// summation orders cannot disagree.
TEST_CASE("Lasso scheduler: a candidate is picked iff no picked earlier one is too correlated") {
  examples::LassoFlags f = SmallFlags();
  f.correlation = 0.13;
  const examples::LassoProblem p = examples::SyntheticLasso(f);
  examples::LassoScheduler scheduler(p, f, OnThreeThreads);
  size_t dropped = 0;
  for (int round = 0; round < 5; ++round) {
    const std::vector<int64_t> picked = scheduler.Pick(static_cast<uint64_t>(round));
    std::vector<int64_t> expected;
    for (int64_t b : scheduler.candidates()) {
      bool too = false;
      for (int64_t a : expected) too = too || Correlation(p, a, b) > f.correlation;
      if (!too) expected.push_back(b);
    }
    CHECK(picked == expected);
    dropped += scheduler.candidates().size() - picked.size();
    std::vector<double> values;
    for (int64_t j : picked) values.push_back(std::cos(static_cast<double>(j + round)));
    scheduler.UpdatePicked(values);
  }
  CHECK(dropped > 0);
}

TEST_CASE("Lasso scheduler: UpdatePicked takes one value per picked coordinate") {
  const examples::LassoFlags f = SmallFlags();
  const examples::LassoProblem p = examples::SyntheticLasso(f);
  examples::LassoScheduler scheduler(p, f);
  const std::vector<int64_t>& picked = scheduler.Pick(0);
  REQUIRE(!picked.empty());
  CHECK_THROWS_AS(scheduler.UpdatePicked(std::vector<double>(picked.size() + 1, 1.0)),
                  std::invalid_argument);
}

TEST_CASE("Lasso scheduler: no two coordinates of a round are more correlated than the bound") {
  const examples::LassoFlags f = SmallFlags();
  const examples::LassoProblem p = examples::SyntheticLasso(f);
  int pairs_near = 0;  // pairs sharing a row: the bound is checked where it can bite
  for (const auto& round : PicksOf(p, f, examples::RunPiecesInOrder, 5))
    for (size_t a = 0; a < round.size(); ++a)
      for (size_t b = a + 1; b < round.size(); ++b) {
        const double c = Correlation(p, round[a], round[b]);
        pairs_near += c > 0;
        CHECK(c <= f.correlation + 1e-12);
      }
  CHECK(pairs_near > 0);
}
