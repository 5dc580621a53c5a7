// SyncFor on in-process nodes: exact BSP averages (checked by hand), custom aggregation and
// the order of its deltas, BSP reproducibility, the SSP staleness bound, Hybrid.
#include "strads/sync_for.h"

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "strads/strads.h"
#include "sync_params.h"  // SyncEngine: the hook's calls per worker
#include "test_nodes.h"

namespace {

using strads::dvector;

// The full local array of a parameter (every node holds all of it after SyncFor).
template <class T>
const T* Local(dvector<T>& v) {
  return static_cast<const dvector<T>&>(v).data();
}

}  // namespace

TEST_CASE("SyncFor BSP: the update is the exact average of the workers' deltas") {
  for (bool re : {false, true}) {  // without and with reconnaissance
    CAPTURE(re);
    // 2 nodes x 2 threads, data 1..10, mini-batches of 2: node 0 owns 1..5 -> [1,2] [3,4] [5],
    // node 1 owns 6..10 -> [6,7] [8,9] [10]. Clock 0: deltas 3, 7 | 13, 17 -> 40 / 4 = 10.
    // Clock 1: only thread 0 of each node: 5 | 10 -> 15 / 2 = 7.5.
    std::mutex mu;
    std::vector<double> scalar;
    std::vector<std::array<float, 2>> pair;
    const int rc = strads::testing::RunNodes(2, 2, [&](strads::Runtime& rt) {
      auto& data = strads::MakeDVector<float>(rt, 10, [](int64_t i) { return float(i + 1); });
      auto& w = strads::MakeDVector<double>(
          rt, 1, [](int64_t) { return 10.0; }, "w");
      auto& a = strads::MakeDVector<std::array<float, 2>>(
          rt, 3,
          [](int64_t) {
            return std::array<float, 2>{0, 0};
          },
          "a");
      strads::Replicate(rt, w);
      strads::Replicate(rt, a);
      strads::SyncFor(
          data, 2,
          [&w, &a](std::span<const float> batch) {
            for (float x : batch) {
              w[0] += x;
              a[1][0] += x;
              a[1][1] -= 2 * x;
            }
          },
          strads::BSP(), re);
      std::lock_guard<std::mutex> lock(mu);
      scalar.push_back(Local(w)[0]);
      for (int i = 0; i < 3; ++i) pair.push_back(Local(a)[i]);
    });
    REQUIRE(rc == 0);
    REQUIRE(scalar.size() == 2);
    for (double v : scalar) CHECK(v == 27.5);
    REQUIRE(pair.size() == 6);
    for (int node = 0; node < 2; ++node) {
      CHECK(pair[node * 3 + 0] == std::array<float, 2>{0, 0});
      CHECK(pair[node * 3 + 1] == std::array<float, 2>{17.5f, -35.0f});
      CHECK(pair[node * 3 + 2] == std::array<float, 2>{0, 0});
    }
  }
}

TEST_CASE("SyncFor: a body taking (batch, first) gets the data index of each batch's start") {
  // data[i] = i on 2 nodes x 2 threads, mini-batches of 3: every batch starts at its value.
  std::atomic<int> batches{0}, wrong{0};
  const int rc = strads::testing::RunNodes(2, 2, [&](strads::Runtime& rt) {
    auto& data = strads::MakeDVector<float>(rt, 20, [](int64_t i) { return float(i); });
    auto& w = strads::MakeDVector<double>(
        rt, 1, [](int64_t) { return 0.0; }, "w");
    strads::Replicate(rt, w);
    strads::SyncFor(
        data, 3,
        [&](std::span<const float> batch, int64_t first) {
          ++batches;
          for (size_t k = 0; k < batch.size(); ++k)
            if (batch[k] != float(first + static_cast<int64_t>(k))) ++wrong;
          w[0] += 1;
        },
        strads::BSP());
  });
  REQUIRE(rc == 0);
  CHECK(batches.load() == 8);  // 10 elements per node: batches of 3, 3, 3, 1
  CHECK(wrong.load() == 0);
}

