// AsyncForEach: an AsyncFor over an index set that changes from call to call equals the serial
// run in its reported order, for any nodes and threads, and plans in work proportional to the
// set (counted, not timed).
#include "index_set_loop.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <mutex>
#include <random>
#include <source_location>
#include <string>
#include <utility>

#include "conflicting_edges.h"
#include "node_context.h"
#include "stderr_capture.h"
#include "strads/fnv1a.h"
#include "strads/strads.h"
#include "test_nodes.h"
#include "thread_pool.h"

namespace {

constexpr int64_t kVertices = 400;
constexpr int64_t kRange = 1000000, kPool = 20000, kSetSize = 3000;

strads::testing::Edge EdgeAt(int64_t i) { return strads::testing::EdgeAt(i, kVertices); }
using strads::testing::Update;

// Call c's set: `count` distinct indices of [0, range), seeded by c, drawn from a pool of
// `pool` (so that later calls meet indices earlier calls ran), in a shuffled order.
std::vector<int64_t> SetOfCall(int c, int64_t count, int64_t range, int64_t pool) {
  std::mt19937_64 rng(1000 + c);
  std::vector<int64_t> set;
  std::vector<char> taken(static_cast<size_t>(pool), 0);
  while (static_cast<int64_t>(set.size()) < count) {
    const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(pool));
    if (taken[static_cast<size_t>(k)]++) continue;
    set.push_back(k * (range / pool));
  }
  return set;
}

// The vertices U and V, and how often each index of the range ran: the loop updates them.
struct EdgeModel {
  explicit EdgeModel(strads::Runtime& rt)
      : U(strads::MakeDVector<double>(
            rt, kVertices, [](int64_t v) { return 1.0 + v; }, "U")),
        V(strads::MakeDVector<double>(
            rt, kVertices, [](int64_t v) { return 2.0 - v; }, "V")),
        visits(strads::MakeDVector<int32_t>(
            rt, kRange, [](int64_t) { return 0; }, "visits")) {}
  void Visit(const std::vector<int64_t>& set, std::source_location where) {
    strads::AsyncForEach(
        set,
        [this](int64_t i) {
          const auto e = EdgeAt(i);
          Update(U[e.a], V[e.b], i);
          ++visits[i];
        },
        where);
  }
  strads::dvector<double>& U;
  strads::dvector<double>& V;
  strads::dvector<int32_t>& visits;
};

struct Outcome {
  uint64_t checksum = 0;
  std::vector<std::vector<int64_t>> orders;  // per call
  std::vector<double> x;
  int64_t visits_wrong = -1;
  strads::IndexSetCounters counters;
};

Outcome RunSets(int nodes, int threads, int calls, std::vector<std::string> extra = {}) {
  Outcome out;
  std::mutex mu;
  const int rc = strads::testing::RunNodes(
      nodes, threads,
      [&](strads::Runtime& rt) {
        EdgeModel model(rt);
        auto& U = model.U;
        auto& V = model.V;
        auto& visits = model.visits;
        std::vector<std::vector<int64_t>> orders;
        const auto where = std::source_location::current();
        for (int c = 0; c < calls; ++c) {
          model.Visit(SetOfCall(c, kSetSize, kRange, kPool), where);
          orders.push_back(rt.last_serial_order());
        }
        std::vector<int32_t> expected(static_cast<size_t>(kRange), 0);
        for (int c = 0; c < calls; ++c)
          for (int64_t i : SetOfCall(c, kSetSize, kRange, kPool))
            ++expected[static_cast<size_t>(i)];
        // Checksum hashes the elements' bytes in index order: the visits must be the expected.
        strads::Fnv1a hash;
        hash.Update(expected.data(), expected.size() * sizeof(int32_t));
        const int64_t mismatched = strads::Checksum(rt, {&visits}) != hash.digest();
        const uint64_t sum = strads::Checksum(rt, {&U, &V});
        std::vector<double> x;
        for (int64_t v = 0; v < kVertices; ++v) x.push_back(U[v]);
        for (int64_t v = 0; v < kVertices; ++v) x.push_back(V[v]);
        const auto* site = strads::IndexSetSite::Find(rt, where.file_name(), where.line());
        std::lock_guard<std::mutex> lock(mu);
        if (rt.leader()) {
          out.visits_wrong = mismatched;
          out.checksum = sum;
          out.orders = orders;
          out.x = x;
          if (site) out.counters = site->counters();
        }
      },
      std::move(extra));
  REQUIRE(rc == 0);
  return out;
}

