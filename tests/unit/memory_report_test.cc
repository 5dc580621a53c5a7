// The memory report's measurements: resident bytes follow touched pages, a dvector's resident
// part on each node follows its owned share, and a plan reports what it holds.
#include "memory_report.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "async_loop.h"
#include "node_context.h"
#include "reconnaissance.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace strads {
namespace {

TEST_CASE("ResidentBytes counts the pages touched, not the length") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t length = 256 * page;
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  CHECK(ResidentBytes(p, length) == 0);
  std::memset(p, 1, 64 * page);
  CHECK(ResidentBytes(p, length) == 64 * page);
  CHECK(ResidentBytes(static_cast<char*>(p) + 100, 10) == 10);  // at most the range asked for
  munmap(p, length);
}

TEST_CASE("PackedTouch keeps the DDS id, the element and whether it was written") {
  for (const Touch t : {Touch{0, false, 0}, Touch{7, true, 123456789},
                        Touch{PackedTouch::kMaxDds, true, PackedTouch::kMaxIndex},
                        Touch{PackedTouch::kMaxDds, false, 1}}) {
    const PackedTouch p(t);
    CHECK(p.dds() == t.dds);
    CHECK(p.index() == t.index);
    CHECK(p.write() == t.write);
  }
  CHECK(sizeof(PackedTouch) == 8);
}

TEST_CASE("each node's resident part of a dvector is its share, plans say what they hold") {
  constexpr int kNodes = 4;
  constexpr int64_t kSize = 1 << 20;  // 8 MB of doubles: 2 MB per node
  // The runtime maps the 8 MB array itself (dds_array.h): fresh pages whatever earlier test
  // cases in this process did to the heap.
  std::mutex mu;
  std::vector<size_t> resident(kNodes), plans(kNodes);
  std::string report;
  const int rc = testing::RunNodes(kNodes, 1, [&](Runtime& rt) {
    const auto& v = MakeDVector<double>(
        rt, kSize, [](int64_t i) { return 0.5 * i; }, "big");
    auto& w = MakeDVector<double>(
        rt, 64, [](int64_t) { return 0.0; }, "small");
    AsyncFor(0, 1023, [&v, &w](int64_t i) { w[i % 64] += v[i]; });
    // Not ResidentBytes(v.data(), ...): under --nodes the pages other nodes published are
    // mapped here too, and count at their owners.
    const size_t here = NodeResidency(const_cast<dvector<double>&>(v)).node;
    const size_t held = rt.context().LoopStateBytes();
    std::lock_guard<std::mutex> lock(mu);
    resident[rt.node()] = here;
    plans[rt.node()] = held;
    if (rt.leader()) report = DescribeNodeMemory(rt);
  });
  REQUIRE(rc == 0);
  const size_t share = kSize / kNodes * sizeof(double);
  for (int p = 0; p < kNodes; ++p) {
    CHECK(resident[p] >= share);
    // Plus the remote elements its bodies read (v[0, 1024): 8 KB) and partial pages at the ends.
    CHECK(resident[p] <= share + 8192 + 2 * static_cast<size_t>(sysconf(_SC_PAGESIZE)));
    CHECK(plans[p] > 0);
  }
  CHECK(report.find("memory: node 0 dds 0 'big': ") != std::string::npos);
  CHECK(report.find("memory: node 0 loop plans: ") != std::string::npos);
}

// The bytes the plans hold after one AsyncFor of kPlanBodies bodies on one node of 2 threads,
// body j writing w[a[j]] (a[j] scattered over w's `w_rows`) and h[j % h_rows].
constexpr int64_t kPlanBodies = 1 << 16;
size_t PlanBytes(int64_t w_rows, int64_t h_rows) {
  size_t held = 0;
  const int rc = testing::RunNodes(1, 2, [&](Runtime& rt) {
    const auto& a = MakeDVector<int64_t>(
        rt, kPlanBodies, [&](int64_t i) { return i * 7919 % w_rows; }, "a");
    auto& w = MakeDVector<double>(
        rt, w_rows, [](int64_t) { return 0.0; }, "w");
    auto& h = MakeDVector<double>(
        rt, h_rows, [](int64_t) { return 0.0; }, "h");
    AsyncFor(0, kPlanBodies - 1, [&a, &w, &h, h_rows](int64_t j) {
      w[a[j]] += 1;
      h[j % h_rows] += 1;
    });
    held = rt.context().LoopStateBytes();
  });
  REQUIRE(rc == 0);
  return held;
}