TEST_CASE("SyncFor: a body taking (batch, first, worker) gets the worker that runs it") {
  // 2 nodes x 2 threads, 10 elements per node in mini-batches of 3: batch m of node p (starting
  // at 10 p + 3 m) runs on thread m mod 2, worker 2 p + m mod 2 of 4.
  std::atomic<int> batches{0}, wrong{0};
  std::atomic<int> seen[4] = {};
  const int rc = strads::testing::RunNodes(2, 2, [&](strads::Runtime& rt) {
    auto& data = strads::MakeDVector<float>(rt, 20, [](int64_t i) { return float(i); });
    auto& w = strads::MakeDVector<double>(
        rt, 1, [](int64_t) { return 0.0; }, "w");
    strads::Replicate(rt, w);
    const int node = rt.node();
    strads::SyncFor(
        data, 3,
        [&, node](std::span<const float>, int64_t first, strads::SyncWorkerId worker) {
          ++batches;
          const int thread = static_cast<int>((first - 10 * node) / 3 % 2);
          if (worker.node != node || worker.thread != thread || worker.index != 2 * node + thread ||
              worker.count != 4)
            ++wrong;
          ++seen[worker.index % 4];
          w[0] += 1;
        },
        strads::BSP());
  });
  REQUIRE(rc == 0);
  CHECK(batches.load() == 8);
  CHECK(wrong.load() == 0);
  for (const auto& s : seen) CHECK(s.load() == 2);
}

TEST_CASE("SyncFor: RegisterAggregationFunc sees the deltas in node, then thread order") {
  for (bool re : {false, true}) {  // without and with reconnaissance
    CAPTURE(re);
    // Data 1..8 on 2 nodes x 2 threads, mini-batches of 2: one clock, mini-batches [1,2] (node 0
    // thread 0), [3,4] (0, 1), [5,6] (1, 0), [7,8] (1, 1). The body adds its first element.
    std::mutex mu;
    std::vector<std::vector<double>> seen;  // per call: before, then the deltas
    std::vector<double> result;
    const int rc = strads::testing::RunNodes(2, 2, [&](strads::Runtime& rt) {
      auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i + 1); });
      auto& w = strads::MakeDVector<double>(
          rt, 1, [](int64_t) { return 0.5; }, "w");
      std::vector<std::vector<double>> mine;
      strads::RegisterAggregationFunc(w, [&mine](const double& before, std::span<const double> d) {
        std::vector<double> call{before};
        call.insert(call.end(), d.begin(), d.end());
        mine.push_back(call);
        double v = before, scale = 1;
        for (double x : d) v += scale * x, scale *= 10;
        return v;
      });
      strads::SyncFor(
          data, 2, [&w](std::span<const float> batch) { w[0] += batch[0]; }, strads::BSP(), re);
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(seen.end(), mine.begin(), mine.end());
      result.push_back(Local(w)[0]);
    });
    REQUIRE(rc == 0);
    REQUIRE(seen.size() == 2);  // once per node: one element, one clock
    for (const auto& call : seen) CHECK(call == std::vector<double>{0.5, 1, 3, 5, 7});
    for (double v : result) CHECK(v == 0.5 + 1 + 30 + 500 + 7000);
  }
}