std::vector<double> SerialInOrders(const std::vector<std::vector<int64_t>>& orders) {
  std::vector<double> u(kVertices), v(kVertices);
  for (int64_t k = 0; k < kVertices; ++k) u[k] = 1.0 + k, v[k] = 2.0 - k;
  for (const auto& order : orders)
    for (int64_t i : order) {
      const auto e = EdgeAt(i);
      Update(u[e.a], v[e.b], i);
    }
  u.insert(u.end(), v.begin(), v.end());
  return u;
}

}  // namespace

TEST_CASE("AsyncForEach equals the serial run in its reported order, for any nodes and threads") {
  constexpr int kCalls = 6;
  const Outcome base = RunSets(1, 1, kCalls);
  REQUIRE(base.orders.size() == kCalls);
  for (int c = 0; c < kCalls; ++c) {
    std::vector<int64_t> sorted = base.orders[c], set = SetOfCall(c, kSetSize, kRange, kPool);
    std::sort(sorted.begin(), sorted.end());
    std::sort(set.begin(), set.end());
    CHECK(sorted == set);  // the reported order is a permutation of the call's set
  }
  CHECK(base.visits_wrong == 0);
  CHECK(base.x == SerialInOrders(base.orders));
  // The sets' own order gives another result: the comparison above can fail.
  std::vector<std::vector<int64_t>> listed;
  for (int c = 0; c < kCalls; ++c) listed.push_back(SetOfCall(c, kSetSize, kRange, kPool));
  CHECK(base.x != SerialInOrders(listed));
  for (auto [nodes, threads] : {std::pair{1, 2}, {2, 1}, {2, 2}, {3, 2}}) {
    CAPTURE(nodes);
    CAPTURE(threads);
    const Outcome o = RunSets(nodes, threads, kCalls);
    CHECK(o.visits_wrong == 0);
    CHECK(o.orders == base.orders);
    CHECK(o.x == base.x);
    CHECK(o.checksum == base.checksum);
  }
}

TEST_CASE("AsyncForEach plans in work proportional to the set, not to the range") {
  // 100 calls of 50 indices out of 1 M: reconnaissance runs each index once, the planner sees
  // the accesses of each call's 50 bodies (3 each: U, V, visits), never the range.
  int64_t reconnoitred = -1, planned = -1, calls = -1;
  const int rc = strads::testing::RunNodes(2, 2, [&](strads::Runtime& rt) {
    EdgeModel model(rt);
    const auto where = std::source_location::current();
    for (int c = 0; c < 100; ++c) model.Visit(SetOfCall(c, 50, kRange, kRange / 4), where);
    const auto* site = strads::IndexSetSite::Find(rt, where.file_name(), where.line());
    if (rt.leader() && site) {
      reconnoitred = static_cast<int64_t>(site->counters().reconnoitred);
      planned = static_cast<int64_t>(site->counters().planned_accesses);
      calls = static_cast<int64_t>(site->counters().calls);
    }
  });
  REQUIRE(rc == 0);
  MESSAGE("100 calls of 50 out of 1 M: reconnoitred " << reconnoitred << ", planned accesses "
                                                      << planned);
  CHECK(calls == 100);
  CHECK(reconnoitred <= 5000);
  CHECK(reconnoitred > 4000);  // few repeats among 5000 draws out of 250 000
  CHECK(planned <= 100 * 50 * 4);
  CHECK(planned >= 100 * 50);
}

