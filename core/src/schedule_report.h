// ScheduleReport: what a schedule promises, for --schedule-report (one line per plan, on
// stderr from node 0): bodies, rounds, groups per round, balance, and the speed-up over the
// serial order that the placement on this run's workers allows if every body costs the same
// and each round costs kRoundCostBodies more, so that a schedule worse than serial shows
// before it is timed. The same estimates choose the block count and the fallback to one
// worker (AsyncLoop::Prepare).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "schedule.h"
#include "strads/runtime.h"

namespace strads {

// What a round costs besides its bodies when more than one worker runs it (the barrier of the
// node's threads, the exchange of written blocks between nodes), in loop bodies. A constant,
// not a measurement, so that every run of a program chooses the same blocks and placement (a
// recording and its replay, the runs a dual test compares); bench/random_access_bench.sh
// measures it (docs/async_for.md, "Block count").
inline constexpr double kRoundCostBodies = 64;

struct ScheduleSummary {
  int64_t bodies = 0;
  size_t rounds = 0;
  size_t min_groups = 0, max_groups = 0;  // per round
  double mean_groups = 0;
  int workers = 1;
  // Estimated speed-up over the serial order on one worker: bodies / (sum over rounds of the
  // most loaded worker's bodies + rounds x kRoundCostBodies if workers > 1). Balance: bodies /
  // that sum / workers (1: every worker busy in every round).
  double speedup = 1;
  double balance = 1;
  bool rotation = false;
  int blocks = 0;           // blocks per written DDS (0: not said)
  bool automatic = false;   // blocks chosen from the access sets (else --blocks)
  bool one_worker = false;  // speed-up below 1: the loop runs on one worker instead
};

// `workers` the nodes x threads the schedule was placed on.
ScheduleSummary Summarize(const Schedule& schedule, int workers);

// The estimated cost, in bodies, of `schedule` with a worker per group: the largest group of
// each round plus kRoundCostBodies per round. It does not depend on the run's nodes and
// threads, so the block count it chooses (which sets the serial order) does not either.
double UnboundedCost(const Schedule& schedule);

// "AsyncFor at SITE [FIRST, LAST]: B bodies, R rounds, G-G groups per round (mean G), B/R
// bodies per round, balance X, estimated speed-up over serial on W workers Y (2-D block
// rotation), N blocks (automatic)", and "; slower than serial: runs on one worker" after a
// fallback. Few bodies per round mean that rounds' barriers and exchanges dominate.
std::string DescribeSchedule(const std::string& site, int64_t first, int64_t last,
                             const ScheduleSummary& summary);

// "AsyncFor at SITE [FIRST, LAST]: reconnaissance X ms, planning Y ms": what a plan cost before
// its first run, for the line after DescribeSchedule's. (The first run itself, checked whole
// under --access-check sample, is not in it.)
// Reconnaissance ran from `start` to `planning`, planning from there to `end`.
std::string DescribePlanTime(const std::string& site, int64_t first, int64_t last,
                             std::chrono::steady_clock::time_point start,
                             std::chrono::steady_clock::time_point planning,
                             std::chrono::steady_clock::time_point end);

// Under --schedule-report, node 0 prints DescribePlanTime's line ending now, as "plan: ...".
// AsyncFor and AsyncForEach plans both call it after planning.
void ReportPlanTime(const Runtime& rt, const std::string& site, int64_t first, int64_t last,
                    std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point planning);

}  // namespace strads
