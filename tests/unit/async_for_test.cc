// AsyncFor end to end on in-process nodes: serializability in the reported order, every index
// exactly once, independence from nodes and threads.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "async_loop.h"
#include "conflicting_edges.h"
#include "stderr_capture.h"
#include "strads/exit_code.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace {

using strads::testing::Edge;
using strads::testing::EdgeAt;
using strads::testing::Update;

// A body that writes an element and then reads it back through a const access (two accesses of
// one element, the last a read): reconnaissance must keep the element a write, or conflicting
// bodies run in parallel. `read_u` is the const access.
template <class ReadU>
inline void WriteThenRead(double& u, double& v, int64_t i, ReadU read_u) {
  u = static_cast<double>(i % 7) + 0.5 * v;  // written without being read first
  const double back = read_u();              // then read back
  v = 0.75 * v - 0.125 * back;
}

// Which body RunLoop runs.
enum class Body { kUpdate, kWriteThenRead };

struct Outcome {
  uint64_t checksum = 0;
  std::vector<int64_t> order;
  std::vector<double> x;
  std::vector<int32_t> edges;
  int64_t visits_wrong = -1;
};

Outcome RunLoop(int nodes, int threads, int calls, Body body = Body::kUpdate) {
  constexpr int64_t kEdges = 20000, kVertices = 500;
  Outcome out;
  std::mutex mu;
  const int rc = strads::testing::RunNodes(nodes, threads, [&](strads::Runtime& rt) {
    const auto& E =
        strads::MakeDVector<Edge>(rt, kEdges, [](int64_t i) { return EdgeAt(i, kVertices); });
    auto& U = strads::MakeDVector<double>(
        rt, kVertices, [](int64_t v) { return 1.0 + v; }, "U");
    auto& V = strads::MakeDVector<double>(
        rt, kVertices, [](int64_t v) { return 2.0 - v; }, "V");
    auto& visits = strads::MakeDVector<int32_t>(
        rt, kEdges, [](int64_t) { return 0; }, "visits");
    for (int c = 0; c < calls; ++c)
      strads::AsyncFor(0, kEdges - 1, [&E, &U, &V, &visits, body](int64_t i) {
        const Edge& e = E[i];
        if (body == Body::kUpdate) {
          Update(U[e.a], V[e.b], i);
        } else {
          const auto& read_only = U;
          WriteThenRead(U[e.a], V[e.b], i, [&] { return read_only[e.a]; });
        }
        ++visits[i];
      });
    const int64_t wrong = strads::Sum(rt, visits, [&](int32_t v) { return int64_t{v != calls}; });
    const uint64_t sum = strads::Checksum(rt, {&U, &V});
    std::vector<double> x;
    for (int64_t v = 0; v < kVertices; ++v) x.push_back(U[v]);
    for (int64_t v = 0; v < kVertices; ++v) x.push_back(V[v]);
    if (rt.leader()) {
      std::lock_guard<std::mutex> lock(mu);
      out.checksum = sum;
      out.order = rt.last_serial_order();
      out.x = x;
      out.visits_wrong = wrong;
    }
  });
  REQUIRE(rc == 0);
  return out;
}

std::vector<double> SerialInOrder(const std::vector<int64_t>& order, int calls,
                                  Body body = Body::kUpdate) {
  constexpr int64_t kVertices = 500;
  std::vector<double> u(kVertices), v(kVertices);
  for (int64_t k = 0; k < kVertices; ++k) u[k] = 1.0 + k, v[k] = 2.0 - k;
  for (int c = 0; c < calls; ++c)
    for (int64_t i : order) {
      const Edge e = EdgeAt(i, kVertices);
      if (body == Body::kUpdate)
        Update(u[e.a], v[e.b], i);
      else
        WriteThenRead(u[e.a], v[e.b], i, [&] { return u[e.a]; });
    }
  u.insert(u.end(), v.begin(), v.end());
  return u;
}

}  // namespace