// A Lasso-like body: index i reads and writes a run of kRun elements of X (a band, so one or
// two of X's blocks) and writes Y[i % kY]; from kWritesZ on it also writes Z, which the earlier
// indices only read.
constexpr int64_t kX = 4096, kY = 512, kZ = 64, kRun = 32, kWritesZ = 50000;
template <class Vec>
void BandBody(int64_t i, Vec& X, Vec& Y, Vec& Z) {
  const int64_t start = (i * 37) % (kX - kRun);
  double dot = 0;
  for (int64_t t = 0; t < kRun; ++t) dot += X[start + t];
  for (int64_t t = 0; t < kRun; ++t) X[start + t] = 0.5 * X[start + t] + 1e-3 * (i % 97);
  if (i >= kWritesZ)
    Z[i % kZ] += dot;
  else
    Y[i % kY] += dot + std::as_const(Z)[i % kZ];  // a const access: a read
}

// BandBody's X, Y and Z at their first values.
struct BandVectors {
  explicit BandVectors(strads::Runtime& rt)
      : X(strads::MakeDVector<double>(
            rt, kX, [](int64_t e) { return 1.0 + e % 13; }, "X")),
        Y(strads::MakeDVector<double>(
            rt, kY, [](int64_t) { return 0.0; }, "Y")),
        Z(strads::MakeDVector<double>(
            rt, kZ, [](int64_t e) { return 0.25 * e; }, "Z")) {}
  strads::dvector<double>& X;
  strads::dvector<double>& Y;
  strads::dvector<double>& Z;
};

struct BandOutcome {
  std::vector<double> x;  // X, Y and Z
  std::vector<std::vector<int64_t>> orders;
  std::vector<uint64_t> planned;  // per call: the accesses given to the planner
  strads::IndexSetCounters counters;
};

// `calls` calls of 200 indices out of a pool of 2000; the last two from kWritesZ on.
std::vector<int64_t> BandSet(int c, int calls) {
  std::vector<int64_t> set = SetOfCall(c, 200, 2000, 2000);
  if (c >= calls - 2)
    for (int64_t& i : set) i += kWritesZ;
  return set;
}

// `cells_ahead`: IndexSetSite::set_cells_ahead; `max_cached` (if not 0):
// IndexSetSite::set_max_cached_accesses; `set_of(c, calls)`: call c's set; `extra`: flags.
BandOutcome RunBand(int nodes, int threads, int calls, bool cells_ahead = true,
                    size_t max_cached = 0, std::vector<int64_t> (*set_of)(int, int) = BandSet,
                    std::vector<std::string> extra = {}) {
  BandOutcome out;
  std::mutex mu;
  const int rc = strads::testing::RunNodes(
      nodes, threads,
      [&](strads::Runtime& rt) {
        BandVectors band(rt);
        auto &X = band.X, &Y = band.Y, &Z = band.Z;
        const auto where = std::source_location::current();
        auto& at = strads::IndexSetSite::At(rt, {where.file_name(), where.line()});
        at.set_cells_ahead(cells_ahead);
        if (max_cached != 0) at.set_max_cached_accesses(max_cached);
        std::vector<std::vector<int64_t>> orders;
        std::vector<uint64_t> planned;
        for (int c = 0; c < calls; ++c) {
          strads::AsyncForEach(
              set_of(c, calls), [&](int64_t i) { BandBody(i, X, Y, Z); }, where);
          orders.push_back(rt.last_serial_order());
          const auto* site = strads::IndexSetSite::Find(rt, where.file_name(), where.line());
          planned.push_back(site->counters().planned_accesses);
        }
        std::vector<double> x;
        for (auto* v : {&X, &Y, &Z})
          for (int64_t e = 0; e < v->size(); ++e) x.push_back((*v)[e]);
        const auto* site = strads::IndexSetSite::Find(rt, where.file_name(), where.line());
        std::lock_guard<std::mutex> lock(mu);
        if (rt.leader()) {
          out.x = x;
          out.orders = orders;
          out.planned = planned;
          if (site) out.counters = site->counters();
        }
      },
      std::move(extra));
  REQUIRE(rc == 0);
  return out;
}

