// --serialize: one thread of the process runs strads code at a time (baton.h), and the result
// equals the free-running one when the engine is deterministic.
#include "strads/baton.h"

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