TEST_CASE("AsyncFor equals the serial run in the reported order, for any nodes and threads") {
  const Outcome base = RunLoop(1, 1, 3);
  REQUIRE(base.order.size() == 20000);
  CHECK(base.visits_wrong == 0);
  CHECK(base.x == SerialInOrder(base.order, 3));
  // The natural order gives another result: the comparison above can fail.
  std::vector<int64_t> natural(20000);
  for (int64_t i = 0; i < 20000; ++i) natural[i] = i;
  CHECK(base.x != SerialInOrder(natural, 3));
  for (auto [nodes, threads] : {std::pair{2, 1}, {4, 1}, {2, 2}, {3, 2}}) {
    CAPTURE(nodes);
    CAPTURE(threads);
    const Outcome o = RunLoop(nodes, threads, 3);
    CHECK(o.visits_wrong == 0);
    CHECK(o.order == base.order);
    CHECK(o.checksum == base.checksum);
  }
}

TEST_CASE("a body touching a DDS it did not touch during reconnaissance is an error") {
  const int rc = strads::testing::RunNodes(2, 1, [](strads::Runtime& rt) {
    auto& X = strads::MakeDVector<double>(
        rt, 100, [](int64_t) { return 0.0; }, "X");
    auto& Y = strads::MakeDVector<double>(
        rt, 100, [](int64_t) { return 0.0; }, "Y");
    int calls = 0;
    for (int c = 0; c < 2; ++c, ++calls)
      strads::AsyncFor(0, 99, [&X, &Y, calls](int64_t i) {
        X[i] += 1;
        if (calls == 1) Y[i] += 1;  // control flow that changed after reconnaissance
      });
  });
  CHECK(rc == 2);
}

// A body whose control flow follows the values the loop writes strays first in the loop's
// second call (its first runs on the values its reconnaissance saw). Its plan has one round, so
// the default sampled check, which checked such a plan again only at its 16th execution, let
// both nodes compute apart and return 0.
TEST_CASE("the default access check stops a body that follows written values, in its 2nd call") {
  const int rc = strads::testing::RunNodes(2, 1, [](strads::Runtime& rt) {
    auto& X = strads::MakeDVector<double>(
        rt, 100, [](int64_t) { return 0.0; }, "X");
    for (int c = 0; c < 3; ++c)
      strads::AsyncFor(0, 99, [&X](int64_t i) {
        if (X[i] > 0.5)
          X[(i + 1) % 100] += 1;
        else
          X[i] = 1;
      });
  });
  CHECK(rc == 2);
}

// On one node a plan whose bodies write a pair of blocks keeps one access digest per group, so
// the error names the group, not the body. An index array reached without const is written as
// far as reconnaissance knows, which shows it zeros: the group's error explains that too.
TEST_CASE("a group whose bodies strayed names its bodies and the DDSs reached without const") {
  std::string err;
  int rc = 0;
  const std::string path = "/tmp/strads_async_for_test_group_" + std::to_string(::getpid());
  {
    strads::testing::StderrCapture capture(path);
    rc = strads::testing::RunNodes(
        1, 1,
        [](strads::Runtime& rt) {
          auto& idx = strads::MakeDVector<int64_t>(
              rt, 70000, [](int64_t i) { return (i * 7) % 70000; }, "idx");
          auto& y = strads::MakeDVector<double>(
              rt, 70000, [](int64_t) { return 0.0; }, "y");
          strads::AsyncFor(0, 69999, [&](int64_t i) { y[idx[i]] = 1; });  // idx: `auto&`, no const
        },
        {"--blocks", "2"});  // 128 fine bins a DDS: 128 x 128 pair sums, 4.3 bodies each
    err = capture.text();
  }
  std::remove(path.c_str());
  CHECK(rc == 2);
  CAPTURE(err);
  CHECK(err.find("(a group that writes the same blocks)") != std::string::npos);
  CHECK(err.find("The body reached idx and y without const") != std::string::npos);
}