TEST_CASE("AsyncForEach plans later sets from per-block summaries of the cached lists") {
  constexpr int kCalls = 8;
  const BandOutcome base = RunBand(1, 2, kCalls);
  std::vector<double> X(kX), Y(kY, 0.0), Z(kZ);
  for (int64_t e = 0; e < kX; ++e) X[e] = 1.0 + e % 13;
  for (int64_t e = 0; e < kZ; ++e) Z[e] = 0.25 * e;
  for (const auto& order : base.orders)
    for (int64_t i : order) BandBody(i, X, Y, Z);
  std::vector<double> serial = X;
  serial.insert(serial.end(), Y.begin(), Y.end());
  serial.insert(serial.end(), Z.begin(), Z.end());
  CHECK(base.x == serial);
  for (auto [nodes, threads] : {std::pair{1, 1}, {2, 2}, {3, 1}}) {
    CAPTURE(nodes);
    const BandOutcome o = RunBand(nodes, threads, kCalls);
    CHECK(o.orders == base.orders);
    CHECK(o.x == base.x);
  }
  // Each body accesses 32 elements of X, and Y or Z (reconnaissance keeps an element once). The
  // first call and the last two (which write Z, which the first plan's bounds do not cut) plan
  // from the whole lists; the five between from summaries: X's one or two blocks, Y and Z.
  const strads::IndexSetCounters& c = base.counters;
  REQUIRE(base.planned.size() == kCalls);
  std::vector<uint64_t> per_call{base.planned[0]};
  for (int k = 1; k < kCalls; ++k) per_call.push_back(base.planned[k] - base.planned[k - 1]);
  std::string listed;
  for (uint64_t n : per_call) listed.append(" ").append(std::to_string(n));
  MESSAGE("planned accesses per call:" << listed << "; summarized " << c.summarized);
  CHECK(c.calls == kCalls);
  CHECK(c.summarized <= c.reconnoitred);
  for (int k : {0, kCalls - 2, kCalls - 1}) CHECK(per_call[k] >= 200 * 32);
  for (int k = 1; k < kCalls - 2; ++k) CHECK(per_call[k] <= 200 * 6);
}

// BandSet's calls but the last, which runs 100 indices of call 0's set and 100 that write Z.
std::vector<int64_t> BandSetThenMixed(int c, int calls) {
  if (c < calls - 1) return SetOfCall(c, 200, 2000, 2000);
  std::vector<int64_t> set = SetOfCall(0, 100, 2000, 2000);
  for (int64_t i : SetOfCall(c, 100, 2000, 2000)) set.push_back(i + kWritesZ);
  return set;
}

TEST_CASE("AsyncForEach past its cache bound keeps the summaries, and relearns dropped lists") {
  // A bound of about 3 calls' whole lists (200 x 34 accesses a call, fewer as the sets come to
  // overlap): the whole lists are dropped and the summaries kept, so that the indices are not
  // reconnoitred again; the last call, which writes Z, needs whole lists and reconnoitres its set
  // again.
  constexpr int kCalls = 10;
  const BandOutcome whole = RunBand(1, 2, kCalls, true, 0, BandSetThenMixed);
  for (auto [nodes, threads] : {std::pair{1, 2}, {3, 1}}) {
    CAPTURE(nodes);
    const BandOutcome bounded = RunBand(nodes, threads, kCalls, true, 20000, BandSetThenMixed);
    CHECK(bounded.orders == whole.orders);
    CHECK(bounded.x == whole.x);
    CHECK(bounded.counters.whole_lists_dropped >= 1);
    CHECK(bounded.counters.cache_clears == 1);  // the last call's
    // Calls 0 to 8 reconnoitre each index once, as with the whole lists kept; the last its 100
    // new indices, then its whole set again.
    CHECK(bounded.counters.reconnoitred == whole.counters.reconnoitred + 200);
  }
  CHECK(whole.counters.whole_lists_dropped == 0);
  CHECK(whole.counters.cache_clears == 0);
}

TEST_CASE("AsyncForEach gives the planner each index's cell, made once, and plans alike") {
  // The five calls planned from summaries (above) take the cached cells; computing each body's
  // cell from its summary instead plans the same rounds, groups and orders.
  // With 16 blocks an eighth of the bodies write two blocks of X, so the cells are coloured
  // first-fit, where their numbers order the groups (not rotated, where their blocks do).
  constexpr int kCalls = 8;
  const std::vector<std::string> blocks = {"--blocks", "16"};
  for (auto [nodes, threads] : {std::pair{1, 2}, {3, 1}}) {
    CAPTURE(nodes);
    const BandOutcome ahead = RunBand(nodes, threads, kCalls, true, 0, BandSet, blocks);
    const BandOutcome computed =
        RunBand(nodes, threads, kCalls, /*cells_ahead=*/false, 0, BandSet, blocks);
    CHECK(ahead.counters.given_cells == kCalls - 3);
    CHECK(computed.counters.given_cells == 0);
    CHECK(ahead.orders == computed.orders);
    CHECK(ahead.x == computed.x);
  }
}

