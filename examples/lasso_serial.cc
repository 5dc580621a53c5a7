// Lasso by coordinate descent with dynamic scheduling (the STRADS thesis, section 4), serial:
// each round the scheduler picks coordinates by priority, dropping the correlated ones, and the
// program updates them one by one, in the order picked.
//
//   for round:  S = scheduler.Pick();  for j in S: update beta_j and r;  report the new values
//
// lasso.cc is this program on strads (the diff is the port); per epoch it prints the objective
// and the support found, at the end a checksum of beta and r.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/lasso_problem.h"
#include "strads/fnv1a.h"

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
  CLI11_PARSE(app, argc, argv);
  {
    examples::LassoProblem problem;
    try {
      problem = examples::LoadLassoProblem(f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lasso_serial: %s\n", e.what());
      return 2;
    }
    const int64_t n = problem.rows, p = problem.columns;
    std::vector<Coefficient> beta(p);
    for (int64_t j = 0; j < p; ++j) beta[j] = {0.0, problem.in_support[j]};
    std::vector<double> r(problem.y);
    examples::LassoScheduler scheduler(problem, f);
    const int64_t rounds = (p + f.batch - 1) / f.batch;
    std::vector<double> values;  // per picked coordinate, its value after the round

    double seconds = 0;
    for (int epoch = 1; epoch <= f.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      for (int64_t round = (epoch - 1) * rounds; round < epoch * rounds; ++round) {
        const std::vector<int64_t>& picked = scheduler.Pick(static_cast<uint64_t>(round));
        for (int64_t j : picked) UpdateCoordinate(problem, j, beta[j].value, r);
        values.clear();
        for (int64_t j : picked) values.push_back(beta[j].value);
        scheduler.UpdatePicked(values);
      }
      if (epoch > 1 || f.epochs == 1)
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double loss = 0, l1 = 0;
      for (double v : r) loss += v * v;
      int64_t found = 0, true_found = 0;
      for (const Coefficient& c : beta) {
        l1 += std::abs(c.value);
        found += c.value != 0, true_found += c.value != 0 && c.in_support;
      }
      examples::PrintEpoch(epoch, problem, loss, l1, found, true_found);
    }

    if (f.timing)
      std::printf("time per epoch: %.3f ms\n", 1e3 * seconds / std::max(1, f.epochs - 1));
    strads::Fnv1a hash;
    hash.Update(beta.data(), beta.size() * sizeof(Coefficient));
    hash.Update(r.data(), static_cast<size_t>(n) * sizeof(double));
    std::printf("checksum: %s\n", hash.hex().c_str());
  }
  return 0;
}