// A body whose accesses change from the 4th call on, in a plan of few rounds (its sampled rounds
// fall in no later call of this run): each call's spot check verifies a few bodies, so the
// change is stopped in the call it happens. On one node, where the plan keeps one digest sum per
// group, a group whole; on two, the last bodies of a group. Without the change, no error.
TEST_CASE("the default access check's spot check stops a late change of accesses in its call") {
  for (const int nodes : {1, 2})
    for (const bool change : {false, true}) {
      CAPTURE(nodes);
      CAPTURE(change);
      const std::string path = "/tmp/strads_async_for_test_spot_" + std::to_string(::getpid());
      std::string err;
      int rc = 0;
      {
        strads::testing::StderrCapture capture(path);
        rc = strads::testing::RunNodes(
            nodes, 1,
            [change](strads::Runtime& rt) {
              constexpr int64_t n = 70000;
              auto& x = strads::MakeDVector<double>(
                  rt, n, [](int64_t) { return 1.0; }, "x");
              auto& y = strads::MakeDVector<double>(
                  rt, n, [](int64_t) { return 0.0; }, "y");
              for (int call = 0; call < 6; ++call)
                strads::AsyncFor(0, n - 1, [&, call](int64_t i) {
                  y[change && call >= 3 ? (i * 7) % n : i] += x[i];
                  x[i] *= 0.5;
                });
            },
            {"--blocks", "2"});  // 128 fine bins a DDS: 128 x 128 pair sums, 4.3 bodies each
        err = capture.text();
      }
      std::remove(path.c_str());
      CAPTURE(err);
      if (!change) {
        CHECK(rc == 0);
        continue;
      }
      CHECK(rc == 2);
      CHECK(err.find("invocation 3: ") != std::string::npos);
      if (nodes == 1) CHECK(err.find("(a group that writes the same blocks)") != std::string::npos);
    }
}

// A loop called from a body (thread 0 of a node is the driver thread) took over the node's
// threads in the middle of the outer loop: on 2 threads an internal error ("a chunk's digests
// are missing"), on 1 a nested run that no serial loop gives. Now a UsageError names the loop.
TEST_CASE("a loop called from inside an AsyncFor body is an error naming the outer loop") {
  for (const int threads : {1, 2})
    for (const bool parallel_for : {false, true}) {
      std::string what;
      const int rc = strads::testing::RunNodes(1, threads, [&](strads::Runtime& rt) {
        auto& X = strads::MakeDVector<double>(
            rt, 100, [](int64_t) { return 0.0; }, "X");
        try {
          strads::AsyncFor(0, 99, [&X, parallel_for](int64_t i) {
            if (i == 0 && parallel_for) strads::ParallelFor(4, [](int64_t) {});
            if (i == 0 && !parallel_for) strads::AsyncFor(0, 3, [&X](int64_t j) { X[j] += 1; });
            X[i] += 1;
          });
        } catch (const strads::UsageError& e) {
          what = e.what();
        }
      });
      CHECK(rc == 0);
      CHECK(what.find("an operator called from inside a body of AsyncFor at") != std::string::npos);
      CHECK(what.find("async_for_test.cc:") != std::string::npos);
    }
}

// A port that makes a scratch dvector anew every epoch and loops over it at one site: the plan of
// the first call names the first one, so the second call's accesses are unplanned. The error
// said only "the loop's control flow is not static", which the body's was.
TEST_CASE("a DDS made anew every epoch for one loop site: the error says to make it once") {
  std::string what;
  const int rc = strads::testing::RunNodes(1, 1, [&](strads::Runtime& rt) {
    try {
      for (int epoch = 0; epoch < 2; ++epoch) {
        auto& scratch = strads::MakeDVector<double>(
            rt, 10, [](int64_t) { return 0.0; }, "scratch");
        strads::AsyncFor(0, 9, [&scratch](int64_t i) { scratch[i] += 1; });
      }
    } catch (const strads::UsageError& e) {
      what = e.what();
    }
  });
  CHECK(rc == 0);
  CHECK(what.find("'scratch' was made after the loop's first call") != std::string::npos);
}