namespace {

// A small nonlinear model trained with SyncFor; returns the checksum of its parameters.
uint64_t TrainBsp(int nodes, int threads, bool re = false) {
  uint64_t checksum = 0;
  const int rc = strads::testing::RunNodes(nodes, threads, [&](strads::Runtime& rt) {
    auto& data = strads::MakeDVector<float>(
        rt, 5000, [](int64_t i) { return std::sin(0.37 * static_cast<double>(i)); });
    auto& w = strads::MakeDVector<std::array<double, 3>>(
        rt, 64,
        [](int64_t j) {
          return std::array<double, 3>{0.01 * j, 1, -1};
        },
        "w");
    strads::Replicate(rt, w);
    for (int epoch = 0; epoch < 3; ++epoch)
      strads::SyncFor(
          data, 7,
          [&w](std::span<const float> batch) {
            for (size_t k = 0; k < batch.size(); ++k) {
              auto& row = w[(k * 13 + static_cast<size_t>(batch[k] * 1000)) % 64];
              row[0] = row[0] * 0.9 + batch[k] * row[1];
              row[1] = std::tanh(row[1] + 0.1 * row[0]);
              row[2] += row[0] * row[1];
            }
          },
          strads::BSP(), re);
    const uint64_t sum = strads::Checksum(rt, {&w});
    if (rt.leader()) checksum = sum;
  });
  REQUIRE(rc == 0);
  return checksum;
}

}  // namespace

TEST_CASE("SyncFor BSP: repeated runs give bit-identical parameters") {
  const uint64_t first = TrainBsp(3, 2);
  CHECK(first != 0);
  for (int run = 0; run < 3; ++run) CHECK(TrainBsp(3, 2) == first);
  CHECK(TrainBsp(1, 1) == TrainBsp(1, 1));
}

TEST_CASE("SyncFor BSP with reconnaissance: the same parameters, bit for bit") {
  // Only elements some body accesses change, and those get the same sums in the same order.
  CHECK(TrainBsp(3, 2, true) == TrainBsp(3, 2));
  CHECK(TrainBsp(2, 1, true) == TrainBsp(2, 1));
}