// BandSet's calls, every index from kWritesZ on: the sets write X, Y and Z and read nothing else.
std::vector<int64_t> WritesOnlySet(int c, int) {
  std::vector<int64_t> set = SetOfCall(c, 200, 2000, 2000);
  for (int64_t& i : set) i += kWritesZ;
  return set;
}

TEST_CASE("AsyncForEach gives no access lists where the plan reads none, and plans alike") {
  // With the cells given and no read-only DDS to serve or fetch ahead, planning reads no body's
  // accesses, so the calls planned from the summaries leave the lists out; on 3 nodes too, whose
  // element requests would read them (they throw if they do).
  constexpr int kCalls = 8;
  for (auto [nodes, threads] : {std::pair{1, 2}, {3, 1}}) {
    CAPTURE(nodes);
    const BandOutcome ahead = RunBand(nodes, threads, kCalls, true, 0, WritesOnlySet);
    const BandOutcome computed =
        RunBand(nodes, threads, kCalls, /*cells_ahead=*/false, 0, WritesOnlySet);
    CHECK(ahead.counters.given_cells == kCalls - 1);
    CHECK(ahead.counters.touches_omitted == kCalls - 1);
    CHECK(computed.counters.touches_omitted == 0);
    CHECK(ahead.orders == computed.orders);
    CHECK(ahead.x == computed.x);
  }
}

// Per call of BandBody over small sets (one node, 2 threads): the RunOnAll calls (wake-ups of the
// worker) and the collective calls it made. Call 0 runs the 40 indices offset + 0..39, call c > 0
// the 20 of them of c's parity: planned from the summaries, each set small enough that its
// schedule runs on one worker (estimated slower than serial on two).
struct Wakes {
  std::vector<uint64_t> runs, collectives;
  strads::IndexSetCounters counters;
};
Wakes RunSmallBandSets(int64_t offset, int calls) {
  Wakes out;
  const int rc = strads::testing::RunNodes(1, 2, [&](strads::Runtime& rt) {
    BandVectors band(rt);
    auto &X = band.X, &Y = band.Y, &Z = band.Z;
    const auto where = std::source_location::current();
    for (int c = 0; c < calls; ++c) {
      std::vector<int64_t> set;
      for (int64_t k = 39; k >= 0; --k)
        if (c == 0 || k % 2 == c % 2) set.push_back(offset + k);
      const uint64_t runs = rt.context().pool().runs();
      const uint64_t collectives = rt.context().collectives().calls();
      strads::AsyncForEach(
          set, [&](int64_t i) { BandBody(i, X, Y, Z); }, where);
      out.runs.push_back(rt.context().pool().runs() - runs);
      out.collectives.push_back(rt.context().collectives().calls() - collectives);
    }
    out.counters = strads::IndexSetSite::Find(rt, where.file_name(), where.line())->counters();
  });
  REQUIRE(rc == 0);
  return out;
}

TEST_CASE("AsyncForEach plans a later set on the driver: no worker woken, no read-ahead vote") {
  // A set planned from the summaries is one chunk of bodies with their cells given: counting the
  // cells' bodies and filling the groups' lists is the driver's work alone, and waking the worker
  // for it cost a wake-up and a barrier each (four a call; Lasso's rounds, 100 an epoch). A set
  // that only writes (BandBody from kWritesZ on writes Z, before it reads Z) has no read-only
  // element to fetch ahead, so its plan neither scans the bodies for one nor asks the other
  // nodes whether they read by index (AheadFollowsIndex, a collective).
  constexpr int kCalls = 5;
  const Wakes reads = RunSmallBandSets(0, kCalls);
  const Wakes writes = RunSmallBandSets(kWritesZ, kCalls);
  for (const Wakes* w : {&reads, &writes}) {
    CHECK(w->counters.plans == kCalls);
    CHECK(w->counters.given_cells == kCalls - 1);
    CHECK(w->counters.reconnoitred == 40);
    for (int c = 1; c < kCalls; ++c) {
      CAPTURE(c);
      CHECK(w->runs[static_cast<size_t>(c)] == 0);
    }
  }
  for (int c = 1; c < kCalls; ++c) {
    CAPTURE(c);
    MESSAGE("collectives, reads Z " << reads.collectives[static_cast<size_t>(c)] << ", writes Z "
                                    << writes.collectives[static_cast<size_t>(c)]);
    CHECK(writes.collectives[static_cast<size_t>(c)] + 1 ==
          reads.collectives[static_cast<size_t>(c)]);
  }
}

