// Sparse logistic regression by SGD over rows on strads: Hogwild-style updates of the shared
// weights become an AsyncFor over rows (rows const, w written), the loss an accumulator.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

#include "port_data.h"
#include "strads/strads.h"

int main(int argc, char** argv) {
  int64_t n = 20000;
  int features = 2000, epochs = 5;
  uint64_t seed = 3;
  double lr = 0.05, l2 = 1e-4;
  CLI::App app{"sparse logistic regression on strads"};
  app.add_option("--rows", n);
  app.add_option("--features", features);
  app.add_option("--epochs", epochs);
  app.add_option("--data-seed", seed);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    std::vector<ports::Row> raw = ports::MakeRows(n, features, seed);
    const auto& rows = strads::MakeDVector<ports::Row>(
        rt, n, [&](int64_t i) { return raw[i]; }, "rows");
    auto& w = strads::MakeDVector<double>(
        rt, features, [](int64_t) { return 0.0; }, "w");
    auto& loss = strads::MakeAccumulator<double>(
        rt, 1, [](int64_t) { return 0.0; }, "loss");
    for (int ep = 1; ep <= epochs; ++ep) {
      loss.Add(0, -loss[0]);
      strads::AsyncFor(0, n - 1, [&, lr, l2](int64_t i) {
        const ports::Row& r = rows[i];
        double z = 0;
        for (int k = 0; k < ports::kNnz; ++k) z += w[r.idx[k]] * r.val[k];
        const double p = 1.0 / (1.0 + std::exp(-z));
        loss.Add(0, -(r.y * std::log(p + 1e-12) + (1 - r.y) * std::log(1 - p + 1e-12)));
        const double gr = p - r.y;
        for (int k = 0; k < ports::kNnz; ++k)
          w[r.idx[k]] -= lr * (gr * r.val[k] + l2 * w[r.idx[k]]);
      });
      if (rt.leader()) std::printf("epoch %d loss %.6f\n", ep, loss[0] / n);
    }
    const uint64_t h = strads::Checksum(rt, {&w});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(h));
  });
}