namespace {

// SSP instrumented: each worker adds 1 to counter[node] per mini-batch (custom aggregation:
// the sum), and records, per mini-batch, the counters it saw at the start of its clock.
void CheckSspBound(int nodes, int threads, int staleness, bool re = false) {
  constexpr int64_t kPerNode = 60, kBatch = 2;
  constexpr int64_t kBatches = kPerNode / kBatch;  // per node
  std::mutex mu;
  int failures = 0;
  std::vector<double> finals;
  const int rc = strads::testing::RunNodes(nodes, threads, [&](strads::Runtime& rt) {
    const int me = rt.node(), P = rt.nodes(), T = rt.threads();
    auto& data = strads::MakeDVector<int64_t>(rt, kPerNode * P, [](int64_t i) { return i; });
    auto& counter = strads::MakeDVector<double>(
        rt, P, [](int64_t) { return 0.0; }, "counter");
    strads::Replicate(rt, counter);
    strads::RegisterAggregationFunc(counter, [](const double& before, std::span<const double> d) {
      double v = before;
      for (double x : d) v += x;
      return v;
    });
    const int64_t first = data.owned_begin();
    std::vector<std::vector<double>> seen(kBatches);
    strads::SyncFor(
        data, kBatch,
        [&](std::span<const int64_t> batch) {
          const int64_t m = (batch[0] - first) / kBatch;
          std::vector<double> row(P);
          for (int p = 0; p < P; ++p) row[p] = static_cast<const dvector<double>&>(counter)[p];
          seen[m] = row;
          counter[me] += 1;
          // Node 0 is slow, so that the others run ahead as far as the bound lets them.
          if (me == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        },
        strads::SSP(staleness), re);
    int bad = 0;
    for (int64_t m = 0; m < kBatches; ++m) {
      const int64_t c = m / T;
      for (int p = 0; p < P; ++p) {
        const double v = seen[m][p];
        const int64_t lo = std::min(kBatches, std::max<int64_t>(0, (c - staleness) * T));
        const int64_t hi = std::min(kBatches, (c + staleness + 1) * T);
        if (p == me ? v != static_cast<double>(std::min(kBatches, c * T))
                    : (v < static_cast<double>(lo) || v > static_cast<double>(hi))) {
          ++bad;
          MESSAGE("node " << me << " clock " << c << " saw counter[" << p << "] = " << v
                          << ", allowed [" << lo << ", " << hi << "]");
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    failures += bad;
    for (int p = 0; p < P; ++p) finals.push_back(Local(counter)[p]);
  });
  REQUIRE(rc == 0);
  CHECK(failures == 0);
  for (double v : finals) CHECK(v == static_cast<double>(kBatches));
}

}  // namespace

TEST_CASE("SyncFor SSP: a node at clock c has every node's updates of clocks <= c - s - 1") {
  CheckSspBound(3, 2, 0);
  CheckSspBound(3, 2, 1);
  CheckSspBound(3, 1, 3);
  CheckSspBound(2, 2, 1, /*re=*/true);
}

TEST_CASE("SyncFor SSP with the default aggregation averages and ends consistent") {
  for (bool re : {false, true}) {  // without and with reconnaissance
    CAPTURE(re);
    std::mutex mu;
    std::vector<double> finals;
    const int rc = strads::testing::RunNodes(2, 2, [&](strads::Runtime& rt) {
      auto& data = strads::MakeDVector<float>(rt, 10, [](int64_t i) { return float(i + 1); });
      auto& w = strads::MakeDVector<double>(
          rt, 1, [](int64_t) { return 10.0; }, "w");
      strads::Replicate(rt, w);
      strads::SyncFor(
          data, 2,
          [&w](std::span<const float> batch) {
            for (float x : batch) w[0] += x;
          },
          strads::SSP(2), re);
      std::lock_guard<std::mutex> lock(mu);
      finals.push_back(Local(w)[0]);
    });
    REQUIRE(rc == 0);
    REQUIRE(finals.size() == 2);
    // The same sums as the BSP case, added in another order: exact for these small integers.
    for (double v : finals) CHECK(v == 27.5);
  }
}

TEST_CASE("SyncFor SSP: updates of other sizes and parameters in reused buffers stay exact") {
  // Node p's bodies add to elements 0..p of `a`, and odd nodes also to `b`: updates differ in
  // size (with reconnaissance) and in which parameters they hold, and a node builds its updates
  // in the buffers of updates it received. Sums of ones, so every order gives the same values.
  constexpr int64_t kPerNode = 24;
  for (bool re : {false, true}) {
    CAPTURE(re);
    std::mutex mu;
    std::vector<std::vector<double>> finals;
    const int rc = strads::testing::RunNodes(3, 2, [&](strads::Runtime& rt) {
      const int me = rt.node(), P = rt.nodes();
      auto& data = strads::MakeDVector<float>(rt, kPerNode * P, [](int64_t) { return 1.0f; });
      auto& a = strads::MakeDVector<double>(
          rt, P + 1, [](int64_t) { return 0.0; }, "a");
      auto& b = strads::MakeDVector<double>(
          rt, 2, [](int64_t) { return 0.0; }, "b");
      const auto sum = [](const double& before, std::span<const double> deltas) {
        double v = before;
        for (double d : deltas) v += d;
        return v;
      };
      strads::RegisterAggregationFunc(a, sum);
      strads::Replicate(rt, b);
      strads::SyncFor(
          data, 2,
          [&](std::span<const float> batch) {
            for (float x : batch) {
              for (int j = 0; j <= me; ++j) a[j] += x;
              if (me % 2 == 1) b[1] += x;
            }
          },
          strads::SSP(1), re);
      std::lock_guard<std::mutex> lock(mu);
      std::vector<double> mine(Local(a), Local(a) + P + 1);
      mine.push_back(Local(b)[1]);
      finals.push_back(mine);
    });
    REQUIRE(rc == 0);
    REQUIRE(finals.size() == 3);
    for (const auto& f : finals) {
      // a[j] gets node p's ones for every p >= j; a[P] none.
      CHECK(std::vector<double>(f.begin(), f.begin() + 4) ==
            std::vector<double>{3.0 * kPerNode, 2.0 * kPerNode, 1.0 * kPerNode, 0.0});
      // b[1]: node 1's ones, each clock's averaged over the 6 workers (not exact in binary).
      CHECK(f[4] == doctest::Approx(kPerNode / 6.0));
    }
  }
}

TEST_CASE("SyncFor Hybrid: nodes average their node deltas; threads share a copy") {
  for (int threads : {1, 2}) {
    std::mutex mu;
    std::vector<double> finals;
    const int rc = strads::testing::RunNodes(2, threads, [&](strads::Runtime& rt) {
      auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i); });
      auto& w = strads::MakeDVector<double>(
          rt, 1, [](int64_t) { return 0.0; }, "w");
      strads::Replicate(rt, w);
      strads::SyncFor(
          data, 2, [&w](std::span<const float>) { w[0] += 1; }, strads::Hybrid());
      std::lock_guard<std::mutex> lock(mu);
      finals.push_back(Local(w)[0]);
    });
    REQUIRE(rc == 0);
    REQUIRE(finals.size() == 2);
    CHECK(finals[0] == finals[1]);
    if (threads == 1) {
      CHECK(finals[0] == 2.0);  // two clocks, each node adds 1 per clock
    } else {
      // One clock; each node's two threads add 1 each, racing (an update may be lost).
      CHECK(finals[0] >= 1.0);
      CHECK(finals[0] <= 2.0);
    }
  }
}

TEST_CASE("SyncFor: a body touching a DDS that is not a parameter fails with a usage error") {
  const int rc = strads::testing::RunNodes(1, 1, [&](strads::Runtime& rt) {
    auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i); });
    auto& other = strads::MakeDVector<double>(
        rt, 2, [](int64_t) { return 0.0; }, "other");
    strads::SyncFor(
        data, 2, [&other](std::span<const float>) { other[0] += 1; }, strads::BSP());
  });
  CHECK(rc == 2);
}

