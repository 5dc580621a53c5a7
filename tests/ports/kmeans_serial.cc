// k-means (Lloyd), serial.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <limits>
#include <vector>

#include "port_data.h"
#include "strads/exact_sum.h"
#include "strads/fnv1a.h"

int main(int argc, char** argv) {
  int64_t n = 20000;
  int K = 8, iters = 10;
  uint64_t seed = 42;
  CLI::App app{"k-means serial"};
  app.add_option("--points", n);
  app.add_option("--k", K);
  app.add_option("--iters", iters);
  app.add_option("--data-seed", seed);
  CLI11_PARSE(app, argc, argv);
  using ports::kDim;
  std::vector<ports::Point> pts = ports::MakePoints(n, K, seed);
  std::vector<double> cent(K * kDim);
  for (int k = 0; k < K; ++k)
    for (int d = 0; d < kDim; ++d) cent[k * kDim + d] = pts[k].x[d];
  std::vector<int32_t> assign(n, -1);
  for (int it = 1; it <= iters; ++it) {
    std::vector<strads::ExactSum<double>> sums(K * kDim);
    std::vector<int64_t> counts(K, 0);
    strads::ExactSum<double> inertia;
    for (int64_t i = 0; i < n; ++i) {
      int best = 0;
      double bestd = std::numeric_limits<double>::infinity();
      for (int k = 0; k < K; ++k) {
        double dist = 0;
        for (int d = 0; d < kDim; ++d) {
          const double t = pts[i].x[d] - cent[k * kDim + d];
          dist += t * t;
        }
        if (dist < bestd) bestd = dist, best = k;
      }
      assign[i] = best;
      for (int d = 0; d < kDim; ++d) sums[best * kDim + d].Add(pts[i].x[d]);
      counts[best] += 1;
      inertia.Add(bestd);
    }
    for (int k = 0; k < K; ++k)
      if (counts[k] > 0)
        for (int d = 0; d < kDim; ++d)
          cent[k * kDim + d] = sums[k * kDim + d].Value() / static_cast<double>(counts[k]);
    std::printf("iter %d inertia %.6f\n", it, inertia.Value() / static_cast<double>(n));
  }
  strads::Fnv1a h;
  h.Update(assign.data(), assign.size() * sizeof(int32_t));
  std::printf("assign checksum: %s\n", h.hex().c_str());
  strads::Fnv1a c;
  c.Update(cent.data(), cent.size() * sizeof(double));
  std::printf("centroid checksum: %s\n", c.hex().c_str());
}
