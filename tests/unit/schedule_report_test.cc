#include "schedule_report.h"

#include <doctest/doctest.h>

namespace strads {
namespace {

Group GroupOf(int32_t worker, int64_t bodies, int64_t first) {
  Group g;
  g.worker = worker;
  g.size = bodies;
  for (int64_t i = 0; i < bodies; ++i) g.bodies.push_back(static_cast<uint32_t>(first + i));
  return g;
}

TEST_CASE("Summarize: the most loaded worker of each round bounds the speed-up") {
  Schedule s;
  // Round 0: workers 0 and 1 run 4 bodies each; round 1: worker 0 runs 6, worker 1 runs 2.
  s.rounds.push_back({GroupOf(0, 4, 0), GroupOf(1, 4, 4)});
  s.rounds.push_back({GroupOf(0, 3, 8), GroupOf(0, 3, 11), GroupOf(1, 2, 14)});
  const ScheduleSummary sum = Summarize(s, 2);
  CHECK(sum.bodies == 16);
  CHECK(sum.rounds == 2);
  CHECK(sum.min_groups == 2);
  CHECK(sum.max_groups == 3);
  CHECK(sum.mean_groups == doctest::Approx(2.5));
  // Each round also costs kRoundCostBodies on more than one worker.
  CHECK(sum.speedup == doctest::Approx(16.0 / (4 + 6 + 2 * kRoundCostBodies)));
  CHECK(sum.balance == doctest::Approx(16.0 / 10 / 2));
  CHECK(Summarize(s, 1).speedup == doctest::Approx(1.0));
  ScheduleSummary told = sum;
  told.speedup = 1.6;
  CHECK(DescribeSchedule("x.cc:3", 0, 15, told) ==
        "AsyncFor at x.cc:3 [0, 15]: 16 bodies, 2 rounds, 2-3 groups per round (mean 2.5), 8 "
        "bodies per round, balance 0.80, estimated speed-up over serial on 2 worker(s) 1.60x");
  told.blocks = 4;
  told.automatic = true;
  told.one_worker = true;
  CHECK(DescribeSchedule("x.cc:3", 0, 15, told)
            .ends_with("1.60x, 4 blocks (automatic); slower than serial: runs on one worker"));
}

TEST_CASE("UnboundedCost: the largest group of each round and a round cost per round") {
  Schedule s;
  s.rounds.push_back({GroupOf(0, 4, 0), GroupOf(1, 5, 4)});
  s.rounds.push_back({GroupOf(0, 3, 9)});
  CHECK(UnboundedCost(s) == doctest::Approx(5 + 3 + 2 * kRoundCostBodies));
  CHECK(UnboundedCost(Schedule{}) == 0);
}

TEST_CASE("Summarize: one group per round is slower than serial, by the rounds' cost") {
  Schedule s;
  for (int r = 0; r < 5; ++r) s.rounds.push_back({GroupOf(r % 2, 10, 10 * r)});
  const ScheduleSummary sum = Summarize(s, 2);
  CHECK(sum.speedup == doctest::Approx(50.0 / (50 + 5 * kRoundCostBodies)));
  CHECK(sum.speedup < 1);
  CHECK(sum.balance == doctest::Approx(0.5));
}

}  // namespace
}  // namespace strads