TEST_CASE("reconnaissance on several threads rethrows the lowest failing index's exception") {
  // Thread 0 reconnoitres 0..499 and fails late in its chunk, thread 1 (500..999) at once: a run
  // in index order fails at 490, and so must the threaded one, whichever thread threw first.
  std::string what;
  const int rc = strads::testing::RunNodes(1, 2, [&](strads::Runtime& rt) {
    auto& X = strads::MakeDVector<double>(
        rt, 1000, [](int64_t) { return 0.0; }, "X");
    try {
      strads::AsyncFor(0, 999, [&X](int64_t i) {
        if (i == 490 || i == 500) throw std::runtime_error("body " + std::to_string(i));
        X[i] += 1;
      });
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
  });
  CHECK(rc == 0);
  CHECK(what == "body 490");
}

TEST_CASE("AsyncFor: an element written and then read back by a body stays a write") {
  const Outcome base = RunLoop(1, 1, 2, Body::kWriteThenRead);
  REQUIRE(base.order.size() == 20000);
  CHECK(base.x == SerialInOrder(base.order, 2, Body::kWriteThenRead));
  for (auto [nodes, threads] : {std::pair{1, 2}, {2, 1}, {2, 2}, {3, 2}}) {
    CAPTURE(nodes);
    CAPTURE(threads);
    const Outcome o = RunLoop(nodes, threads, 2, Body::kWriteThenRead);
    CHECK(o.visits_wrong == 0);
    CHECK(o.order == base.order);
    CHECK(o.x == SerialInOrder(o.order, 2, Body::kWriteThenRead));
    CHECK(o.checksum == base.checksum);
  }
}

// A schedule estimated slower than serial (one round of 16 groups of 4 bodies: the round's cost
// outweighs 64 bodies) runs one thread a node, each group on the node placement chose: on 2
// nodes, both run groups (before, node 0 ran all of them, and every call shipped it the written
// blocks node 1 owns, and back).
TEST_CASE("a schedule slower than serial runs on thread 0 of each node, groups where placed") {
  constexpr int kNodes = 2, kThreads = 2;
  constexpr int64_t kBodies = 64;
  std::mutex mu;
  std::vector<int32_t> workers;
  std::vector<double> sums(kNodes);
  const int rc = strads::testing::RunNodes(
      kNodes, kThreads,
      [&](strads::Runtime& rt) {
        auto& w = strads::MakeDVector<double>(
            rt, kBodies, [](int64_t i) { return 1.0 + static_cast<double>(i); }, "w");
        const auto body = [&w](int64_t i) { w[i] = 0.5 * w[i] + static_cast<double>(i % 5); };
        strads::AsyncLoop& loop =
            strads::AsyncLoop::At(rt, {"slower_than_serial", 1}, 0, kBodies - 1, nullptr);
        loop.Prepare(rt, body);
        loop.Execute(rt,
                     [&](int64_t first, std::span<const uint32_t> bodies, const std::byte* const*) {
                       for (uint32_t k : bodies) body(first + k);
                     });
        const double sum = strads::Sum(rt, w, [](double x) { return x; });
        std::lock_guard<std::mutex> lock(mu);
        sums[rt.node()] = sum;
        if (!rt.leader()) return;
        for (const auto& round : loop.schedule().rounds)
          for (const strads::Group& g : round) workers.push_back(g.worker);
      },
      {"--blocks", "16"});
  REQUIRE(rc == 0);
  double serial = 0;
  for (int64_t i = 0; i < kBodies; ++i) serial += 0.5 * (1.0 + static_cast<double>(i)) + i % 5;
  CHECK(sums[0] == serial);
  CHECK(sums[1] == serial);
  REQUIRE(workers.size() == 16);
  int on_node1 = 0;
  for (int32_t worker : workers) {
    CHECK(worker % kThreads == 0);  // thread 0 of its node
    on_node1 += worker / kThreads == 1 ? 1 : 0;
  }
  CHECK(on_node1 > 0);
  CHECK(on_node1 < 16);
}

// A round's groups never conflict, so a thread that has run its own groups runs the others'
// (AsyncLoop::Execute): here the round's first group to start waits until every other group
// has run, which only the other thread can do. With each thread bound to its own groups that
// thread could run only its half, and the wait would end by its deadline instead.
TEST_CASE("a thread done with its groups runs the groups of a thread held up in the round") {
  constexpr int64_t kBodies = 1024;  // 16 blocks: one round of 16 groups of 64
  std::atomic<int64_t> run_elsewhere{0};
  std::atomic<bool> waited{false};
  bool rest_ran = false;
  std::vector<double> values;
  const int rc = strads::testing::RunNodes(
      1, 2,
      [&](strads::Runtime& rt) {
        auto& w = strads::MakeDVector<double>(
            rt, kBodies, [](int64_t i) { return static_cast<double>(i); }, "w");
        const auto body = [&w](int64_t i) { w[i] = 2 * w[i] + 1; };
        strads::AsyncLoop& loop =
            strads::AsyncLoop::At(rt, {"held_up_thread", 1}, 0, kBodies - 1, nullptr);
        loop.Prepare(rt, body);
        REQUIRE(loop.schedule().rounds.size() == 1);
        loop.Execute(
            rt, [&](int64_t first, std::span<const uint32_t> bodies, const std::byte* const*) {
              if (!waited.exchange(true)) {
                const int64_t rest = kBodies - static_cast<int64_t>(bodies.size());
                const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                while (run_elsewhere.load() < rest && std::chrono::steady_clock::now() < deadline)
                  std::this_thread::yield();
                rest_ran = run_elsewhere.load() == rest;
              } else {
                run_elsewhere += static_cast<int64_t>(bodies.size());
              }
              for (uint32_t k : bodies) body(first + k);
            });
        for (int64_t i = 0; i < kBodies; ++i) values.push_back(w[i]);
      },
      {"--blocks", "16", "--access-check", "off"});
  REQUIRE(rc == 0);
  CHECK(rest_ran);
  for (int64_t i = 0; i < kBodies; ++i) CHECK(values[i] == 2.0 * static_cast<double>(i) + 1);
}

// Sums of digests per group (one node, bodies that write one element of each of two DDSs):
// every body checked (--access-check all), over three calls.
// `stray`: body 12345 writes another element of h on the second call. On 1 thread the one
// reconnaissance chunk's cells are the node's (no merge), its sums too.
int RunPairLoop(bool stray, int threads) {
  constexpr int64_t kBodies = 1 << 15;
  return strads::testing::RunNodes(
      1, threads,
      [&](strads::Runtime& rt) {
        const auto& a = strads::MakeDVector<int64_t>(
            rt, kBodies, [](int64_t i) { return i * 7919 % 64; }, "a");
        auto& w = strads::MakeDVector<double>(
            rt, 64, [](int64_t) { return 0.0; }, "w");
        auto& h = strads::MakeDVector<double>(
            rt, 32, [](int64_t) { return 0.0; }, "h");
        auto& g = strads::MakeDVector<double>(
            rt, 7, [](int64_t) { return 0.0; }, "g");
        for (int call = 0; call < 3; ++call)
          strads::AsyncFor(0, kBodies - 1, [&a, &w, &h, &g, call, stray](int64_t j) {
            w[a[j]] += 1;
            const int64_t row = stray && call == 1 && j == 12345 ? (j + 1) % 32 : j % 32;
            h[row] += 1;
            if (j % 5 == 0) g[j % 7] += 1;  // not a pair body: its digest is kept per body
          });
      },
      {"--access-check", "all"});
}

TEST_CASE("digests summed per group: every body passes its checks, a changed body is an error") {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    CHECK(RunPairLoop(false, threads) == 0);
    CHECK(RunPairLoop(true, threads) == 2);
  }
}

