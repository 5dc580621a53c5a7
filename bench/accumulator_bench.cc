// The cost of summing a loss in AsyncFor bodies (bench/accumulator_bench.sh): every body updates
// its own parameter and, by --sum, adds its loss term to nothing (none), to an
// accumulator<int64_t> (integer, the term scaled to fixed point) or to an accumulator<double>
// (exact sum). Prints the time per epoch after the first (which plans) and the loss.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "strads/strads.h"

int main(int argc, char** argv) {
  int epochs = 4;
  int64_t bodies = 1000000;
  std::string sum = "double";
  CLI::App app{"accumulator bench: a loss summed in AsyncFor bodies"};
  app.add_option("--epochs", epochs);
  app.add_option("--bodies", bodies);
  app.add_option("--sum", sum, "none, integer or double")
      ->check(CLI::IsMember({"none", "integer", "double"}));
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    auto& w = strads::MakeDVector<double>(
        rt, bodies, [](int64_t i) { return 1.0 + 1e-6 * static_cast<double>(i); }, "w");
    auto& real = strads::MakeAccumulator<double>(
        rt, 1, [](int64_t) { return 0.0; }, "real");
    auto& fixed = strads::MakeAccumulator<int64_t>(
        rt, 1, [](int64_t) { return 0; }, "fixed");
    const int mode = sum == "none" ? 0 : sum == "integer" ? 1 : 2;
    auto start = std::chrono::steady_clock::now();
    for (int epoch = 0; epoch < epochs; ++epoch) {
      if (epoch == 1) start = std::chrono::steady_clock::now();
      strads::AsyncFor(0, bodies - 1, [&w, &real, &fixed, mode](int64_t i) {
        const double x = 0.999 * w[i];
        w[i] = x;
        const double term = x * x;
        if (mode == 1)
          fixed.Add(0, std::llround(std::ldexp(term, 32)));
        else if (mode == 2)
          real.Add(0, term);
      });
    }
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    if (rt.leader() && epochs > 1)
      std::printf("time per epoch: %.3f ms\n", 1e3 * seconds.count() / (epochs - 1));
    if (rt.leader())
      std::printf("loss: %.17g %.17g\n", real[0], std::ldexp(static_cast<double>(fixed[0]), -32));
  });
}
