#include "schedule_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace strads {

ScheduleSummary Summarize(const Schedule& schedule, int workers) {
  ScheduleSummary s;
  s.workers = std::max(workers, 1);
  s.rounds = schedule.rounds.size();
  s.rotation = schedule.rotation;
  int64_t critical = 0;  // sum over rounds of the most loaded worker's bodies
  size_t groups = 0;
  s.min_groups = s.rounds == 0 ? 0 : SIZE_MAX;
  std::vector<int64_t> load(static_cast<size_t>(s.workers));
  for (const auto& round : schedule.rounds) {
    std::fill(load.begin(), load.end(), 0);
    for (const Group& g : round) {
      const int64_t n = g.size;
      s.bodies += n;
      load[static_cast<size_t>(g.worker) % load.size()] += n;
    }
    critical += *std::max_element(load.begin(), load.end());
    groups += round.size();
    s.min_groups = std::min(s.min_groups, round.size());
    s.max_groups = std::max(s.max_groups, round.size());
  }
  s.mean_groups = s.rounds == 0 ? 0 : static_cast<double>(groups) / static_cast<double>(s.rounds);
  const double rounds_cost = s.workers > 1 ? static_cast<double>(s.rounds) * kRoundCostBodies : 0;
  s.speedup = critical == 0 ? 1 : static_cast<double>(s.bodies) / (critical + rounds_cost);
  s.balance =
      critical == 0 ? 1 : static_cast<double>(s.bodies) / static_cast<double>(critical) / s.workers;
  return s;
}

double UnboundedCost(const Schedule& schedule) {
  double cost = 0;
  for (const auto& round : schedule.rounds) {
    int64_t largest = 0;
    for (const Group& g : round) largest = std::max(largest, g.size);
    cost += static_cast<double>(largest) + kRoundCostBodies;
  }
  return cost;
}

std::string DescribeSchedule(const std::string& site, int64_t first, int64_t last,
                             const ScheduleSummary& s) {
  char blocks[160] = "";
  if (s.blocks > 0)
    std::snprintf(blocks, sizeof blocks, ", %d blocks (%s)%s", s.blocks,
                  s.automatic ? "automatic" : "--blocks",
                  s.one_worker ? "; slower than serial: runs on one worker" : "");
  char text[640];
  std::snprintf(
      text, sizeof text,
      "AsyncFor at %s [%lld, %lld]: %lld bodies, %zu rounds, %zu-%zu groups per round "
      "(mean %.1f), %.0f bodies per round, balance %.2f, estimated speed-up over serial on %d "
      "worker(s) "
      "%.2fx%s%s",
      site.c_str(), static_cast<long long>(first), static_cast<long long>(last),
      static_cast<long long>(s.bodies), s.rounds, s.min_groups, s.max_groups, s.mean_groups,
      s.rounds == 0 ? 0.0 : static_cast<double>(s.bodies) / static_cast<double>(s.rounds),
      s.balance, s.workers, s.speedup, s.rotation ? " (2-D block rotation)" : "", blocks);
  return text;
}

std::string DescribePlanTime(const std::string& site, int64_t first, int64_t last,
                             std::chrono::steady_clock::time_point start,
                             std::chrono::steady_clock::time_point planning,
                             std::chrono::steady_clock::time_point end) {
  const auto ms = [](auto from, auto to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  char text[160];  // the numbers; the site, of any length, is added as it is
  std::snprintf(text, sizeof text, " [%lld, %lld]: reconnaissance %.1f ms, planning %.1f ms",
                static_cast<long long>(first), static_cast<long long>(last), ms(start, planning),
                ms(planning, end));
  return "AsyncFor at " + site + text;
}

void ReportPlanTime(const Runtime& rt, const std::string& site, int64_t first, int64_t last,
                    std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point planning) {
  if (!rt.options().schedule_report || !rt.leader()) return;
  const std::string line =
      DescribePlanTime(site, first, last, start, planning, std::chrono::steady_clock::now());
  std::fprintf(stderr, "plan: %s\n", line.c_str());
}

}  // namespace strads