TEST_CASE("pair bodies that read a DDS the loop writes: digests per body, checks pass") {
  const int rc = strads::testing::RunNodes(
      1, 2,
      [](strads::Runtime& rt) {
        auto& w = strads::MakeDVector<double>(
            rt, 64, [](int64_t) { return 0.0; }, "w");
        auto& h = strads::MakeDVector<double>(
            rt, 32, [](int64_t) { return 0.0; }, "h");
        auto& x = strads::MakeDVector<double>(
            rt, 16, [](int64_t) { return 0.0; }, "x");
        for (int call = 0; call < 2; ++call)
          strads::AsyncFor(0, (1 << 15) - 1, [&w, &h, &x](int64_t j) {
            const auto& read_x = x;
            if (j % 3 != 0) {
              w[j * 7919 % 64] += read_x[(j / 64) % 16];  // its cell depends on x's block too
              h[j % 32] += 1;
            } else {
              x[j % 16] += 1;
            }
          });
      },
      {"--access-check", "all"});
  CHECK(rc == 0);
}

// On one node the groups' body lists are filled chunk by chunk on the node's threads
// (PlanGroupBodies): each group lists its cell's bodies in index order, and every body once,
// whatever the threads, so the lists equal one thread's. 3 threads: three chunks, each with
// bodies of every cell.
TEST_CASE("one node's group lists, filled on its threads, list each cell's bodies in order") {
  constexpr int64_t kBodies = 30011;
  std::vector<std::vector<uint32_t>> one_thread;
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    std::vector<std::vector<uint32_t>> lists;
    const int rc = strads::testing::RunNodes(1, threads,
                                             [&](strads::Runtime& rt) {
                                               auto& w = strads::MakeDVector<double>(
                                                   rt, 97, [](int64_t) { return 0.0; }, "w");
                                               auto& h = strads::MakeDVector<double>(
                                                   rt, 89, [](int64_t) { return 0.0; }, "h");
                                               const auto body = [&w, &h](int64_t i) {
                                                 w[i * 7919 % 97] += 1;
                                                 h[i % 89] += 1;
                                               };
                                               strads::AsyncLoop& loop = strads::AsyncLoop::At(
                                                   rt, {"group_lists", 1}, 0, kBodies - 1, nullptr);
                                               loop.Prepare(rt, body);
                                               for (const auto& round : loop.schedule().rounds)
                                                 for (const strads::Group& g : round)
                                                   lists.push_back(g.bodies);
                                             },
                                             {"--blocks", "4"});
    REQUIRE(rc == 0);
    std::vector<int> seen(kBodies, 0);
    for (const auto& list : lists) {
      CHECK(std::is_sorted(list.begin(), list.end()));
      for (uint32_t b : list) ++seen.at(b);
    }
    CHECK(std::count(seen.begin(), seen.end(), 1) == kBodies);
    if (threads == 1) one_thread = lists;
    CHECK(lists == one_thread);
  }
}

