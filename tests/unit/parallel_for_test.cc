// ParallelFor: every piece runs once, spread over the node's threads, and pieces that write
// disjoint data give the serial loop's result for any thread count.
#include "strads/parallel_for.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "test_nodes.h"

TEST_CASE("ParallelFor: every piece runs once, piece i on thread i % threads") {
  for (int threads : {1, 3}) {
    std::vector<int> runs(1000, 0);
    std::vector<std::thread::id> ran_on(1000);
    CHECK(strads::testing::RunNodes(1, threads, [&](strads::Runtime&) {
            strads::ParallelFor(1000, [&](int64_t i) {
              ++runs[static_cast<size_t>(i)];
              ran_on[static_cast<size_t>(i)] = std::this_thread::get_id();
            });
          }) == 0);
    CHECK(std::count(runs.begin(), runs.end(), 1) == 1000);
    CHECK(std::set<std::thread::id>(ran_on.begin(), ran_on.end()).size() ==
          static_cast<size_t>(threads));
    for (size_t i = static_cast<size_t>(threads); i < ran_on.size(); ++i)
      CHECK(ran_on[i] == ran_on[i % static_cast<size_t>(threads)]);
  }
}

TEST_CASE("ParallelFor: an exception in a piece reaches the caller") {
  bool caught = false;
  strads::testing::RunNodes(1, 2, [&](strads::Runtime&) {
    try {
      strads::ParallelFor(10, [](int64_t i) {
        if (i == 7) throw std::runtime_error("piece 7");
      });
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "piece 7";
    }
  });
  CHECK(caught);
}
