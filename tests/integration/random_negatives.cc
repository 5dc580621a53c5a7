// A port of an embedding trainer whose bodies each pull their own row towards a random
// "negative" row. As first ported (default), the negative comes from a draw counter shared by
// all bodies and calls, so every run of a body (reconnaissance, then each call) draws another
// element than the plan was made from: the access check must stop it. Fixed (--fixed), the
// negative comes from a generator seeded by the index alone: the same element on every call.
// With --dynamic, DynamicAsyncFor draws per index and epoch, a new plan every call. Used by
// porting_tests.cmake.
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <random>

#include "strads/strads.h"

namespace {
constexpr int64_t kRows = 512;
}

int main(int argc, char** argv) {
  int epochs = 3;
  bool fixed = false, dynamic = false;
  CLI::App app{"random negatives: a body whose accesses change from call to call"};
  app.add_option("--epochs", epochs);
  app.add_flag("--fixed", fixed, "seed the negatives by the index");
  app.add_flag("--dynamic", dynamic, "seed them by index and epoch, in a DynamicAsyncFor");
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    auto& rows = strads::MakeDVector<double>(
        rt, kRows, [](int64_t i) { return 1.0 / static_cast<double>(i + 1); }, "rows");
    std::atomic<uint64_t> draws{0};  // the port's mistake: shared by every body and call
    for (int epoch = 0; epoch < epochs; ++epoch) {
      auto body = [&, epoch](int64_t i) {
        const uint64_t seed = dynamic ? static_cast<uint64_t>(i) * 1000003 + epoch
                              : fixed ? static_cast<uint64_t>(i)
                                      : draws.fetch_add(1);
        std::mt19937_64 rng(seed);
        const int64_t negative = static_cast<int64_t>(rng() % kRows);
        rows[i] += 0.01 * (rows[i] - rows[negative]);
      };
      if (dynamic)
        strads::DynamicAsyncFor(0, kRows - 1, body);
      else
        strads::AsyncFor(0, kRows - 1, body);
    }
    const uint64_t checksum = strads::Checksum(rt, {&rows});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
