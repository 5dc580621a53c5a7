// A tiny strads program: AsyncFor updates of a shared vector; prints `epoch N sum S` lines and
// a checksum, as the dual tests compare.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "strads/strads.h"

int main(int argc, char** argv) {
  int epochs = 2;
  CLI::App app{"a tiny strads trainer"};
  app.add_option("--epochs", epochs);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    const auto& x = strads::MakeDVector<double>(
        rt, 4000, [](int64_t i) { return std::sin(0.1 * i); }, "x");
    auto& w = strads::MakeDVector<double>(
        rt, 64, [](int64_t) { return 1.0; }, "w");
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      strads::AsyncFor(0, x.size() - 1, [&x, &w](int64_t i) {
        double& wi = w[(i * 7) % 64];
        wi = wi * 0.999 + x[i] * 0.01;
      });
      const double sum = strads::Sum(rt, w, [](double v) { return v; });
      if (rt.leader()) std::printf("epoch %d sum %.17g\n", epoch, sum);
    }
    const uint64_t checksum = strads::Checksum(rt, {&w});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