TEST_CASE("a plan on one node holds about 8 bytes a body: its offset and its digest") {
  // w (4096) and h (1024) give 2^20 fine pairs, too many for a table of pair sums: checked by
  // default, a 32-bit offset and a 32-bit digest per body, plus the schedule's few hundred
  // groups and cells.
  const size_t held = PlanBytes(4096, 1024);
  CHECK(held >= kPlanBodies * 8);
  CHECK(held <= kPlanBodies * 8 + 256 * 1024);
}

TEST_CASE("a plan on one node whose bodies write a pair keeps a digest per group: 4 bytes a body") {
  // w (64) and h (32): 2 048 fine pairs, under a byte a body of a thread's 32 768 bodies, so
  // the digests are summed by fine pair in reconnaissance and kept per group in the plan: a
  // 32-bit offset per body, plus the schedule's groups and cells, well under the 8 bytes above.
  const size_t held = PlanBytes(64, 32);
  MESSAGE("plan bytes: " << held << " for " << kPlanBodies << " bodies");
  CHECK(held >= kPlanBodies * 4);
  CHECK(held <= kPlanBodies * 5);
}

// Runs `driver` on 4 nodes of 1 thread with `flags`; returns what it returned on each node.
template <class T, class Driver>
std::vector<T> OnFourNodes(std::vector<std::string> flags, Driver driver) {
  std::mutex mu;
  std::vector<T> results(4);
  const int rc = testing::RunNodes(
      4, 1,
      [&](Runtime& rt) {
        T result = driver(rt);
        std::lock_guard<std::mutex> lock(mu);
        results[rt.node()] = std::move(result);
      },
      std::move(flags));
  REQUIRE(rc == 0);
  return results;
}

// A read-only dvector whose every page every node's bodies read: under --nodes P the nodes
// share the owners' published pages, so a node holds its share of it (plus edge pages), where
// with --private-pages (an MPI rank's layout) it holds nearly the full length.
std::vector<DdsResidency> ScatteredReadResidency(std::vector<std::string> flags) {
  constexpr int64_t kSize = 1 << 18;  // 2 MB of doubles, 512 pages
  return OnFourNodes<DdsResidency>(std::move(flags), [](Runtime& rt) {
    const auto& v = MakeDVector<double>(
        rt, kSize, [](int64_t i) { return 0.25 * i; }, "read");
    auto& w = MakeDVector<double>(
        rt, kSize / 512, [](int64_t) { return 0.0; }, "sums");
    // Body i writes its own element of w and reads 4 pages of v: each node's 128 bodies read
    // every page, first in reconnaissance (fetched) and then in the call (served).
    AsyncFor(0, kSize / 512 - 1, [&v, &w](int64_t i) {
      for (int64_t k = 0; k < 4; ++k) w[i] += v[((i % 128) * 4 + k) * 512 + i / 128];
    });
    AsyncFor(0, kSize / 512 - 1, [&v, &w](int64_t i) {
      for (int64_t k = 0; k < 4; ++k) w[i] += v[((i % 128) * 4 + k) * 512 + i / 128];
    });
    return NodeResidency(const_cast<dvector<double>&>(v));
  });
}

TEST_CASE("under --nodes P the pages of values a node only reads are not its own") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t share = (size_t{1} << 18) / 4 * sizeof(double);
  for (const DdsResidency& r : ScatteredReadResidency({})) {
    CHECK(r.node >= share);
    CHECK(r.node <= share + 2 * page);             // its published share and its edge pages
    CHECK(r.read_shared >= 3 * share - 2 * page);  // the others' pages, one copy each
  }
  for (const DdsResidency& r : ScatteredReadResidency({"--private-pages"})) {
    CHECK(r.node >= 3 * share);  // every page it read a copy of its own
    CHECK(r.read_shared == 0);
  }
}