TEST_CASE("AsyncForEach reconnoitres an index once: a repeated set plans nothing new") {
  const Outcome o = RunSets(2, 1, 4);
  // 4 calls of 3000 out of a pool of 20 000: about 10% of each later call was seen before.
  CHECK(o.counters.calls == 4);
  CHECK(o.counters.reconnoitred < 4 * kSetSize);
  CHECK(o.counters.reconnoitred >= kSetSize);
  CHECK(o.counters.cache_clears == 0);
}

TEST_CASE("AsyncForEach: a body touching other elements than when first seen is an error") {
  const int rc = strads::testing::RunNodes(
      2, 1,
      [](strads::Runtime& rt) {
        auto& X = strads::MakeDVector<double>(
            rt, 1000, [](int64_t) { return 0.0; }, "X");
        for (int c = 0; c < 2; ++c)
          strads::AsyncForEach({3, 5, 7, 11}, [&X, c](int64_t i) { X[i + c] += 1; });
      },
      {"--access-check", "all"});
  CHECK(rc == 2);
}

TEST_CASE("AsyncForEach keeps the block count its first set chose for later sets") {
  // Set 0's bodies all write X[0], so halving the blocks pays; set 1's bodies are independent
  // and, at a site of their own, keep more blocks. At set 0's site they plan with its count.
  int first = -1, second = -1, alone = -1;
  const int rc = strads::testing::RunNodes(1, 2, [&](strads::Runtime& rt) {
    auto& X = strads::MakeDVector<double>(
        rt, 4096, [](int64_t) { return 0.0; }, "X");
    const auto body = [&X](int64_t i) {
      if (i < 1000) X[0] += 1;
      X[i + 100] += 1;
    };
    std::vector<int64_t> conflicting, independent;
    for (int64_t i = 0; i < 64; ++i) conflicting.push_back(i), independent.push_back(1000 + i);
    const auto both = std::source_location::current();
    const auto own = std::source_location::current();
    strads::AsyncForEach(conflicting, body, both);
    first = strads::IndexSetSite::Find(rt, both.file_name(), both.line())->planned_blocks();
    strads::AsyncForEach(independent, body, both);
    second = strads::IndexSetSite::Find(rt, both.file_name(), both.line())->planned_blocks();
    strads::AsyncForEach(independent, body, own);
    alone = strads::IndexSetSite::Find(rt, own.file_name(), own.line())->planned_blocks();
  });
  REQUIRE(rc == 0);
  MESSAGE("blocks: set 0 " << first << ", set 1 after it " << second << ", set 1 alone " << alone);
  CHECK(first != alone);
  CHECK(second == first);
}

TEST_CASE("AsyncForEach: a repeated index is a usage error") {
  const int rc = strads::testing::RunNodes(1, 2, [](strads::Runtime& rt) {
    auto& X = strads::MakeDVector<double>(
        rt, 10, [](int64_t) { return 0.0; }, "X");
    strads::AsyncForEach({1, 2, 1}, [&X](int64_t i) { X[i] += 1; });
  });
  CHECK(rc == 2);
}

