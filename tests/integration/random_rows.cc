// The random-access shape of issue 19: every body writes 3 rows of a 2 000-row table and 1 row
// of a 50-row table, chosen at random per index (the same on every call). Its written blocks
// overlap so much that a schedule of 16 blocks has many rounds of few groups: --schedule-report
// shows it, and the block count the runtime chooses itself. bench/random_access_bench.sh times
// it (`time per epoch`, the epochs after the first, which plans). The rows' width is a flag
// (--width, 16 by default): the tables are dmatrix<float>s, their rows spans.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "strads/strads.h"

int main(int argc, char** argv) {
  int epochs = 2;
  int64_t bodies = 30000;
  int64_t width = 16;
  CLI::App app{"random rows: bodies writing 3 random rows of one table and 1 of another"};
  app.add_option("--epochs", epochs);
  app.add_option("--bodies", bodies);
  app.add_option("--width", width, "floats per row");
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    const auto zero = [](int64_t, std::span<float> row) {
      std::fill(row.begin(), row.end(), 0.0f);
    };
    auto& big = strads::MakeDMatrix<float>(rt, 2000, width, zero, "big");
    auto& small = strads::MakeDMatrix<float>(rt, 50, width, zero, "small");
    auto start = std::chrono::steady_clock::now();
    for (int epoch = 0; epoch < epochs; ++epoch) {
      if (epoch == 1) start = std::chrono::steady_clock::now();
      strads::AsyncFor(0, bodies - 1, [&big, &small](int64_t i) {
        std::mt19937_64 rng(static_cast<uint64_t>(i));
        const int64_t s = static_cast<int64_t>(rng() % 50);
        for (int k = 0; k < 3; ++k) {
          for (float& x : big[static_cast<int64_t>(rng() % 2000)])
            x = 0.5f * x + 0.001f * static_cast<float>(s + k);
        }
        for (float& x : small[s]) x += 0.001f;
      });
    }
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    if (rt.leader() && epochs > 1)
      std::printf("time per epoch: %.3f ms\n", 1e3 * seconds.count() / (epochs - 1));
    const uint64_t checksum = strads::Checksum(rt, {&big, &small});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