TEST_CASE("blocks of a written dvector that visit a node do not stay resident there") {
  constexpr int kNodes = 4;
  static constexpr int64_t kSize = 1 << 18;  // 2 MB of doubles per vector: 512 KB per node
  std::mutex mu;
  std::vector<size_t> resident(kNodes);
  const int rc = testing::RunNodes(kNodes, 1, [&](Runtime& rt) {
    auto& w = MakeDVector<double>(
        rt, kSize, [](int64_t) { return 0.0; }, "w");
    auto& h = MakeDVector<double>(
        rt, kSize, [](int64_t) { return 0.0; }, "h");
    // Every body writes one element of each, scattered: the schedule moves blocks of one of
    // them from node to node, and every page of a visiting block is written.
    AsyncFor(0, kSize / 4 - 1, [&w, &h](int64_t j) {
      w[j * 7919 % kSize] += 1;
      h[j * 104729 % kSize] += 1;
    });
    const size_t here = ResidentBytes(w.data(), kSize * sizeof(double)) +
                        ResidentBytes(h.data(), kSize * sizeof(double));
    std::lock_guard<std::mutex> lock(mu);
    resident[rt.node()] = here;
  });
  REQUIRE(rc == 0);
  const size_t shares = 2 * kSize / kNodes * sizeof(double);
  for (int p = 0; p < kNodes; ++p) {
    CHECK(resident[p] >= shares);
    // Partial pages at the ends of the owned ranges and of the blocks.
    CHECK(resident[p] <= shares + 64 * static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  }
}

// A 2-D rotation of 16 x 16 cells on 4 nodes: 256 groups, each node running 64. The leader keeps
// every group (the serial order is made from its schedule); every other node only its own.
TEST_CASE("a node other than the leader keeps only the groups it runs") {
  constexpr int kNodes = 4;
  static constexpr int64_t kSize = 4096, kBodies = 1 << 15;
  std::mutex mu;
  std::vector<size_t> kept(kNodes), runs(kNodes);
  std::vector<double> sums(kNodes);
  const int rc = testing::RunNodes(
      kNodes, 1,
      [&](Runtime& rt) {
        auto& w = MakeDVector<double>(
            rt, kSize, [](int64_t) { return 0.0; }, "w");
        auto& h = MakeDVector<double>(
            rt, kSize, [](int64_t i) { return 1.0 + static_cast<double>(i % 7); }, "h");
        const auto body = [&w, &h](int64_t j) {
          const double both = w[j * 7919 % kSize] + h[j * 104729 % kSize];
          w[j * 7919 % kSize] = 0.5 * both;
          h[j * 104729 % kSize] = 0.25 * both;
        };
        AsyncLoop& loop = AsyncLoop::At(rt, {"kept_groups", 1}, 0, kBodies - 1, nullptr);
        loop.Prepare(rt, body);
        loop.Execute(rt,
                     [&](int64_t first, std::span<const uint32_t> bodies, const std::byte* const*) {
                       for (uint32_t k : bodies) body(first + k);
                     });
        size_t groups = 0, mine = 0;
        for (const auto& round : loop.schedule().rounds)
          for (const Group& g : round) {
            ++groups;
            if (g.worker == rt.node()) ++mine;  // one thread a node: worker = node
          }
        const double sum =
            Sum(rt, w, [](double x) { return x; }) + Sum(rt, h, [](double x) { return x; });
        std::lock_guard<std::mutex> lock(mu);
        kept[rt.node()] = groups;
        runs[rt.node()] = mine;
        sums[rt.node()] = sum;
      },
      {"--blocks", "16"});
  REQUIRE(rc == 0);
  CHECK(kept[0] == 256);
  size_t run = runs[0];
  for (int p = 1; p < kNodes; ++p) {
    CHECK(kept[p] == runs[p]);  // before: all 256
    CHECK(kept[p] < 256);
    run += runs[p];
    CHECK(sums[p] == sums[0]);
  }
  CHECK(run == 256);  // every group runs on exactly one node
}

// 64 x 64 cells of 2 bodies each on 4 nodes: a node runs about a quarter of the 4 096 groups.
// What a node other than the leader keeps of the plan must follow those groups, not the loop's
// cells: the cells' signatures went after planning, but `signatures_ = {}` kept their outer
// array (24 bytes a cell: --nodes 64 at 128 blocks, 393 KB on each node, more than its groups).
TEST_CASE("a non-leader's plan holds its own groups, nothing per cell of the loop") {
  static constexpr int64_t kSize = 4096, kBlocks = 64, kBodies = 2 * kBlocks * kBlocks;
  struct Held {
    size_t bytes = 0, groups = 0;
  };
  const auto held = OnFourNodes<Held>({"--blocks", "64"}, [](Runtime& rt) {
    auto& w = MakeDVector<double>(
        rt, kSize, [](int64_t) { return 0.0; }, "w");
    auto& h = MakeDVector<double>(
        rt, kSize, [](int64_t) { return 1.0; }, "h");
    const int64_t per_block = kSize / kBlocks;
    const auto body = [&w, &h, per_block](int64_t j) {
      const int64_t a = j % kBlocks * per_block, b = j / kBlocks % kBlocks * per_block;
      w[a] += h[b];
      h[b] *= 0.5;
    };
    AsyncLoop& loop = AsyncLoop::At(rt, {"own_plan", 1}, 0, kBodies - 1, nullptr);
    loop.Prepare(rt, body);
    Held result{loop.HeldBytes(), 0};
    for (const auto& round : loop.schedule().rounds) result.groups += round.size();
    return result;
  });
  for (int p = 1; p < 4; ++p) {
    CAPTURE(p);
    CAPTURE(held[p].bytes);
    CHECK(held[p].groups < 2 * kBlocks * kBlocks / 4);
    // Per group it runs: the group (40 bytes), its entry among the node's (a pointer and two
    // lists: 56), its two bodies' offsets, digests and prefetch addresses (32) and the 8 dummy
    // addresses past them (64), and its share of the exchanges and round lists: about 260
    // bytes. The cells' table would add 24 bytes for each of the loop's 4 096 cells, about 96
    // more per group run here.
    CHECK(held[p].bytes <= 300 * held[p].groups);
  }
}

// 96 x 96 cells of 2 bodies: 9 216 groups, so planning sends the body lists in ten batches of
// whole rounds (kBodyListBatchGroups, 1 024 groups; one exchange held every node's lists at
// once). On 4 nodes every group must still get its bodies in order: the leader's serial order is
// the one node's, and so are the values.
TEST_CASE("body lists sent in batches of rounds give the one-node schedule and values") {
  static constexpr int64_t kBlocks = 96, kPerBlock = 8, kSize = kBlocks * kPerBlock;
  static constexpr int64_t kBodies = 2 * kBlocks * kBlocks;
  struct Outcome {
    std::vector<int64_t> order;  // the leader's only
    size_t groups = 0, bodies_run = 0;
    double sum = 0;
  };
  const auto on = [](int nodes) {
    std::mutex mu;
    std::vector<Outcome> outcomes(static_cast<size_t>(nodes));
    const int rc = testing::RunNodes(
        nodes, 1,
        [&](Runtime& rt) {
          auto& w = MakeDVector<double>(
              rt, kSize, [](int64_t i) { return 0.01 * static_cast<double>(i); }, "w");
          auto& h = MakeDVector<double>(
              rt, kSize, [](int64_t i) { return 1.0 + static_cast<double>(i % 5); }, "h");
          const auto body = [&w, &h](int64_t j) {
            const int64_t a = j % kBlocks * kPerBlock + j % kPerBlock;
            const int64_t b = j / kBlocks % kBlocks * kPerBlock + j / 3 % kPerBlock;
            const double both = w[a] + h[b] + static_cast<double>(j);
            w[a] = 0.5 * both;
            h[b] = 0.25 * both;
          };
          AsyncLoop& loop = AsyncLoop::At(rt, {"batched_lists", 1}, 0, kBodies - 1, nullptr);
          loop.Prepare(rt, body);
          Outcome out;
          for (const auto& round : loop.schedule().rounds)
            for (const Group& g : round)
              if (g.worker == rt.node()) out.bodies_run += g.bodies.size();
          if (rt.leader()) {
            out.order = loop.schedule().SerialOrder();
            for (const auto& round : loop.schedule().rounds) out.groups += round.size();
          }
          loop.Execute(
              rt, [&](int64_t first, std::span<const uint32_t> bodies, const std::byte* const*) {
                for (uint32_t k : bodies) body(first + k);
              });
          out.sum = Sum(rt, w, [](double x) { return x; }) + Sum(rt, h, [](double x) { return x; });
          std::lock_guard<std::mutex> lock(mu);
          outcomes[static_cast<size_t>(rt.node())] = std::move(out);
        },
        {"--blocks", std::to_string(kBlocks)});
    REQUIRE(rc == 0);
    return outcomes;
  };
  const std::vector<Outcome> one = on(1), four = on(4);
  REQUIRE(one[0].groups == kBlocks * kBlocks);
  REQUIRE(four[0].groups == kBlocks * kBlocks);
  CHECK(four[0].order == one[0].order);
  size_t run = 0;
  for (const Outcome& o : four) {
    run += o.bodies_run;
    CHECK(o.sum == one[0].sum);
  }
  CHECK(run == kBodies);  // every body in its group on the node that runs it, once
}

// The peak, not only what is left after the call: sampled inside the bodies, the bytes a node
// holds of two written dvectors (mapped, so fresh pages whatever earlier test cases did to the
// heap; dds_array_test.cc checks Discard on a heap array). `flags` {}: the one-process cluster
// gives departed blocks back in batches; {"--private-pages"}: not before the call's end.
std::vector<size_t> PeakOfRotatedBlocks(std::vector<std::string> flags) {
  static constexpr int64_t kSize = 1 << 17;  // 1 MB of doubles: 256 KB a node
  constexpr int64_t kBodies = 1 << 16;
  flags.insert(flags.end(), {"--blocks", "16"});
  return OnFourNodes<size_t>(std::move(flags), [](Runtime& rt) {
    auto& w = MakeDVector<double>(
        rt, kSize, [](int64_t) { return 0.0; }, "w");
    auto& h = MakeDVector<double>(
        rt, kSize, [](int64_t) { return 0.0; }, "h");
    size_t most = 0;  // one thread a node: no race
    for (int call = 0; call < 2; ++call) {
      const bool planned = call > 0;  // the first call is reconnaissance too
      AsyncFor(0, kBodies - 1, [&](int64_t j) {
        w[j * 7919 % kSize] += 1;
        h[j * 104729 % kSize] += 1;
        // The node's own pages, not those it maps from the owners' shared files.
        if (planned && j % 64 == 0)
          most = std::max(most, NodeResidency(w).node + NodeResidency(h).node);
      });
    }
    return most;
  });
}

TEST_CASE("a rotated written dvector's visiting blocks leave a node's memory with them") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t share = (size_t{1} << 17) / 4 * sizeof(double);
  // Two owned shares, the blocks visiting in this round (4 groups of 2 blocks of 16 pages: up to
  // 2 shares), 64 KB of departed ones not yet given back, partial pages.
  const size_t bound = 4 * share + (64 << 10) + 32 * page;
  for (size_t peak : PeakOfRotatedBlocks({})) {
    CHECK(peak >= 2 * share);
    CHECK(peak <= bound);
  }
  // Kept until the call's end, the visitors fill in most of both arrays (8 shares).
  size_t most = 0;
  for (size_t peak : PeakOfRotatedBlocks({"--private-pages"})) most = std::max(most, peak);
  CHECK(most > bound);
}

}  // namespace
}  // namespace strads
