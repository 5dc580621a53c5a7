// accumulator<T>: its serial equivalent (a body reads the call's start plus its own adds, deltas
// are added at the call's end), bit for bit on any nodes, threads and engine, and no conflicts
// from it.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "async_loop.h"
#include "strads/seam/ordering.h"
#include "strads/seam/policy_registry.h"
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
  std::vector<int64_t> own;   // what it read after its own add
};

// Bodies read one counter, add to another and read that one back, and write only their own
// elements of `seen` and `own`.
Outcome RunLoop(int nodes, int threads, std::vector<std::string> extra = {}) {
  Outcome out;
  std::mutex mu;
  const int rc = strads::testing::RunNodes(
      nodes, threads,
      [&](strads::Runtime& rt) {
        auto& totals = strads::MakeAccumulator<int64_t>(
            rt, kCounters, [](int64_t k) { return 100 * k; }, "totals");
        auto& seen = strads::MakeDVector<int64_t>(
            rt, kBodies, [](int64_t) { return 0; }, "seen");
        auto& own = strads::MakeDVector<int64_t>(
            rt, kBodies, [](int64_t) { return 0; }, "own");
        for (int call = 0; call < kCalls; ++call)
          strads::AsyncFor(0, kBodies - 1, [&, call](int64_t i) {
            seen[i] = totals[(i + 3) % kCounters];
            totals.Add(CounterOf(i), DeltaOf(i, call));
            own[i] = totals[CounterOf(i)];
          });
        totals.Add(0, 1);  // driver code: applies at once, on every node alike
        std::vector<int64_t> s, o;
        for (int64_t i = 0; i < kBodies; ++i) s.push_back(seen[i]), o.push_back(own[i]);
        if (rt.leader()) {
          std::lock_guard lock(mu);
          out.counters.assign(totals.data(), totals.data() + kCounters);
          out.seen = s;
          out.own = o;
        }
      },
      extra);
  REQUIRE(rc == 0);
  return out;
}

