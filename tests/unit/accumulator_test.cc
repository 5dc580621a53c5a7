// accumulator<T>: its serial equivalent (reads see the call's start, deltas added at the call's
// end), bit for bit on any nodes, threads and engine, and no conflicts from it.
#include <doctest/doctest.h>

#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "strads/strads.h"
#include "test_nodes.h"

namespace {

constexpr int64_t kBodies = 6000;
constexpr int64_t kCounters = 13;
constexpr int kCalls = 3;

int64_t CounterOf(int64_t i) { return (i * 7 + i / 5) % kCounters; }
int64_t DeltaOf(int64_t i, int call) { return (i % 5) - 2 + call; }

struct Outcome {
  std::vector<int64_t> counters;
  std::vector<int64_t> seen;  // what each body read from the accumulator in the last call
  size_t threads_used = 0;
};

// Bodies read one counter, write only their own element of `seen` and add to another counter.
Outcome RunLoop(int nodes, int threads, std::vector<std::string> extra = {}) {
  Outcome out;
  std::mutex mu;
  std::set<std::thread::id> used;
  const int rc = strads::testing::RunNodes(
      nodes, threads,
      [&](strads::Runtime& rt) {
        auto& totals = strads::MakeAccumulator<int64_t>(
            rt, kCounters, [](int64_t k) { return 100 * k; }, "totals");
        auto& seen = strads::MakeDVector<int64_t>(
            rt, kBodies, [](int64_t) { return 0; }, "seen");
        for (int call = 0; call < kCalls; ++call)
          strads::AsyncFor(0, kBodies - 1, [&, call](int64_t i) {
            seen[i] = totals[(i + 3) % kCounters];
            totals.Add(CounterOf(i), DeltaOf(i, call));
            if (call == kCalls - 1) {
              std::lock_guard lock(mu);
              used.insert(std::this_thread::get_id());
            }
          });
        totals.Add(0, 1);  // driver code: applies at once, on every node alike
        std::vector<int64_t> s;
        for (int64_t i = 0; i < kBodies; ++i) s.push_back(seen[i]);
        if (rt.leader()) {
          std::lock_guard lock(mu);
          out.counters.assign(totals.data(), totals.data() + kCounters);
          out.seen = s;
        }
      },
      extra);
  REQUIRE(rc == 0);
  out.threads_used = used.size();
  return out;
}

// The serial equivalent written out: each call reads a copy taken before it.
Outcome Serial() {
  Outcome out;
  std::vector<int64_t> totals(kCounters);
  for (int64_t k = 0; k < kCounters; ++k) totals[k] = 100 * k;
  out.seen.assign(kBodies, 0);
  for (int call = 0; call < kCalls; ++call) {
    const std::vector<int64_t> start = totals;
    for (int64_t i = 0; i < kBodies; ++i) {
      out.seen[i] = start[(i + 3) % kCounters];
      totals[CounterOf(i)] += DeltaOf(i, call);
    }
  }
  totals[0] += 1;
  out.counters = totals;
  return out;
}

}  // namespace

TEST_CASE("accumulator: a call equals its serial equivalent on any nodes and threads") {
  const Outcome want = Serial();
  for (int nodes : {1, 2, 4})
    for (int threads : {1, 2}) {
      CAPTURE(nodes);
      CAPTURE(threads);
      const Outcome got = RunLoop(nodes, threads);
      CHECK(got.counters == want.counters);
      CHECK(got.seen == want.seen);
    }
}

TEST_CASE("accumulator: the lock engine adds the same deltas") {
  const Outcome want = Serial();
  for (int nodes : {1, 2}) {
    CAPTURE(nodes);
    const Outcome got = RunLoop(nodes, 2, {"--async-engine", "locks"});
    CHECK(got.counters == want.counters);
    CHECK(got.seen == want.seen);
  }
}

TEST_CASE("accumulator: adds are not conflicts, so the bodies run on every thread") {
  // Were the accumulator a written DDS, every body would touch its one block: one group, run by
  // one thread.
  CHECK(RunLoop(1, 2).threads_used == 2);
}

namespace {

// A histogram of the data, counted by SyncFor bodies (with reconnaissance when `re`).
std::vector<int64_t> SyncHistogram(int nodes, int threads, strads::SyncOption option, bool re) {
  std::vector<int64_t> out;
  std::mutex mu;
  const int rc = strads::testing::RunNodes(nodes, threads, [&](strads::Runtime& rt) {
    const auto& data = strads::MakeDVector<int64_t>(rt, kBodies, [](int64_t i) { return i; });
    auto& hist = strads::MakeAccumulator<int64_t>(rt, kCounters, [](int64_t) { return 0; });
    for (int call = 0; call < kCalls; ++call)
      strads::SyncFor(
          data, 64,
          [&hist, call](std::span<const int64_t> batch) {
            for (int64_t i : batch) hist.Add(CounterOf(i), DeltaOf(i, call));
          },
          option, re);
    if (rt.leader()) {
      std::lock_guard lock(mu);
      out.assign(hist.data(), hist.data() + kCounters);
    }
  });
  REQUIRE(rc == 0);
  return out;
}

}  // namespace

TEST_CASE("accumulator: SyncFor bodies add every delta once, on any nodes, threads and mode") {
  std::vector<int64_t> want(kCounters, 0);
  for (int call = 0; call < kCalls; ++call)
    for (int64_t i = 0; i < kBodies; ++i) want[CounterOf(i)] += DeltaOf(i, call);
  for (int nodes : {1, 2})
    for (int threads : {1, 2})
      for (bool re : {false, true}) {
        CAPTURE(nodes);
        CAPTURE(threads);
        CAPTURE(re);
        CHECK(SyncHistogram(nodes, threads, strads::BSP(), re) == want);
        CHECK(SyncHistogram(nodes, threads, strads::SSP(1), re) == want);
        CHECK(SyncHistogram(nodes, threads, strads::Hybrid(), re) == want);
      }
}
