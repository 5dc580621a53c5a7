// A mini-batch trainer: every epoch runs one AsyncFor per batch, over rotating bounds. Each
// distinct batch must be planned once (a site keeps several plans), and the site's calls must
// be numbered 0, 1, 2, ... in traces. Plans are counted, not timed: on one node reconnaissance
// runs every body of a plan once more, so runs = calls x batch + plans x batch. Used by
// porting_tests.cmake (run it on one node).
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>

#include "strads/strads.h"

int main(int argc, char** argv) {
  int epochs = 3, batches = 4;
  int64_t batch = 100;
  CLI::App app{"mini-batches: one AsyncFor per batch, rotating bounds"};
  app.add_option("--epochs", epochs);
  app.add_option("--batches", batches);
  app.add_option("--batch", batch, "bodies per batch");
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    const int64_t n = batch * batches;
    const auto& x = strads::MakeDVector<double>(
        rt, n, [](int64_t i) { return 0.001 * static_cast<double>(i); }, "x");
    auto& w = strads::MakeDVector<double>(
        rt, 16, [](int64_t) { return 1.0; }, "w");
    std::atomic<int64_t> runs{0};
    int64_t calls = 0;
    for (int epoch = 0; epoch < epochs; ++epoch)
      for (int b = 0; b < batches; ++b, ++calls)
        strads::AsyncFor(b * batch, (b + 1) * batch - 1, [&x, &w, &runs](int64_t i) {
          ++runs;
          double& wi = w[i % 16];
          wi = wi * 0.999 + x[i] * 0.01;
        });
    const int64_t plans = (runs.load() - calls * batch) / batch;
    if (rt.leader())
      std::printf("calls: %lld\nplans: %lld\n", static_cast<long long>(calls),
                  static_cast<long long>(plans));
    const uint64_t checksum = strads::Checksum(rt, {&w});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