// The serial equivalent written out: each body works on its own copy of the call's start.
Outcome Serial() {
  Outcome out;
  std::vector<int64_t> totals(kCounters);
  for (int64_t k = 0; k < kCounters; ++k) totals[k] = 100 * k;
  out.seen.assign(kBodies, 0);
  out.own.assign(kBodies, 0);
  for (int call = 0; call < kCalls; ++call) {
    const std::vector<int64_t> start = totals;
    for (int64_t i = 0; i < kBodies; ++i) {
      std::vector<int64_t> mine = start;
      out.seen[i] = mine[(i + 3) % kCounters];
      mine[CounterOf(i)] += DeltaOf(i, call);
      totals[CounterOf(i)] += DeltaOf(i, call);
      out.own[i] = mine[CounterOf(i)];
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
      CHECK(got.own == want.own);
    }
}

TEST_CASE("accumulator: a body reads its own adds, and no other body's") {
  const Outcome want = Serial();
  // Most bodies add a non-zero delta, so reads that missed them would differ.
  int64_t own_add_shows = 0;
  for (int64_t i = 0; i < kBodies; ++i) own_add_shows += DeltaOf(i, kCalls - 1) != 0;
  REQUIRE(own_add_shows > kBodies / 2);
  for (const auto& extra : std::vector<std::vector<std::string>>{
           {}, {"--async-engine", "locks"}, {"--blocks", "3"}, {"--access-check", "all"}}) {
    CAPTURE(extra.size() > 0 ? extra[0] : "");
    const Outcome got = RunLoop(2, 2, extra);
    CHECK(got.own == want.own);
    CHECK(got.seen == want.seen);
  }
}

TEST_CASE("accumulator: a body with more adds than the inline undo log, on 2-byte elements") {
  // 40 adds a body (the undo log keeps 16 inline, strads/internal/body_adds.h) to 5 int16_t
  // elements, whose 8-byte undo entries overlap their neighbours.
  constexpr int64_t kSmall = 5, kAdds = 40;
  const auto delta = [](int64_t i, int64_t k) { return static_cast<int16_t>((i + 3 * k) % 7 - 3); };
  std::vector<int64_t> want(kBodies);
  for (int64_t i = 0; i < kBodies; ++i) {
    std::vector<int64_t> mine(kSmall, 1);
    for (int64_t k = 0; k < kAdds; ++k) mine[(i + k) % kSmall] += delta(i, k);
    for (int64_t e = 0; e < kSmall; ++e) want[i] = want[i] * 31 + mine[e];
  }
  std::vector<int64_t> got;
  std::mutex mu;
  const int rc = strads::testing::RunNodes(2, 2, [&](strads::Runtime& rt) {
    auto& a = strads::MakeAccumulator<int16_t>(rt, kSmall, [](int64_t) { return 1; });
    auto& out = strads::MakeDVector<int64_t>(
        rt, kBodies, [](int64_t) { return 0; }, "out");
    strads::AsyncFor(0, kBodies - 1, [&](int64_t i) {
      for (int64_t k = 0; k < kAdds; ++k) a.Add((i + k) % kSmall, delta(i, k));
      int64_t h = 0;
      for (int64_t e = 0; e < kSmall; ++e) h = h * 31 + a[e];
      out[i] = h;
    });
    std::vector<int64_t> all;
    for (int64_t i = 0; i < kBodies; ++i) all.push_back(out[i]);
    if (rt.leader()) {
      std::lock_guard lock(mu);
      got = all;
    }
  });
  REQUIRE(rc == 0);
  CHECK(got == want);
}

TEST_CASE("accumulator: reconnaissance bodies read their own adds, as executed bodies do") {
  // The element a body writes depends on whether its read shows its add: were reconnaissance
  // to read otherwise, the access check would stop the run (exit 2).
  for (const auto& extra : std::vector<std::vector<std::string>>{{"--access-check", "all"},
                                                                 {"--async-engine", "locks"}}) {
    CAPTURE(extra[0]);
    std::vector<int64_t> writes, total;
    std::mutex mu;
    const int rc = strads::testing::RunNodes(
        2, 2,
        [&](strads::Runtime& rt) {
          auto& a = strads::MakeAccumulator<int64_t>(rt, 1, [](int64_t) { return 7; });
          auto& w = strads::MakeDVector<int64_t>(
              rt, kBodies, [](int64_t) { return 0; }, "w");
          for (int call = 0; call < kCalls; ++call)
            strads::AsyncFor(0, kBodies - 1, [&](int64_t i) {
              const int64_t before = a[0];
              a.Add(0, 1);
              w[a[0] == before + 1 ? i : (i + 1) % kBodies] += 1;
            });
          std::vector<int64_t> all;
          for (int64_t i = 0; i < kBodies; ++i) all.push_back(w[i]);
          if (rt.leader()) {
            std::lock_guard lock(mu);
            writes = all;
            total.assign(a.data(), a.data() + 1);
          }
        },
        extra);
    CHECK(rc == 0);
    CHECK(writes == std::vector<int64_t>(kBodies, kCalls));
    CHECK(total == std::vector<int64_t>{7 + kCalls * kBodies});
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

TEST_CASE("accumulator: adds are not conflicts, so the plan puts bodies on every thread") {
  // Were the accumulator a written DDS, every body would touch its one block: one group a
  // round, placed on one worker. (Which thread then runs a group is the round's sharing's
  // choice, AsyncLoop::Execute, so the plan is what is checked, not the threads that ran.)
  std::set<int32_t> workers;
  size_t most_groups = 0;
  const int rc = strads::testing::RunNodes(1, 2, [&](strads::Runtime& rt) {
    auto& totals = strads::MakeAccumulator<int64_t>(
        rt, kCounters, [](int64_t k) { return 100 * k; }, "totals");
    auto& seen = strads::MakeDVector<int64_t>(
        rt, kBodies, [](int64_t) { return 0; }, "seen");
    const auto body = [&](int64_t i) {
      seen[i] = totals[(i + 3) % kCounters];
      totals.Add(CounterOf(i), DeltaOf(i, 0));
    };
    strads::AsyncLoop& loop =
        strads::AsyncLoop::At(rt, {"accumulator_adds", 1}, 0, kBodies - 1, nullptr);
    // Each body ended as AsyncFor ends it (RunOneOf), so that its adds' undo log is undone.
    auto one_body = strads::internal::RunOneOf(body);
    loop.Prepare(rt, one_body);
    for (const auto& round : loop.schedule().rounds) {
      most_groups = std::max(most_groups, round.size());
      for (const strads::Group& g : round) workers.insert(g.worker);
    }
  });
  REQUIRE(rc == 0);
  CHECK(most_groups > 1);
  CHECK(workers == std::set<int32_t>{0, 1});
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

TEST_CASE("accumulator: a SyncFor mini-batch reads its own adds, and no other batch's") {
  for (bool re : {false, true})
    for (int threads : {1, 2}) {
      CAPTURE(re);
      CAPTURE(threads);
      // Per call and batch (by its first index): its size, and what it read of its first
      // element's counter after adding its deltas.
      std::vector<std::map<int64_t, std::pair<int64_t, int64_t>>> read(kCalls);
      std::mutex mu;
      const int rc = strads::testing::RunNodes(2, threads, [&](strads::Runtime& rt) {
        const auto& data = strads::MakeDVector<int64_t>(rt, kBodies, [](int64_t i) { return i; });
        auto& hist = strads::MakeAccumulator<int64_t>(rt, kCounters, [](int64_t) { return 0; });
        for (int call = 0; call < kCalls; ++call)
          strads::SyncFor(
              data, 64,
              [&hist, &mu, &read, call](std::span<const int64_t> batch, int64_t first) {
                for (int64_t i : batch) hist.Add(CounterOf(i), DeltaOf(i, call));
                std::lock_guard lock(mu);
                read[static_cast<size_t>(call)][first] = {static_cast<int64_t>(batch.size()),
                                                          hist[CounterOf(batch[0])]};
              },
              strads::BSP(), re);
      });
      REQUIRE(rc == 0);
      // The serial equivalent: the call's start plus the batch's own deltas.
      std::vector<int64_t> start(kCounters, 0);
      for (int call = 0; call < kCalls; ++call) {
        int64_t batched = 0;
        for (const auto& [first, batch] : read[static_cast<size_t>(call)]) {
          int64_t want = start[CounterOf(first)];
          for (int64_t i = first; i < first + batch.first; ++i)
            if (CounterOf(i) == CounterOf(first)) want += DeltaOf(i, call);
          CAPTURE(first);
          CHECK(batch.second == want);
          batched += batch.first;
        }
        CHECK(batched == kBodies);
        for (int64_t i = 0; i < kBodies; ++i) start[CounterOf(i)] += DeltaOf(i, call);
      }
    }
}

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

namespace {

// A loss summed in AsyncFor bodies (accumulator<double>): body i moves its own parameter and
// adds a term of a magnitude that varies over 40 binary orders, so that the rounded sum of the
// terms depends on their order.
double LossTerm(double w, int64_t i) {
  return w * w * std::ldexp(1.0, static_cast<int>(i % 40) - 20);
}
double Step(double w, int64_t i) { return 0.875 * w + 0.01 * static_cast<double>(i % 3); }

std::vector<double> RealLoop(int nodes, int threads, std::vector<std::string> extra = {}) {
  std::vector<double> out;
  std::mutex mu;
  const int rc = strads::testing::RunNodes(
      nodes, threads,
      [&](strads::Runtime& rt) {
        auto& w = strads::MakeDVector<double>(
            rt, kBodies, [](int64_t i) { return 1.0 + 0.001 * static_cast<double>(i); }, "w");
        auto& loss = strads::MakeAccumulator<double>(
            rt, 2, [](int64_t k) { return 0.1 * static_cast<double>(k); }, "loss");
        auto& mine = strads::MakeDVector<double>(
            rt, kBodies, [](int64_t) { return 0.0; }, "mine");
        std::vector<double> seen;
        for (int call = 0; call < kCalls; ++call) {
          strads::AsyncFor(0, kBodies - 1, [&w, &loss, &mine](int64_t i) {
            w[i] = Step(w[i], i);
            loss.Add(i % 2, LossTerm(w[i], i));
            mine[i] = loss[i % 2];  // the call's start plus this body's term, rounded
          });
          seen.push_back(loss[0]);
          seen.push_back(loss[1]);
        }
        for (int64_t i = 0; i < kBodies; i += 97) seen.push_back(mine[i]);
        if (rt.leader()) {
          std::lock_guard lock(mu);
          out = seen;
        }
      },
      extra);
  REQUIRE(rc == 0);
  return out;
}

// The serial twin, written with the header's serial equivalent: per call and element, the
// start value and the call's terms summed exactly, rounded once; a body's own read is its
// rounded add to the start value.
std::vector<double> RealSerial() {
  std::vector<double> w(kBodies), loss = {0.0, 0.1}, mine(kBodies), out;
  for (int64_t i = 0; i < kBodies; ++i) w[i] = 1.0 + 0.001 * static_cast<double>(i);
  for (int call = 0; call < kCalls; ++call) {
    std::vector<strads::ExactSum<double>> sums(2);
    for (size_t k = 0; k < 2; ++k) sums[k].Add(loss[k]);
    for (int64_t i = 0; i < kBodies; ++i) {
      w[i] = Step(w[i], i);
      sums[i % 2].Add(LossTerm(w[i], i));
      mine[i] = loss[i % 2] + LossTerm(w[i], i);
    }
    for (size_t k = 0; k < 2; ++k) out.push_back(loss[k] = sums[k].Value());
  }
  for (int64_t i = 0; i < kBodies; i += 97) out.push_back(mine[i]);
  return out;
}

bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("accumulator<double>: a loss summed in bodies has the same bits on any nodes/threads") {
  const std::vector<double> want = RealSerial();
  for (int nodes : {1, 2, 4})
    for (int threads : {1, 2}) {
      CAPTURE(nodes);
      CAPTURE(threads);
      CHECK(SameBits(RealLoop(nodes, threads), want));
    }
  CHECK(SameBits(RealLoop(2, 2, {"--async-engine", "locks"}), want));
  CHECK(SameBits(RealLoop(2, 2, {"--blocks", "3"}), want));
  // Without the exact sum, the order of the terms shows in the bits: plain `+=` over the last
  // call's terms in index order and in reverse index order differ.
  std::vector<double> w(kBodies), terms;
  for (int64_t i = 0; i < kBodies; ++i) w[i] = 1.0 + 0.001 * static_cast<double>(i);
  for (int call = 0; call < kCalls; ++call)
    for (int64_t i = 0; i < kBodies; ++i) w[i] = Step(w[i], i);
  for (int64_t i = 0; i < kBodies; i += 2) terms.push_back(LossTerm(w[i], i));
  double forward = 0, backward = 0;
  for (double t : terms) forward += t;
  for (size_t k = terms.size(); k-- > 0;) backward += terms[k];
  CHECK(forward != backward);
}

TEST_CASE("accumulator<double>: SyncFor bodies sum a loss with the same bits in every mode") {
  auto run = [](int nodes, int threads, strads::SyncOption option) {
    double out = 0;
    std::mutex mu;
    const int rc = strads::testing::RunNodes(nodes, threads, [&](strads::Runtime& rt) {
      const auto& data = strads::MakeDVector<int64_t>(rt, kBodies, [](int64_t i) { return i; });
      auto& loss = strads::MakeAccumulator<double>(rt, 1, [](int64_t) { return 0.0; });
      strads::SyncFor(
          data, 64,
          [&loss](std::span<const int64_t> batch) {
            for (int64_t i : batch) loss.Add(0, LossTerm(1.0 + 1e-3 * static_cast<double>(i), i));
          },
          option);
      if (rt.leader()) {
        std::lock_guard lock(mu);
        out = loss[0];
      }
    });
    REQUIRE(rc == 0);
    return out;
  };
  strads::ExactSum<double> want;
  for (int64_t i = 0; i < kBodies; ++i) want.Add(LossTerm(1.0 + 1e-3 * static_cast<double>(i), i));
  for (int nodes : {1, 2, 4})
    for (int threads : {1, 2}) {
      CAPTURE(nodes);
      CAPTURE(threads);
      CHECK(run(nodes, threads, strads::BSP()) == want.Value());
      CHECK(run(nodes, threads, strads::Hybrid()) == want.Value());
    }
}

namespace outcome_capture {

// The outcome digests of every operator of node 0, as Record would log them.
std::mutex captured_mu;
std::vector<uint64_t> captured;

class CapturingPolicy : public strads::LiveOrderingPolicy {
 public:
  explicit CapturingPolicy(int node) : node_(node) {}
  void OperatorOutcome(const strads::OperatorSite&,
                       strads::FunctionRef<uint64_t()> digest) override {
    const uint64_t d = digest();
    if (node_ != 0) return;
    std::lock_guard lock(captured_mu);
    captured.push_back(d);
  }

 private:
  int node_;
};

const bool registered = strads::RegisterOrderingPolicy(
    "outcome_capture", [](const strads::PolicyNode& node, const std::string&) {
      return std::unique_ptr<strads::OrderingPolicy>(new CapturingPolicy(node.node));
    });

// An AsyncFor whose DDS writes do not depend on `delta`, its accumulator adds do.
std::vector<uint64_t> Digests(int64_t delta) {
  captured.clear();
  ::setenv("STRADS_POLICY", "outcome_capture", 1);
  const int rc = strads::testing::RunNodes(2, 2, [delta](strads::Runtime& rt) {
    auto& totals = strads::MakeAccumulator<int64_t>(
        rt, kCounters, [](int64_t) { return 0; }, "totals");
    auto& out = strads::MakeDVector<int64_t>(
        rt, kBodies, [](int64_t) { return 0; }, "out");
    strads::AsyncFor(0, kBodies - 1, [&](int64_t i) {
      out[i] = i;
      totals.Add(CounterOf(i), delta);
    });
  });
  ::unsetenv("STRADS_POLICY");
  CHECK(rc == 0);
  return captured;
}

}  // namespace outcome_capture

TEST_CASE("the outcome digest a recording keeps covers accumulators, which no DDS write lists") {
  REQUIRE(outcome_capture::registered);
  const auto one = outcome_capture::Digests(1), again = outcome_capture::Digests(1),
             two = outcome_capture::Digests(2);
  REQUIRE(!one.empty());
  CHECK(one == again);  // a digest of the values: the same run gives the same digests
  CHECK(one != two);    // only the accumulator's values differ
}

// Every node holds a whole accumulator: a size past memory is refused before anything is
// allocated, naming it (before: std::bad_alloc, or the OOM killer), on any node count.
TEST_CASE("an accumulator past the machine's memory is refused naming it, whole on each node") {
  for (const int nodes : {1, 2}) {
    std::string error;
    const int rc = strads::testing::RunNodes(nodes, 1, [&](strads::Runtime& rt) {
      try {
        strads::MakeAccumulator<int64_t>(
            rt, int64_t{1} << 40, [](int64_t) { return 0; }, "nk");
      } catch (const strads::UsageError& e) {
        if (rt.leader()) error = e.what();
      }
    });
    CHECK(rc == 0);
    CHECK_MESSAGE(error.find("accumulator 'nk' of 1099511627776 elements of 8 bytes: 8.8e+03 GB "
                             "on each of " +
                             std::to_string(nodes) + " node(s)") == 0,
                  error);
  }
}

// The nodes of --nodes P share one machine: an accumulator a third of its memory fits one node
// but not four, each with a whole copy (before, each node checked its own copy alone).
TEST_CASE("an accumulator that fits one node but not --nodes 4 in one process is refused") {
  const double memory =
      static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  const auto third = static_cast<int64_t>(memory / 3 / sizeof(int64_t));
  std::string error;
  const int rc = strads::testing::RunNodes(4, 1, [&](strads::Runtime& rt) {
    try {
      strads::MakeAccumulator<int64_t>(
          rt, third, [](int64_t) { return 0; }, "totals");
    } catch (const strads::UsageError& e) {
      if (rt.leader()) error = e.what();
    }
  });
  CHECK(rc == 0);
  CHECK_MESSAGE(error.find("accumulator 'totals' of " + std::to_string(third) + " elements") == 0,
                error);
  CHECK_MESSAGE(error.find("for the 4 nodes of this process, over this machine's memory") !=
                    std::string::npos,
                error);
}
