// Rule break: a std::vector captured by reference and written in an AsyncFor body (a per-feature
// gradient sum kept as the serial program kept it), then used by the driver.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "strads/fnv1a.h"
#include "strads/strads.h"

int main(int argc, char** argv) {
  int64_t n = 200000;
  int buckets = 16;
  CLI::App app{"vector capture"};
  app.add_option("--n", n);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    const auto& x = strads::MakeDVector<double>(
        rt, n, [](int64_t i) { return double(i % 13); }, "x");
    auto& y = strads::MakeDVector<double>(
        rt, n, [](int64_t) { return 0.0; }, "y");
    std::vector<double> hist(buckets, 0.0);
    std::vector<int64_t> count(buckets, 0);
    for (int ep = 0; ep < 3; ++ep)
      strads::AsyncFor(0, n - 1, [&](int64_t i) {
        y[i] = x[i] * 2;
        hist[i % buckets] += x[i];
        ++count[i % buckets];
      });
    double total = 0;
    int64_t c = 0;
    for (int b = 0; b < buckets; ++b) total += hist[b], c += count[b];
    const uint64_t h = strads::Checksum(rt, {&y});
    std::printf(
        "node %d hist total %.1f count %lld (serial: %.1f %lld) checksum: %016llx\n", rt.node(),
        total, (long long)c,
        3.0 *
            [&] {
              double s = 0;
              for (int64_t i = 0; i < n; ++i) s += i % 13;
              return s;
            }(),
        (long long)(3 * n), (unsigned long long)h);
  });
}
