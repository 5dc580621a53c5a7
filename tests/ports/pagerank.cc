// PageRank (pull over in-edges) on strads: the in-edge CSR in const dvectors, the rank update an
// AsyncFor over vertices that reads rank[] of the sources and writes next[v].
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

#include "port_data.h"
#include "strads/strads.h"

int main(int argc, char** argv) {
  int64_t n = 20000;
  int iters = 10;
  uint64_t seed = 7;
  double damp = 0.85;
  CLI::App app{"PageRank on strads"};
  app.add_option("--vertices", n);
  app.add_option("--iters", iters);
  app.add_option("--data-seed", seed);
  bool dang_per_iter = false;  // rule break kept reproducible: a DDS made anew every iteration
  app.add_flag("--dang-per-iter", dang_per_iter);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    ports::Graph g = ports::MakeGraph(n, seed);
    const int64_t m = static_cast<int64_t>(g.src.size());
    if (rt.leader()) std::printf("graph: %lld vertices %lld edges\n", (long long)n, (long long)m);
    const auto& in_begin = strads::MakeDVector<int64_t>(
        rt, n + 1, [&](int64_t i) { return g.in_begin[i]; }, "in_begin");
    const auto& src = strads::MakeDVector<int32_t>(
        rt, m, [&](int64_t i) { return g.src[i]; }, "src");
    const auto& outdeg = strads::MakeDVector<int32_t>(
        rt, n, [&](int64_t i) { return g.outdeg[i]; }, "outdeg");
    auto& rank = strads::MakeDVector<double>(
        rt, n, [&](int64_t) { return 1.0 / n; }, "rank");
    auto& next = strads::MakeDVector<double>(
        rt, n, [&](int64_t) { return 0.0; }, "next");
    auto& diff = strads::MakeDVector<double>(
        rt, n, [&](int64_t) { return 0.0; }, "diff");
    auto* dang_once = dang_per_iter ? nullptr
                                    : &strads::MakeDVector<double>(
                                          rt, n, [&](int64_t) { return 0.0; }, "dang");
    for (int it = 1; it <= iters; ++it) {
      const auto& rk = rank;
      // dangling mass: rank of vertices without out-edges
      double dangling = 0;
      {
        // Sum over a zipped pair: a dvector of the dangling ranks
        auto& dang = dang_once ? *dang_once
                               : strads::MakeDVector<double>(
                                     rt, n, [&](int64_t) { return 0.0; }, "dang");
        strads::AsyncFor(0, n - 1, [&](int64_t v) { dang[v] = outdeg[v] == 0 ? rk[v] : 0.0; });
        dangling = strads::Sum(rt, std::as_const(dang), [](double x) { return x; });
      }
      strads::AsyncFor(0, n - 1, [&, n, damp, dangling](int64_t v) {
        double s = 0;
        for (int64_t e = in_begin[v]; e < in_begin[v + 1]; ++e) s += rk[src[e]] / outdeg[src[e]];
        next[v] = (1 - damp) / n + damp * (s + dangling / n);
        diff[v] = std::fabs(next[v] - rk[v]);
      });
      const double delta = strads::Sum(rt, std::as_const(diff), [](double x) { return x; });
      const double total = strads::Sum(rt, std::as_const(next), [](double x) { return x; });
      strads::Assign(rank, next);
      if (rt.leader()) std::printf("iter %d delta %.9e total %.12f\n", it, delta, total);
    }
    const uint64_t h = strads::Checksum(rt, {&rank});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(h));
  });
}
