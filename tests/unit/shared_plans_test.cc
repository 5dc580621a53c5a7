// Under --nodes P the process's nodes plan an AsyncFor loop from one cell table and one schedule,
// the leader's (shared_plans.h), where each node made its own: the same plan, one copy.
#include "shared_plans.h"

#include <doctest/doctest.h>

#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "async_loop.h"
#include "node_context.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace strads {
namespace {

TEST_CASE("SharedPlans gives every other node the leader's plan, one object, in order") {
  SharedPlans plans(3);
  CHECK_THROWS_AS(plans.Take(1), std::logic_error);  // nothing published yet
  auto first = std::make_shared<PlannedCells>();
  first->schedule.first = 1;
  auto second = std::make_shared<PlannedCells>();
  second->schedule.first = 2;
  const std::weak_ptr<const PlannedCells> first_held = first;
  plans.Publish(first);
  plans.Publish(second);
  first.reset();
  second.reset();
  CHECK(plans.published() == 2);
  const auto one = plans.Take(1);
  const auto other = plans.Take(2);
  CHECK(one.get() == other.get());  // the same copy, not one each
  CHECK(one->schedule.first == 1);
  CHECK(plans.pending() == 1);  // both takers had the first: only its takers hold it now
  CHECK(plans.Take(1)->schedule.first == 2);
  CHECK(plans.Take(2)->schedule.first == 2);
  CHECK(plans.pending() == 0);
  CHECK_THROWS_AS(plans.Take(2), std::logic_error);  // no third
  CHECK(!first_held.expired());
  // `one` and `other` go at the end of the scope; then nothing holds the first plan.
}

// 64 x 64 cells of 2 bodies on 4 nodes (--blocks 64: 4 096 groups). With the nodes sharing
// pages (the default) the leader plans the cells' table and schedule once for the 4 nodes:
// one plan published, taken by the other 3. With --private-pages (each node as its own
// process) every node makes its own. Both give the leader the same serial order, every node
// the same groups and the values the same sums.
TEST_CASE("four in-process nodes plan from one table and schedule, the plan they made each") {
  static constexpr int64_t kSize = 4096, kBlocks = 64, kBodies = 2 * kBlocks * kBlocks;
  struct Outcome {
    const void* shared = nullptr;  // the node's SharedPlans
    uint64_t published = 0;
    size_t pending = 0;
    std::vector<int64_t> order;                       // the leader's
    std::vector<std::pair<int32_t, int64_t>> groups;  // this node's: cell, bodies
    double sum = 0;
  };
  const auto run = [](std::vector<std::string> flags) {
    std::mutex mu;
    std::vector<Outcome> outcomes(4);
    flags.push_back("--blocks");
    flags.push_back(std::to_string(kBlocks));
    const int rc = testing::RunNodes(
        4, 1,
        [&](Runtime& rt) {
          auto& w = MakeDVector<double>(
              rt, kSize, [](int64_t i) { return 0.01 * static_cast<double>(i); }, "w");
          auto& h = MakeDVector<double>(
              rt, kSize, [](int64_t i) { return 1.0 + static_cast<double>(i % 3); }, "h");
          const int64_t per_block = kSize / kBlocks;
          const auto body = [&w, &h, per_block](int64_t j) {
            const int64_t a = j % kBlocks * per_block + j % per_block;
            const int64_t b = j / kBlocks % kBlocks * per_block + j / 7 % per_block;
            const double both = w[a] + h[b];
            w[a] = 0.5 * both;
            h[b] = 0.25 * both + 0.001 * static_cast<double>(j % 11);
          };
          const auto run_group = [&body](int64_t first, std::span<const uint32_t> bodies,
                                         const std::byte* const*) {
            for (const uint32_t k : bodies) body(first + k);
          };
          AsyncLoop& loop = AsyncLoop::At(rt, {"shared_plan", 1}, 0, kBodies - 1, nullptr);
          loop.Prepare(rt, body);
          Outcome out;
          if (SharedPlans* plans = rt.context().shared_plans()) {
            out.shared = plans;
            rt.context().collectives().Barrier();  // every node has planned
            out.published = plans->published();
            out.pending = plans->pending();
          }
          if (rt.leader()) out.order = loop.schedule().SerialOrder();
          for (const auto& round : loop.schedule().rounds)
            for (const Group& g : round)
              if (g.worker == rt.node()) out.groups.emplace_back(g.cell, g.size);
          loop.Execute(rt, run_group);
          // Both DDSs in one figure: w's sum and h's, weighted apart.
          out.sum =
              Sum(rt, w, [](double x) { return x; }) + 3 * Sum(rt, h, [](double x) { return x; });
          const std::lock_guard<std::mutex> lock(mu);
          outcomes.at(static_cast<size_t>(rt.node())) = std::move(out);
        },
        flags);
    REQUIRE(rc == 0);
    return outcomes;
  };
  const std::vector<Outcome> shared = run({}), own = run({"--private-pages"});
  for (int p = 0; p < 4; ++p) {
    CAPTURE(p);
    CHECK(shared[p].shared != nullptr);
    CHECK(shared[p].shared == shared[0].shared);  // one for the process
    CHECK(shared[p].published == 1);              // one table and schedule for the 4 nodes
    CHECK(shared[p].pending == 0);                // taken by the 3 others, let go
    CHECK(own[p].shared == nullptr);
    CHECK(shared[p].groups == own[p].groups);
    CHECK(shared[p].sum == own[0].sum);
  }
  CHECK(!shared[0].order.empty());
  CHECK(shared[0].order == own[0].order);
}

}  // namespace
}  // namespace strads
