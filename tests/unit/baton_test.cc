// --serialize: one thread of the process runs strads code at a time (baton.h), and the result
// equals the free-running one when the engine is deterministic.
#include "strads/seam/baton.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "strads/strads.h"
#include "test_nodes.h"

namespace {

// The most bodies that ran at the same moment, over 2 nodes x 2 threads of the lock engine.
int MostAtOnce(bool serialize) {
  std::atomic<int> running{0}, most{0};
  std::vector<std::string> extra = {"--async-engine", "locks"};
  if (serialize) extra.push_back("--serialize");
  const int rc = strads::testing::RunNodes(
      2, 2,
      [&](strads::Runtime& rt) {
        auto& x = strads::MakeDVector<double>(
            rt, 64, [](int64_t) { return 0.0; }, "x");
        strads::AsyncFor(0, 199, [&](int64_t i) {
          const int now = ++running;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          // Long enough that the other threads get to run while this one is inside.
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          x[i % 64] += 1.0;
          --running;
        });
      },
      extra);
  strads::Baton::Enable(false);  // the flag turned it on for the whole process
  REQUIRE(rc == 0);
  return most.load();
}

}  // namespace

TEST_CASE("serialize: one body at a time across nodes and threads") {
  CHECK(MostAtOnce(/*serialize=*/true) == 1);
  // The same loop without the baton overlaps bodies: the check above can fail.
  CHECK(MostAtOnce(/*serialize=*/false) > 1);
}

TEST_CASE("baton: one holder at a time, also with more threads than cores") {
  // 6 threads on a 2-core machine: takers spin, sleep and get woken. A plain counter incremented
  // under the baton ends exact, and no two threads are ever inside at once.
  strads::Baton::Enable(true);
  constexpr int kThreads = 6, kRounds = 20000;
  std::atomic<int> inside{0}, most{0};
  long counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        strads::Baton::Held held;
        const int now = ++inside;
        most.store(std::max(most.load(), now));
        ++counter;
        --inside;
      }
    });
  }
  for (auto& t : threads) t.join();
  strads::Baton::Enable(false);
  CHECK(counter == long{kThreads} * kRounds);
  CHECK(most.load() == 1);
}