TEST_CASE("SyncFor re-replicates a parameter the driver changed between calls") {
  for (bool re : {false, true}) {  // without and with reconnaissance
    CAPTURE(re);
    std::mutex mu;
    std::vector<double> finals;
    const int rc = strads::testing::RunNodes(2, 1, [&](strads::Runtime& rt) {
      auto& data = strads::MakeDVector<float>(rt, 4, [](int64_t) { return 1.0f; });
      auto& w = strads::MakeDVector<double>(
          rt, 2, [](int64_t i) { return double(i); }, "w");
      strads::Replicate(rt, w);
      // Each node owns one element: after Transform only the owner's copy is 100 + i.
      strads::Transform(w, [](double& x) { x += 100; });
      strads::SyncFor(
          data, 2,
          [&w](std::span<const float>) {
            w[0] += 1;
            w[1] += 2 * w[0];  // reads the current (re-replicated) value of w[0]
          },
          strads::BSP(), re);
      std::lock_guard<std::mutex> lock(mu);
      finals.push_back(Local(w)[0]);
      finals.push_back(Local(w)[1]);
    });
    REQUIRE(rc == 0);
    // One clock, one mini-batch per node, both alike: w0 = 101, w1 = 101 + 2 * 101 = 303.
    CHECK(finals == std::vector<double>{101, 303, 101, 303});
  }
}

TEST_CASE("SyncFor with reconnaissance: an access the reconnaissance did not see fails") {
  const int rc = strads::testing::RunNodes(1, 1, [&](strads::Runtime& rt) {
    auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i); });
    auto& w = strads::MakeDVector<double>(
        rt, 100, [](int64_t) { return 0.0; }, "w");
    strads::Replicate(rt, w);
    int calls = 0;  // control flow that is not static: a new element on every call
    for (int it = 0; it < 2; ++it)
      strads::SyncFor(
          data, 2, [&w, &calls](std::span<const float>) { w[calls++] += 1; }, strads::BSP(),
          /*reconnaissance=*/true);
  });
  CHECK(rc == 2);
}

