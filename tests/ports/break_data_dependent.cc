// Rule break: data-dependent control flow.
//  --mode value:  a body decides what it writes from a value the loop writes.
//  --mode late:   the access set changes only from epoch --late on (past the sampled checks).
//  --mode leader: an operator (Sum) called inside if (rt.leader()).
//  --mode epochbound: the loop's bound depends on a node-local value (node id)
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "strads/strads.h"

int main(int argc, char** argv) {
  std::string mode = "value";
  int64_t n = 10000;
  int epochs = 8, late = 5;
  CLI::App app{"data dependent"};
  app.add_option("--mode", mode);
  app.add_option("--n", n);
  app.add_option("--epochs", epochs);
  app.add_option("--late", late);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<double>(
        rt, n, [](int64_t i) { return double(i % 5) - 2.0; }, "x");
    auto& y = strads::MakeDVector<double>(
        rt, n, [](int64_t) { return 0.0; }, "y");
    // input data the loop never writes, but held by a non-const reference (rule 4 forgotten)
    auto& idx = strads::MakeDVector<int64_t>(
        rt, n, [n](int64_t i) { return (i * 7919) % n; }, "idx");
    for (int ep = 1; ep <= epochs; ++ep) {
      if (mode == "value") {
        strads::AsyncFor(0, n - 1, [&](int64_t i) {
          if (x[i] > 0) y[(i * 7919) % n] += x[i];  // which y depends on x, which the loop writes
          x[i] -= 1.0;
        });
      } else if (mode == "late") {
        strads::AsyncFor(0, n - 1, [&, ep](int64_t i) {
          const int64_t j = ep >= late ? (i * 7919 + 1) % n : i;
          y[j] += 0.5 * x[i];
        });
      } else if (mode == "leader") {
        strads::AsyncFor(0, n - 1, [&](int64_t i) { y[i] += x[i]; });
        if (rt.leader()) {
          const double s = strads::Sum(rt, std::as_const(y), [](double v) { return v; });
          std::printf("epoch %d sum %.3f\n", ep, s);
        }
      } else if (mode == "nonconst") {
        strads::AsyncFor(0, n - 1, [&](int64_t i) { y[idx[i]] += x[i]; });
      } else if (mode == "epochbound") {
        strads::AsyncFor(0, n - 1 - rt.node(), [&](int64_t i) { y[i] += x[i]; });
      }
    }
    const uint64_t h = strads::Checksum(rt, {&x, &y});
    if (rt.leader()) std::printf("checksum: %016llx\n", (unsigned long long)h);
  });
}