TEST_CASE("one node's cells: each body in the cell of its blocks, numbered by first appearance") {
  // 64 x 64 blocks give up to 4 096 cells, more than LocalCells' table of recent cells has
  // slots (2 048), so words share slots and a lookup must tell them apart; the cells must still
  // be each body's pair of blocks, numbered in order of their first body, on any threads.
  constexpr int64_t kBodies = 60013;
  static constexpr int64_t kW = 4099, kH = 3001;
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    std::vector<std::pair<int32_t, std::vector<uint32_t>>> groups;  // (cell, bodies)
    std::vector<std::vector<int64_t>> bounds;
    const int rc =
        strads::testing::RunNodes(1, threads,
                                  [&](strads::Runtime& rt) {
                                    auto& w = strads::MakeDVector<double>(
                                        rt, kW, [](int64_t) { return 0.0; }, "w");
                                    auto& h = strads::MakeDVector<double>(
                                        rt, kH, [](int64_t) { return 0.0; }, "h");
                                    const auto body = [&w, &h](int64_t i) {
                                      w[i * 7919 % kW] += 1;
                                      h[i * 104729 % kH] += 1;
                                    };
                                    strads::AsyncLoop& loop = strads::AsyncLoop::At(
                                        rt, {"recent_cells", 1}, 0, kBodies - 1, nullptr);
                                    loop.Prepare(rt, body);
                                    bounds = {loop.bounds().at(w.id()), loop.bounds().at(h.id())};
                                    for (const auto& round : loop.schedule().rounds)
                                      for (const strads::Group& g : round)
                                        groups.emplace_back(g.cell, g.bodies);
                                  },
                                  {"--blocks", "64"});
    REQUIRE(rc == 0);
    REQUIRE(bounds[0].size() == 65);
    const auto block = [](const std::vector<int64_t>& b, int64_t e) {
      return std::upper_bound(b.begin(), b.end(), e) - b.begin() - 1;
    };
    const auto blocks_of = [&](int64_t i) {
      return std::pair{block(bounds[0], i * 7919 % kW), block(bounds[1], i * 104729 % kH)};
    };
    std::vector<int64_t> first_of_cell(groups.size(), -1);
    std::set<std::pair<int64_t, int64_t>> cells_seen;
    for (const auto& [cell, bodies] : groups) {
      REQUIRE(!bodies.empty());
      REQUIRE(static_cast<size_t>(cell) < groups.size());
      CHECK(cells_seen.insert(blocks_of(bodies[0])).second);  // one cell per pair of blocks
      for (uint32_t b : bodies) REQUIRE(blocks_of(b) == blocks_of(bodies[0]));
      first_of_cell[static_cast<size_t>(cell)] = bodies[0];
    }
    CHECK(groups.size() > 2048);
    CHECK(std::is_sorted(first_of_cell.begin(), first_of_cell.end()));
    CHECK(std::count(first_of_cell.begin(), first_of_cell.end(), -1) == 0);
  }
}

