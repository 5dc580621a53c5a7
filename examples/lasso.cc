// Lasso by coordinate descent with dynamic scheduling, on strads: lasso_serial.cc with beta and
// the residual r in dvectors and each round's update an AsyncForEach over the picked set.
//
// The set changes every round. AsyncForEach records each coordinate's accesses (its column's
// rows of r, and beta_j) the first time it runs and plans each round from the accesses of the
// picked coordinates only: coordinates whose columns share rows of r conflict and run in order,
// the others in parallel. The result equals the serial program run in the order
// rt.last_serial_order() reports, not the scheduler's order, so it differs from lasso_serial
// by rounding; results do not depend on --nodes, mpiexec -n or --threads; with
// --async-engine locks they do (record and replay such runs).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/lasso_problem.h"
#include "strads/strads.h"

using examples::Coefficient;

// Coordinate j's update: beta_j minimizes the objective with the others fixed, and r follows.
// `r` is the residual (a std::vector or a dvector): every entry of column j is read and written
// whatever the values, so the elements a call touches depend on j only.
template <class Residual>
void UpdateCoordinate(const examples::LassoProblem& p, int64_t j, double& beta, Residual& r) {
  const double sq = p.squared_norm[j];
  double dot = 0;
  for (int64_t e = p.begin[j]; e < p.begin[j + 1]; ++e) dot += p.value[e] * r[p.row[e]];
  const double z = dot + sq * beta;
  const double updated = sq == 0 ? 0
                                 : (z > p.lambda    ? z - p.lambda
                                    : z < -p.lambda ? z + p.lambda
                                                    : 0) /
                                       sq;
  const double change = updated - beta;
  for (int64_t e = p.begin[j]; e < p.begin[j + 1]; ++e) r[p.row[e]] -= change * p.value[e];
  beta = updated;
}

int main(int argc, char** argv) {
  examples::LassoFlags f;
  CLI::App app{"Lasso by coordinate descent with dynamic scheduling"};
  examples::AddLassoFlags(app, f);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    examples::LassoProblem problem;
    try {
      problem = examples::LoadLassoProblem(f);
    } catch (const std::exception& e) {
      throw strads::CollectiveUsageError(e.what());  // every node read the same file
    }
    const int64_t n = problem.rows, p = problem.columns;
    auto& beta = strads::MakeDVector<Coefficient>(
        rt, p,
        [&](int64_t j) {
          return Coefficient{0.0, problem.in_support[j]};
        },
        "beta");
    auto& r = strads::MakeDVector<double>(
        rt, n, [&](int64_t i) { return problem.y[i]; }, "r");
    const auto& read_beta = beta;
    examples::LassoScheduler scheduler(
        problem, f, [](int64_t n, const auto& piece) { strads::ParallelFor(n, piece); });
    const int64_t rounds = (p + f.batch - 1) / f.batch;
    std::vector<double> values;  // per picked coordinate, its value after the round

    double seconds = 0;
    for (int epoch = 1; epoch <= f.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      for (int64_t round = (epoch - 1) * rounds; round < epoch * rounds; ++round) {
        const std::vector<int64_t>& picked = scheduler.Pick(static_cast<uint64_t>(round));
        strads::AsyncForEach(picked,
                             [&](int64_t j) { UpdateCoordinate(problem, j, beta[j].value, r); });
        values.clear();  // the driver reads beta, the scheduler's pieces use the copies
        for (int64_t j : picked) values.push_back(read_beta[j].value);
        scheduler.UpdatePicked(values);
      }
      if (epoch > 1 || f.epochs == 1)
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double loss = strads::Sum(rt, r, [](double v) { return v * v; });
      const double l1 =
          strads::Sum(rt, beta, [](const Coefficient& c) { return std::abs(c.value); });
      const int64_t found =
          strads::Sum(rt, beta, [](const Coefficient& c) { return int64_t{c.value != 0}; });
      const int64_t true_found = strads::Sum(
          rt, beta, [](const Coefficient& c) { return int64_t{c.value != 0 && c.in_support}; });
      if (rt.leader()) examples::PrintEpoch(epoch, problem, loss, l1, found, true_found);
    }

    if (f.timing && rt.leader())
      std::printf("time per epoch: %.3f ms\n", 1e3 * seconds / std::max(1, f.epochs - 1));
    const uint64_t checksum = strads::Checksum(rt, {&beta, &r});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
