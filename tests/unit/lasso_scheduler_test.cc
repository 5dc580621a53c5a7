// The Lasso examples' scheduler (examples/common/lasso_problem.h): its picks do not depend on
// how its pieces run (in order as in lasso_serial, in reverse, or on threads as ParallelFor
// runs them in lasso), and no two coordinates picked together are more correlated than the
// bound.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
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

// Rounds of picks, each followed by made-up updates that depend on the picks only.
std::vector<std::vector<int64_t>> PicksOf(const examples::LassoProblem& p,
                                          const examples::LassoFlags& f, examples::PieceRunner run,
                                          int rounds) {
  examples::LassoScheduler scheduler(p, f, std::move(run));
  std::vector<std::vector<int64_t>> picks;
  for (int round = 0; round < rounds; ++round) {
    picks.push_back(scheduler.Pick(static_cast<uint64_t>(round)));
    for (int64_t j : picks.back())
      scheduler.Updated(j, std::sin(static_cast<double>(j * (round + 1))));
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