TEST_CASE(
    "SyncFor BSP and SSP: a worker's first access to a parameter in a clock is hooked, "
    "the others index its copy") {
  for (const strads::SyncOption option : {strads::BSP(), strads::SSP(1)}) {
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      // Data 0..7, mini-batches of 2: 4 mini-batches, 4 clocks on 1 thread and 2 on 2. Each
      // body makes 3 x 50 accesses to each of w and v.
      std::vector<uint64_t> hooked;
      std::vector<double> w0, v1;
      const int rc = strads::testing::RunNodes(1, threads, [&](strads::Runtime& rt) {
        auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i); });
        auto& w = strads::MakeDVector<double>(
            rt, 4, [](int64_t) { return 0.0; }, "w");
        auto& v = strads::MakeDVector<double>(
            rt, 4, [](int64_t) { return 1.0; }, "v");
        strads::Replicate(rt, w);
        strads::Replicate(rt, v);
        const auto& engine = strads::internal::EngineOf(rt);
        std::vector<uint64_t> before;
        for (int t = 0; t < threads; ++t) before.push_back(engine.workers[t].hooked_accesses);
        strads::SyncFor(
            data, 2,
            [&w, &v](std::span<const float> batch) {
              for (int k = 0; k < 50; ++k) {
                w[0] += batch[0];
                v[1] += w[0] * 0;  // a read of w and a write of v
              }
            },
            option);
        for (int t = 0; t < threads; ++t)
          hooked.push_back(engine.workers[t].hooked_accesses - before[t]);
        w0.push_back(Local(w)[0]);
        v1.push_back(Local(v)[1]);
      });
      REQUIRE(rc == 0);
      // Every worker ran 4 / threads clocks, each hooking its first access to w and to v only.
      REQUIRE(hooked.size() == static_cast<size_t>(threads));
      for (uint64_t h : hooked) CHECK(h == 2u * (4u / static_cast<uint64_t>(threads)));
      // The batches start at 0, 2, 4, 6: 50 adds each, averaged over the workers of a clock.
      CHECK(w0[0] == (threads == 1 ? 50.0 * (0 + 2 + 4 + 6) : 50.0 * (0 + 2 + 4 + 6) / 2));
      CHECK(v1[0] == 1.0);
    }
  }
}

TEST_CASE("SyncFor: driver code after the loop reads the parameters, not a worker's copy") {
  // 2 nodes x 2 threads, data 1..8, mini-batches of 2: one clock, deltas 1, 3 | 5, 7 averaged
  // to 4. The driver thread runs worker 0, whose copy ends at 1 on node 0 and 5 on node 1: a
  // driver read (collective, through the driver's hook) that went to it would give those.
  std::mutex mu;
  std::vector<double> reads;
  const int rc = strads::testing::RunNodes(2, 2, [&](strads::Runtime& rt) {
    auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i + 1); });
    auto& w = strads::MakeDVector<double>(
        rt, 1, [](int64_t) { return 0.0; }, "w");
    strads::Replicate(rt, w);
    strads::SyncFor(
        data, 2,
        [&w](std::span<const float> batch) {
          w[0] += batch[0];
          w[0] += 0;  // a second access, through the copy's direct index
        },
        strads::BSP());
    const double read = w[0];
    std::lock_guard<std::mutex> lock(mu);
    reads.push_back(read);
  });
  REQUIRE(rc == 0);
  CHECK(reads == std::vector<double>{4.0, 4.0});
}

TEST_CASE("SyncFor with reconnaissance: an unseen access after a seen one in a clock fails") {
  // Reconnaissance runs the body on the 4 mini-batches (calls 0..3) and sees only w[0]; then
  // each clock's body accesses w[0] (its copy taken) and w[50], which must still be checked.
  const int rc = strads::testing::RunNodes(1, 1, [&](strads::Runtime& rt) {
    auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i); });
    auto& w = strads::MakeDVector<double>(
        rt, 100, [](int64_t) { return 0.0; }, "w");
    strads::Replicate(rt, w);
    int calls = 0;
    strads::SyncFor(
        data, 2,
        [&w, &calls](std::span<const float>) {
          w[0] += 1;
          if (calls++ >= 4) w[50] += 1;
        },
        strads::BSP(), /*reconnaissance=*/true);
  });
  CHECK(rc == 2);
}

