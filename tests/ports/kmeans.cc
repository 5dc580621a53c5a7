// k-means (Lloyd) on strads: the assignment loop is an AsyncFor over points that reads the
// centroids (a driver-local vector, read only) and writes assign[i]; the centroid sums, counts
// and the inertia are accumulators.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <limits>
#include <vector>

#include "port_data.h"
#include "strads/strads.h"

int main(int argc, char** argv) {
  int64_t n = 20000;
  int K = 8, iters = 10;
  uint64_t seed = 42;
  CLI::App app{"k-means on strads"};
  app.add_option("--points", n);
  app.add_option("--k", K);
  app.add_option("--iters", iters);
  app.add_option("--data-seed", seed);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    using ports::kDim;
    std::vector<ports::Point> raw = ports::MakePoints(n, K, seed);
    const auto& pts = strads::MakeDVector<ports::Point>(
        rt, n, [&](int64_t i) { return raw[i]; }, "points");
    std::vector<double> cent(K * kDim);
    for (int k = 0; k < K; ++k)
      for (int d = 0; d < kDim; ++d) cent[k * kDim + d] = raw[k].x[d];
    auto& assign = strads::MakeDVector<int32_t>(
        rt, n, [](int64_t) { return -1; }, "assign");
    auto& sums = strads::MakeAccumulator<double>(
        rt, K * kDim, [](int64_t) { return 0.0; }, "sums");
    auto& counts = strads::MakeAccumulator<int64_t>(
        rt, K, [](int64_t) { return int64_t{0}; }, "counts");
    auto& inertia = strads::MakeAccumulator<double>(
        rt, 1, [](int64_t) { return 0.0; }, "inertia");
    for (int it = 1; it <= iters; ++it) {
      // reset the accumulators (driver code: applies on every node)
      for (int64_t j = 0; j < K * kDim; ++j) sums.Add(j, -sums[j]);
      for (int k = 0; k < K; ++k) counts.Add(k, -counts[k]);
      inertia.Add(0, -inertia[0]);
      const std::vector<double>& c = cent;
      strads::AsyncFor(0, n - 1, [&, K](int64_t i) {
        const ports::Point& p = pts[i];
        int best = 0;
        double bestd = std::numeric_limits<double>::infinity();
        for (int k = 0; k < K; ++k) {
          double dist = 0;
          for (int d = 0; d < kDim; ++d) {
            const double t = p.x[d] - c[k * kDim + d];
            dist += t * t;
          }
          if (dist < bestd) bestd = dist, best = k;
        }
        assign[i] = best;
        for (int d = 0; d < kDim; ++d) sums.Add(best * kDim + d, p.x[d]);
        counts.Add(best, 1);
        inertia.Add(0, bestd);
      });
      for (int k = 0; k < K; ++k)
        if (counts[k] > 0)
          for (int d = 0; d < kDim; ++d)
            cent[k * kDim + d] = sums[k * kDim + d] / static_cast<double>(counts[k]);
      if (rt.leader())
        std::printf("iter %d inertia %.6f\n", it, inertia[0] / static_cast<double>(n));
    }
    const uint64_t h = strads::Checksum(rt, {&assign});
    if (rt.leader()) std::printf("assign checksum: %016llx\n", static_cast<unsigned long long>(h));
    strads::Fnv1a cc;
    cc.Update(cent.data(), cent.size() * sizeof(double));
    if (rt.leader()) std::printf("centroid checksum: %s\n", cc.hex().c_str());
  });
}
