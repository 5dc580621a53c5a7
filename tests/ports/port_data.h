// Seeded synthetic data for the three ports (shared by the serial programs and their ports).
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace ports {

// ---- k-means: K blobs in D dimensions
constexpr int kDim = 4;
struct Point {
  double x[kDim];
};

inline std::vector<Point> MakePoints(int64_t n, int k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Point> centers(k);
  for (auto& c : centers)
    for (double& v : c.x) v = 10.0 * g(rng);
  std::vector<Point> pts(n);
  for (int64_t i = 0; i < n; ++i) {
    const Point& c = centers[rng() % k];
    for (int d = 0; d < kDim; ++d) pts[i].x[d] = c.x[d] + g(rng);
  }
  return pts;
}

// ---- PageRank: power-law graph as in-edge CSR
struct Graph {
  int64_t n = 0;
  std::vector<int64_t> in_begin;  // n + 1
  std::vector<int32_t> src;       // in-edge sources
  std::vector<int32_t> outdeg;
};

inline Graph MakeGraph(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<int32_t>> in(n);
  Graph g;
  g.n = n;
  g.outdeg.assign(n, 0);
  for (int64_t v = 0; v < n; ++v) {
    // out-degree: Pareto-ish, some vertices dangling
    const int deg = static_cast<int>(std::floor(std::pow(u(rng), -1.2))) - 1;
    for (int e = 0; e < std::min(deg, 200); ++e) {
      const int64_t t = static_cast<int64_t>(n * std::pow(u(rng), 2.5));  // skewed targets
      if (t == v) continue;
      in[t].push_back(static_cast<int32_t>(v));
      ++g.outdeg[v];
    }
  }
  g.in_begin.assign(n + 1, 0);
  for (int64_t v = 0; v < n; ++v)
    g.in_begin[v + 1] = g.in_begin[v] + static_cast<int64_t>(in[v].size());
  for (auto& l : in) g.src.insert(g.src.end(), l.begin(), l.end());
  return g;
}

// ---- sparse logistic regression
constexpr int kNnz = 8;
struct Row {
  int32_t idx[kNnz];
  float val[kNnz];
  float y;
};

inline std::vector<Row> MakeRows(int64_t n, int features, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> truth(features);
  for (double& w : truth) w = g(rng);
  std::vector<Row> rows(n);
  for (auto& r : rows) {
    double z = 0;
    for (int k = 0; k < kNnz; ++k) {
      r.idx[k] = static_cast<int32_t>(rng() % features);
      r.val[k] = static_cast<float>(g(rng));
      z += truth[r.idx[k]] * r.val[k];
    }
    r.y = u(rng) < 1.0 / (1.0 + std::exp(-z)) ? 1.0f : 0.0f;
  }
  return rows;
}

}  // namespace ports