// After the first call its indices are cached: a repeat among them is found by the slots' stamps,
// not by sorting the set, and must still stop the call.
TEST_CASE("AsyncForEach: a repeated index is a usage error in a later set too") {
  for (const bool locks : {false, true}) {
    CAPTURE(locks);
    int runs = 0;
    const int rc = strads::testing::RunNodes(
        1, 2,
        [&](strads::Runtime& rt) {
          auto& X = strads::MakeDVector<double>(
              rt, 10, [](int64_t) { return 0.0; }, "X");
          for (const std::vector<int64_t>& set : {std::vector<int64_t>{1, 2, 3}, {3, 4, 3}}) {
            strads::AsyncForEach(set, [&X](int64_t i) { X[i] += 1; });
            ++runs;
          }
        },
        locks ? std::vector<std::string>{"--async-engine", "locks"} : std::vector<std::string>{});
    CHECK(rc == 2);
    CHECK(runs == 1);
  }
}

TEST_CASE("AsyncForEach on the lock engine runs every index of every set once") {
  for (auto [nodes, threads] : {std::pair{1, 2}, {2, 2}}) {
    CAPTURE(nodes);
    const Outcome o = RunSets(nodes, threads, 3, {"--async-engine", "locks"});
    CHECK(o.visits_wrong == 0);
  }
  // One thread on one node runs the sets in their order: the serial program.
  const Outcome one = RunSets(1, 1, 3, {"--async-engine", "locks"});
  std::vector<std::vector<int64_t>> listed;
  for (int c = 0; c < 3; ++c) listed.push_back(SetOfCall(c, kSetSize, kRange, kPool));
  CHECK(one.x == SerialInOrders(listed));
}

namespace {

// Lasso's shape: coordinate j writes its own beta[j] and the residual rows of its column, a band
// around j's position (so a column near a block boundary writes rows of two r blocks). With
// `own` false, j writes beta[(j + 1) % n] instead: still one body an element, but not its own,
// which planning does not examine, so the cells stay apart. Returns each call's reported order,
// the rounds the schedule report gave, beta and r.
struct ColumnOutcome {
  std::vector<std::vector<int64_t>> orders;
  std::vector<int64_t> rounds;
  std::vector<double> values;
};

constexpr int64_t kColumns = 4000, kRowsAround = 40;

std::vector<int64_t> ColumnSet(int c) {
  std::mt19937_64 rng(77 + c);
  std::vector<int64_t> set;
  std::vector<char> taken(kColumns, 0);
  while (set.size() < 600) {
    const auto j = static_cast<int64_t>(rng() % kColumns);
    if (!taken[j]++) set.push_back(j);
  }
  return set;
}

void ColumnUpdate(int64_t j, double& beta, auto& r) {
  double dot = 0;
  for (int64_t row = std::max<int64_t>(0, j - kRowsAround);
       row < std::min(kColumns, j + kRowsAround); ++row)
    dot += r[row] * (1 + (row + j) % 3);
  beta = 0.5 * beta + 1e-3 * dot;
  for (int64_t row = std::max<int64_t>(0, j - kRowsAround);
       row < std::min(kColumns, j + kRowsAround); ++row)
    r[row] -= 1e-4 * beta * (1 + (row + j) % 5);
}

// The number in front of each `word` in a --schedule-report text ("12 rounds, ").
std::vector<int64_t> NumbersBefore(const std::string& text, const std::string& word) {
  std::vector<int64_t> numbers;
  for (size_t at = 0; (at = text.find(word, at)) != std::string::npos; ++at) {
    size_t begin = at;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1]))) --begin;
    if (begin < at) numbers.push_back(std::stoll(text.substr(begin, at - begin)));
  }
  return numbers;
}

