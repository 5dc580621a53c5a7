// Rule break: globals written under --nodes P.
//  --mode rng:     a global generator picks each round's indices (driver code) for AsyncForEach.
//  --mode counter: a global counter bumped in the loop body, printed at the end.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <random>
#include <vector>

#include "strads/strads.h"

std::mt19937_64 g_rng(1234);
int64_t g_updates = 0;
double g_lr = 1.0;  // a learning-rate schedule kept in a global

int main(int argc, char** argv) {
  std::string mode = "rng";
  int64_t n = 10000;
  CLI::App app{"global write"};
  app.add_option("--mode", mode);
  app.add_option("--n", n);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<double>(
        rt, n, [](int64_t i) { return double(i % 7); }, "x");
    for (int round = 0; round < 5; ++round) {
      if (mode == "rng") {
        std::vector<int64_t> pick;
        std::vector<bool> seen(n);
        while (pick.size() < 100) {
          int64_t j = static_cast<int64_t>(g_rng() % n);
          if (!seen[j]) seen[j] = true, pick.push_back(j);
        }
        strads::AsyncForEach(pick, [&](int64_t i) { x[i] = x[i] * 0.5 + 1.0; });
      } else if (mode == "lr") {
        g_lr *= 0.5;
        const double lr = g_lr;
        strads::AsyncFor(0, n - 1, [&, lr](int64_t i) { x[i] += lr; });
      } else {
        strads::AsyncFor(0, n - 1, [&](int64_t i) {
          x[i] += 1.0;
          ++g_updates;
        });
      }
    }
    const uint64_t h = strads::Checksum(rt, {&x});
    const double total = strads::Sum(rt, std::as_const(x), [](double v) { return v; });
    if (rt.leader()) std::printf("total %.6f\n", total);
    if (rt.leader())
      std::printf("updates %lld\nchecksum: %016llx\n", (long long)g_updates, (unsigned long long)h);
  });
}