namespace {

// Parameters large enough that a node of 2 threads splits its clock-end arithmetic over them:
// w (the default aggregation) and u (a custom one), every element written by every body.
constexpr int64_t kN = 40000;

std::vector<double> LargeParameters(int threads, std::vector<std::string> extra) {
  std::vector<double> result;
  const int rc = strads::testing::RunNodes(
      1, threads,
      [&](strads::Runtime& rt) {
        auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i + 1); });
        auto& w = strads::MakeDVector<double>(
            rt, kN, [](int64_t i) { return 0.001 * double(i); }, "w");
        auto& u = strads::MakeDVector<std::array<float, 2>>(
            rt, kN / 2,
            [](int64_t i) {
              return std::array<float, 2>{float(i), 1};
            },
            "u");
        strads::Replicate(rt, w);
        strads::RegisterAggregationFunc(
            u, [](const std::array<float, 2>& before, std::span<const std::array<float, 2>> d) {
              std::array<float, 2> v = before;
              for (const auto& x : d) v[0] += x[0] * 0.5f, v[1] += x[1];
              return v;
            });
        for (int epoch = 0; epoch < 2; ++epoch)
          strads::SyncFor(
              data, 2,
              [&w, &u](std::span<const float> batch) {
                for (int64_t i = 0; i < kN; ++i) w[i] += std::sin(double(i) * batch[0]);
                for (int64_t i = 0; i < kN / 2; ++i) u[i][i % 2] += std::cos(float(i) * batch[1]);
              },
              strads::BSP());
        const auto& wc = static_cast<const dvector<double>&>(w);
        const auto& uc = static_cast<const dvector<std::array<float, 2>>&>(u);
        result.assign(wc.data(), wc.data() + kN);
        for (int64_t i = 0; i < kN / 2; ++i)
          result.insert(result.end(), uc.data()[i].begin(), uc.data()[i].end());
      },
      extra);
  REQUIRE(rc == 0);
  return result;
}

}  // namespace

TEST_CASE(
    "SyncFor: a clock's deltas split over the node's threads are the serial ones, bit for bit") {
  const std::vector<double> split = LargeParameters(2, {});
  const std::vector<double> serial = LargeParameters(1, {"--sync-workers", "1x2"});
  CHECK(split.size() == serial.size());
  CHECK(split == serial);
  // It can fail: one worker alone computes something else.
  CHECK(LargeParameters(1, {}) != split);
}

TEST_CASE("SyncFor: a large parameter's custom aggregation runs on the node's threads") {
  // 40 000 elements of one double: each of 2 threads gets a run of 20 000, past the split's
  // minimum. fn is pure in what it returns; the set of threads that called it is the test's.
  auto run = [](int threads, std::vector<std::string> extra, std::set<std::thread::id>& callers) {
    std::vector<double> result;
    std::mutex mu;
    const int rc = strads::testing::RunNodes(
        1, threads,
        [&](strads::Runtime& rt) {
          auto& data = strads::MakeDVector<float>(rt, 8, [](int64_t i) { return float(i + 1); });
          auto& v = strads::MakeDVector<double>(
              rt, kN, [](int64_t i) { return 0.5 * double(i); }, "v");
          strads::RegisterAggregationFunc(v, [&](const double& before, std::span<const double> d) {
            {
              std::lock_guard<std::mutex> lock(mu);
              callers.insert(std::this_thread::get_id());
            }
            double sum = before;
            for (double x : d) sum += x;
            return sum;
          });
          strads::SyncFor(
              data, 2,
              [&v](std::span<const float> batch) {
                for (int64_t i = 0; i < kN; ++i) v[i] += double(batch[0]) * double(i % 7);
              },
              strads::BSP());
          const auto& vc = static_cast<const dvector<double>&>(v);
          result.assign(vc.data(), vc.data() + kN);
        },
        extra);
    REQUIRE(rc == 0);
    return result;
  };
  std::set<std::thread::id> split_callers, serial_callers;
  const std::vector<double> split = run(2, {}, split_callers);
  const std::vector<double> serial = run(1, {"--sync-workers", "1x2"}, serial_callers);
  CHECK(split_callers.size() == 2);
  CHECK(serial_callers.size() == 1);
  CHECK(split == serial);
}