ColumnOutcome RunColumns(int nodes, int threads, bool own) {
  ColumnOutcome out;
  std::string err;
  const std::string path = "/tmp/strads_index_set_columns_" + std::to_string(::getpid());
  {
    strads::testing::StderrCapture capture(path);
    std::mutex mu;
    const int rc =
        strads::testing::RunNodes(nodes, threads,
                                  [&](strads::Runtime& rt) {
                                    auto& beta = strads::MakeDVector<double>(
                                        rt, kColumns, [](int64_t) { return 0.0; }, "beta");
                                    auto& r = strads::MakeDVector<double>(
                                        rt, kColumns, [](int64_t i) { return 1.0 + i % 7; }, "r");
                                    std::vector<std::vector<int64_t>> orders;
                                    for (int c = 0; c < 4; ++c) {
                                      strads::AsyncForEach(ColumnSet(c), [&](int64_t j) {
                                        ColumnUpdate(j, beta[own ? j : (j + 1) % kColumns], r);
                                      });
                                      orders.push_back(rt.last_serial_order());
                                    }
                                    std::vector<double> values;
                                    for (int64_t i = 0; i < kColumns; ++i)
                                      values.push_back(beta[i]);
                                    for (int64_t i = 0; i < kColumns; ++i) values.push_back(r[i]);
                                    std::lock_guard<std::mutex> lock(mu);
                                    if (rt.leader()) out.orders = orders, out.values = values;
                                  },
                                  {"--schedule-report", "--blocks", "8"});
    err = capture.text();
    REQUIRE(rc == 0);
  }
  std::remove(path.c_str());
  out.rounds = NumbersBefore(err, " rounds, ");
  return out;
}

std::vector<double> ColumnsSerial(const std::vector<std::vector<int64_t>>& orders, bool own) {
  std::vector<double> beta(kColumns, 0.0), r(kColumns);
  for (int64_t i = 0; i < kColumns; ++i) r[i] = 1.0 + i % 7;
  for (const auto& order : orders)
    for (int64_t j : order) ColumnUpdate(j, beta[own ? j : (j + 1) % kColumns], r);
  beta.insert(beta.end(), r.begin(), r.end());
  return beta;
}

}  // namespace

// A DDS each body accesses at its own index only (beta) orders no two bodies: the cells that
// differ in its block alone merge, and a call needs fewer rounds (Lasso: the two cells at an
// r-block boundary took a round each). Results still equal the reported serial order, on any
// nodes and threads, and the plan is the same for all of them.
TEST_CASE("AsyncForEach merges cells that differ only in a DDS each body accesses at its index") {
  const ColumnOutcome own = RunColumns(1, 2, true), other = RunColumns(1, 2, false);
  REQUIRE(own.rounds.size() == 4);
  REQUIRE(other.rounds.size() == 4);
  for (size_t c = 0; c < 4; ++c) {
    CAPTURE(c);
    CHECK(own.rounds[c] < other.rounds[c]);
  }
  CHECK(own.values == ColumnsSerial(own.orders, true));
  CHECK(other.values == ColumnsSerial(other.orders, false));
  for (auto [nodes, threads] : {std::pair{1, 1}, {2, 1}, {2, 2}, {3, 1}}) {
    CAPTURE(nodes);
    CAPTURE(threads);
    const ColumnOutcome o = RunColumns(nodes, threads, true);
    CHECK(o.rounds == own.rounds);
    CHECK(o.orders == own.orders);
    CHECK(o.values == own.values);
  }
}

// Merging is refused where it costs parallelism: each body writes its own x[j] and one of 4
// shared buckets, so the cells merged by bucket would each hold every x block and run one
// after another, one group a round. The plan keeps the cells apart: rounds of several groups.
TEST_CASE("AsyncForEach keeps cells apart where merging them would serialize the loop") {
  const std::string path = "/tmp/strads_index_set_buckets_" + std::to_string(::getpid());
  std::string err;
  {
    strads::testing::StderrCapture capture(path);
    const int rc = strads::testing::RunNodes(1, 2,
                                             [&](strads::Runtime& rt) {
                                               auto& x = strads::MakeDVector<double>(
                                                   rt, kColumns, [](int64_t) { return 0.0; }, "x");
                                               auto& buckets = strads::MakeDVector<double>(
                                                   rt, 4, [](int64_t) { return 0.0; }, "buckets");
                                               strads::AsyncForEach(ColumnSet(0), [&](int64_t j) {
                                                 x[j] += 1;
                                                 buckets[j % 4] += x[j];
                                               });
                                             },
                                             {"--schedule-report", "--blocks", "8"});
    err = capture.text();
    REQUIRE(rc == 0);
  }
  std::remove(path.c_str());
  CAPTURE(err);
  const std::vector<int64_t> most_groups = NumbersBefore(err, " groups per round");
  REQUIRE(most_groups.size() == 1);
  CHECK(most_groups[0] >= 2);  // the most groups of a round
}
