// DriverAccessHook (core/src/driver_access_hook.h): element reads in driver code under several
// nodes: the values are the owners', and a block is broadcast once while it is current, not
// once an element; operators, Transform and a mutable local() make it current again.
#include "driver_access_hook.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "node_context.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace {

using strads::Runtime;

constexpr int kNodes = 2;
constexpr int64_t kSize = 100000;  // doubles: 8192 to a 64 KB block, 7 blocks a node

uint64_t Calls(Runtime& rt) { return rt.context().collectives().calls(); }

// Runs `driver` on kNodes in-process nodes and returns each node's result.
template <class T, class Driver>
std::vector<T> OnNodes(Driver driver) {
  std::mutex mu;
  std::vector<T> results(kNodes);
  const int rc = strads::testing::RunNodes(kNodes, 1, [&](Runtime& rt) {
    T result = driver(rt);
    std::lock_guard<std::mutex> lock(mu);
    results[rt.node()] = std::move(result);
  });
  REQUIRE(rc == 0);
  return results;
}

}  // namespace

TEST_CASE("driver reads: the owners' values, a broadcast a block rather than an element") {
  struct Seen {
    double sum = 0;
    uint64_t calls = 0;
  };
  const auto seen = OnNodes<Seen>([](Runtime& rt) {
    const auto& x = strads::MakeDVector<double>(
        rt, kSize, [](int64_t i) { return 0.5 * i; }, "x");
    Seen s;
    const uint64_t before = Calls(rt);
    for (int64_t k = 0; k < kSize; ++k) s.sum += x[(k * 7919) % kSize];  // scattered order
    s.calls = Calls(rt) - before;
    return s;
  });
  for (const Seen& s : seen) {
    CHECK(s.sum == 0.5 * (kSize - 1) * kSize / 2);
    // 7 blocks in each node's 50000 elements; one broadcast an element made 100000 calls.
    CHECK(s.calls == 14);
  }
}

TEST_CASE("driver reads: blocks are read again after an operator, Transform or local()") {
  const auto seen = OnNodes<std::vector<double>>([](Runtime& rt) {
    auto& x = strads::MakeDVector<double>(
        rt, kSize, [](int64_t i) { return 1.0 * i; }, "x");
    const auto& read = x;
    std::vector<double> values;
    const int64_t far = kSize - 1, near = 0;  // owned by the last node, by the first
    values.push_back(read[far] + read[near]);
    strads::AsyncFor(0, kSize - 1, [&x](int64_t i) { x[i] = x[i] + 1; });
    values.push_back(read[far] + read[near]);
    strads::Transform(x, [](double& v) { v *= 2; });  // no message
    values.push_back(read[far] + read[near]);
    for (double& v : x.local()) v += 10;  // each node its own part, no message
    values.push_back(read[far] + read[near]);
    x[far] = -1;  // a driver write: every node writes its copy
    values.push_back(read[far] + read[near]);
    return values;
  });
  const double f = kSize - 1;
  const std::vector<double> expected = {f, (f + 1) + 1, 2 * (f + 1) + 2, 2 * (f + 1) + 2 + 20,
                                        -1 + 2 + 10};
  for (const auto& values : seen) CHECK(values == expected);
}