namespace {

// One node: a worker's copy is brought up to the new values at a clock's end and counts as
// taken for the next clock (EndClockOnOneNode). 4 clocks a call; a worker skips the parameter
// in some clocks (its copy is then not this clock's), and the driver changes the parameter
// between the calls (the last clock's copies must not count for the next call).
std::vector<double> CopiesAcrossClocks(int threads, std::vector<std::string> extra,
                                       strads::SyncOption option = strads::BSP()) {
  std::vector<double> result;
  const int rc = strads::testing::RunNodes(
      1, threads,
      [&](strads::Runtime& rt) {
        auto& data = strads::MakeDVector<float>(rt, 16, [](int64_t i) { return float(i + 1); });
        auto& w = strads::MakeDVector<double>(
            rt, 1000, [](int64_t i) { return 0.25 * double(i); }, "w");
        auto& u = strads::MakeDVector<std::array<float, 4>>(
            rt, 300,
            [](int64_t i) {
              return std::array<float, 4>{float(i), 1, 2, 3};
            },
            "u");
        strads::Replicate(rt, w);
        strads::RegisterAggregationFunc(
            u, [](const std::array<float, 4>& before, std::span<const std::array<float, 4>> d) {
              std::array<float, 4> v = before;
              for (size_t j = 0; j < d.size(); ++j)
                for (size_t e = 0; e < 4; ++e) v[e] += d[j][e] * float(j + 1);
              return v;
            });
        for (int call = 0; call < 3; ++call) {
          strads::SyncFor(
              data, 2,
              [&w, &u](std::span<const float> batch) {
                // Worker 0 runs the batches starting 1, 5, 9, 13, worker 1 those starting 3, 7,
                // 11, 15: each skips a parameter in a clock and takes it again in the next
                // (w: worker 0 at 9 then 13; u: worker 1 at 7 then 11).
                const int b = static_cast<int>(batch[0]);
                if (b % 3 != 0)
                  for (int64_t i = 0; i < 1000; ++i) w[i] += std::sin(double(i) * batch[0]) + w[i];
                if (b % 3 != 1 || b == 1)
                  for (int64_t i = 0; i < 300; ++i) u[i][i % 4] += u[i][(i + 1) % 4] * batch[1];
              },
              option);
          w[call] = -1.0 * double(call);  // driver code between calls
        }
        result.assign(Local(w), Local(w) + 1000);
        for (int64_t i = 0; i < 300; ++i)
          result.insert(result.end(), Local(u)[i].begin(), Local(u)[i].end());
      },
      extra);
  REQUIRE(rc == 0);
  return result;
}

}  // namespace

TEST_CASE("SyncFor on one node: the copies a clock's end brings up are the next clock's start") {
  // The same workers played one after another by the serial emulation take every copy afresh.
  const std::vector<double> threads = CopiesAcrossClocks(2, {});
  const std::vector<double> serial = CopiesAcrossClocks(1, {"--sync-workers", "1x2"});
  CHECK(threads.size() == serial.size());
  CHECK(threads == serial);
  CHECK(CopiesAcrossClocks(1, {}) != threads);  // it can fail: one worker computes otherwise
  // Alone, a node's SSP clock is a BSP clock (its own update, applied at once), the same path.
  CHECK(CopiesAcrossClocks(2, {}, strads::SSP(1)) == serial);
}
