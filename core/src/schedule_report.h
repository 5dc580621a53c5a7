// ScheduleReport: what a schedule promises, for --schedule-report (one line per plan, on
// stderr from node 0): bodies, rounds, groups per round, balance, and the speed-up over the
// serial order that the placement on this run's workers allows if every body costs the same
// (exchanges not counted), so that a schedule worse than serial shows before it is timed.
#pragma once

#include <cstdint>
#include <string>

#include "schedule.h"

namespace strads {

struct ScheduleSummary {
  int64_t bodies = 0;
  size_t rounds = 0;
  size_t min_groups = 0, max_groups = 0;  // per round
  double mean_groups = 0;
  int workers = 1;
  // Estimated speed-up: bodies / sum over rounds of the most loaded worker's bodies. Balance:
  // that over the workers (1: every worker busy in every round).
  double speedup = 1;
  double balance = 1;
  bool rotation = false;
};

// `workers` the nodes x threads the schedule was placed on.
ScheduleSummary Summarize(const Schedule& schedule, int workers);

// "AsyncFor at SITE [FIRST, LAST]: B bodies, R rounds, G-G groups per round (mean G), B/R
// bodies per round, balance X, estimated speed-up over serial on W workers Y (2-D block
// rotation)". Few bodies per round mean that rounds' barriers and exchanges dominate.
std::string DescribeSchedule(const std::string& site, int64_t first, int64_t last,
                             const ScheduleSummary& summary);

}  // namespace strads