// An order that is not a permutation of the range is the program's error: a UsageError (exit 2)
// naming the call and what is wrong with the order, on every node alike. Before, it was a bare
// std::invalid_argument from the scheduler (exit 1), "ordered AsyncFor: index 3 appears twice",
// naming no call; and an order too short was "the order has 9 indices, the loop 10".
TEST_CASE("OrderedAsyncFor: an order that is no permutation is a UsageError naming the call") {
  struct Case {
    std::vector<int64_t> order;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{0, 1, 2, 3, 4, 5, 3, 7, 8, 9}, "index 3 at position 6 is listed before, at position 3"},
      {{0, 1, 2, 3, 4, 5, 6, 7, 8, 10}, "index 10 at position 9 is outside the loop"},
      {{9, 8, 7, 6, 4, 3, 2, 1, 0}, "index 5 is missing (the order lists 9 of 10)"},
  };
  for (const Case& c : cases) {
    for (const int nodes : {1, 2}) {
      CAPTURE(c.error);
      CAPTURE(nodes);
      std::vector<std::string> errors(static_cast<size_t>(nodes));
      std::atomic<int> line{0};
      const int rc = strads::testing::RunNodes(nodes, 2, [&](strads::Runtime& rt) {
        auto& x = strads::MakeDVector<int>(
            rt, 10, [](int64_t) { return 0; }, "x");
        try {
          line = __LINE__ + 1;
          strads::OrderedAsyncFor(0, 9, c.order, [&x](int64_t i) { x[i] += 1; });
        } catch (const strads::UsageError& e) {
          errors[static_cast<size_t>(rt.node())] = e.what();
          throw;
        }
      });
      CHECK(rc == strads::ToInt(strads::ExitCode::kBadInput));
      // The node that fails first stops the other, which may not have reached the check yet.
      CHECK(std::any_of(errors.begin(), errors.end(), [](auto& e) { return !e.empty(); }));
      for (const std::string& error : errors) {
        if (error.empty()) continue;
        CHECK(error.find("OrderedAsyncFor at ") == 0);
        CHECK(error.find("async_for_test.cc:" + std::to_string(line.load()) +
                         ": the order is not a permutation of 0..9: " + c.error) !=
              std::string::npos);
      }
    }
  }
}

// An empty range runs no body and makes no plan, so the plan's check never saw the order.
TEST_CASE("OrderedAsyncFor: an order for an empty range is a UsageError naming the call") {
  std::string error;
  int line = 0;
  const int rc = strads::testing::RunNodes(1, 1, [&](strads::Runtime&) {
    try {
      line = __LINE__ + 1;
      strads::OrderedAsyncFor(5, 4, {5, 6}, [](int64_t) {});
    } catch (const strads::UsageError& e) {
      error = e.what();
      throw;
    }
  });
  CHECK(rc == strads::ToInt(strads::ExitCode::kBadInput));
  CHECK(error.find("async_for_test.cc:" + std::to_string(line) +
                   ": the order is not a permutation of 5..4: index 5 at position 0 is outside "
                   "the loop") != std::string::npos);
  // Also for a range whose last is far below its first.
  CHECK(strads::testing::RunNodes(1, 1, [&](strads::Runtime&) {
          strads::OrderedAsyncFor(5, -1000000000, {5}, [](int64_t) {});
        }) == strads::ToInt(strads::ExitCode::kBadInput));
  // An empty order over an empty range is a loop that runs nothing, as AsyncFor(5, 4, ...).
  CHECK(strads::testing::RunNodes(1, 1, [&](strads::Runtime&) {
          strads::OrderedAsyncFor(5, 4, {}, [](int64_t) {});
        }) == 0);
}
