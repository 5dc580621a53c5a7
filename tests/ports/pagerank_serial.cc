// PageRank (pull over in-edges), serial.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

#include "port_data.h"
#include "strads/fnv1a.h"

int main(int argc, char** argv) {
  int64_t n = 20000;
  int iters = 10;
  uint64_t seed = 7;
  double damp = 0.85;
  CLI::App app{"PageRank serial"};
  app.add_option("--vertices", n);
  app.add_option("--iters", iters);
  app.add_option("--data-seed", seed);
  bool chunked =
      false;  // sum the dangling mass as strads::Sum folds: chunks of 4096, then chunk sums
  app.add_flag("--chunked", chunked);
  CLI11_PARSE(app, argc, argv);
  const ports::Graph g = ports::MakeGraph(n, seed);
  std::printf("graph: %lld vertices %zu edges\n", (long long)n, g.src.size());
  std::vector<double> rank(n, 1.0 / n), next(n);
  for (int it = 1; it <= iters; ++it) {
    double dangling = 0;
    if (!chunked) {
      for (int64_t v = 0; v < n; ++v)
        if (g.outdeg[v] == 0) dangling += rank[v];
    } else {
      for (int64_t c = 0; c < n; c += 4096) {
        double part = 0;
        for (int64_t v = c; v < std::min(n, c + 4096); ++v)
          part += g.outdeg[v] == 0 ? rank[v] : 0.0;
        dangling += part;
      }
    }
    for (int64_t v = 0; v < n; ++v) {
      double s = 0;
      for (int64_t e = g.in_begin[v]; e < g.in_begin[v + 1]; ++e)
        s += rank[g.src[e]] / g.outdeg[g.src[e]];
      next[v] = (1 - damp) / n + damp * (s + dangling / n);
    }
    double delta = 0, total = 0;
    for (int64_t v = 0; v < n; ++v) delta += std::fabs(next[v] - rank[v]), total += next[v];
    rank.swap(next);
    std::printf("iter %d delta %.9e total %.12f\n", it, delta, total);
  }
  strads::Fnv1a h;
  h.Update(rank.data(), rank.size() * sizeof(double));
  std::printf("checksum: %s\n", h.hex().c_str());
}
