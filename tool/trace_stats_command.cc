// `strads trace stats DIR [--json]`: per node and operator site, time, waits and events by kind;
// the message matrix; lock grants logged and implied; logged lock handovers per DDS and the hottest
// elements; SSP polls that found no update (trace/include/strads/trace/stats.h).
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "commands.h"
#include "json.h"
#include "strads/trace/stats.h"

namespace strads::tool {

namespace {

constexpr uint64_t kElementMask = (uint64_t{1} << 40) - 1;

std::string Milliseconds(uint64_t ns) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << static_cast<double>(ns) * 1e-6 << " ms";
  return out.str();
}

// "lock_grant 3, delivery 2": the kinds that occur.
std::string KindsText(const TraceStats::KindCounts& counts) {
  std::string out;
  for (size_t k = 1; k < counts.size(); ++k) {
    if (counts[k] == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(EventKindName(static_cast<EventKind>(k))) + " " +
           std::to_string(counts[k]);
  }
  return out.empty() ? "no events" : out;
}

std::string KindsJson(const TraceStats::KindCounts& counts) {
  std::string out = "{";
  for (size_t k = 1; k < counts.size(); ++k) {
    if (counts[k] == 0) continue;
    out += (out.size() > 1 ? ", " : "") + JsonString(EventKindName(static_cast<EventKind>(k))) +
           ": " + std::to_string(counts[k]);
  }
  return out + "}";
}

// "lock 3 (1.250 ms), collective 2 (0.100 ms)": the kinds waited for.
std::string WaitsText(const TraceStats::Waits& w) {
  std::string out;
  for (size_t k = 0; k < TraceStats::kWaitKinds; ++k) {
    if (w.count[k] == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(WaitKindName(k)) + " " +
           std::to_string(w.count[k]) + " (" + Milliseconds(w.ns[k]) + ")";
  }
  return out.empty() ? "none" : out;
}

std::string WaitsJson(const TraceStats::Waits& w) {
  std::string out = "{";
  for (size_t k = 0; k < TraceStats::kWaitKinds; ++k) {
    if (w.count[k] == 0) continue;
    out += (out.size() > 1 ? ", " : "") + JsonString(WaitKindName(k)) +
           ": {\"count\": " + std::to_string(w.count[k]) + ", \"ns\": " + std::to_string(w.ns[k]) +
           "}";
  }
  return out + "}";
}

void PrintText(const std::string& dir, const TraceReader& trace, const TraceStats& s,
               std::ostream& out) {
  out << "trace " << dir << ": " << trace.nodes() << " nodes x "
      << trace.manifest().threads_per_node << " threads\n";
  for (const TraceStats::Node& n : s.nodes) {
    const uint64_t logged = n.events_by_kind[static_cast<size_t>(EventKind::kLockGrant)];
    out << "node " << n.node << ": " << n.events << " events (" << KindsText(n.events_by_kind)
        << ")";
    if (n.lock_acquires > 0)
      out << "; " << n.lock_acquires << " lock grants, " << logged << " logged";
    out << "\n  time " << Milliseconds(n.time_ns) << "; waits: " << WaitsText(n.waits) << "\n";
    for (const TraceStats::Site& site : n.sites)
      out << "  " << site.name << ": " << site.invocations << " invocations, "
          << Milliseconds(site.time_ns) << "; " << KindsText(site.events)
          << "; waits: " << WaitsText(site.waits) << "\n";
    if (n.ssp_polls > 0)
      out << "  SSP polls: " << n.ssp_polls << ", " << n.ssp_polls_empty << " found no update\n";
  }
  out << "messages delivered (row: from, column: to):\n" << std::setw(8) << "";
  for (size_t to = 0; to < s.messages.size(); ++to)
    out << std::setw(10) << "node " + std::to_string(to);
  out << "\n";
  for (size_t from = 0; from < s.messages.size(); ++from) {
    out << std::setw(8) << "node " + std::to_string(from);
    for (uint64_t count : s.messages[from]) out << std::setw(10) << count;
    out << "\n";
  }
  if (s.handovers_per_dds.empty()) return;
  out << "logged lock handovers per DDS:";
  for (const auto& [dds, count] : s.handovers_per_dds)
    out << " dds " << dds << ": " << count << ";";
  out << "\nhottest elements (logged handovers):";
  for (const auto& [lock, count] : s.hottest_elements)
    out << " dds " << (lock >> 40) << " [" << (lock & kElementMask) << "]: " << count << ";";
  out << "\n";
}

}  // namespace

void PrintStatsJson(const TraceStats& s, std::ostream& out) {
  out << "{\"nodes\": [";
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const TraceStats::Node& n = s.nodes[i];
    out << (i ? ", " : "") << "{\"node\": " << n.node << ", \"events\": " << n.events
        << ", \"events_by_kind\": " << KindsJson(n.events_by_kind)
        << ", \"lock_acquires\": " << n.lock_acquires << ", \"ssp_polls\": " << n.ssp_polls
        << ", \"ssp_polls_empty\": " << n.ssp_polls_empty << ", \"time_ns\": " << n.time_ns
        << ", \"waits\": " << WaitsJson(n.waits) << ", \"sites\": [";
    for (size_t j = 0; j < n.sites.size(); ++j)
      out << (j ? ", " : "") << "{\"site\": " << JsonString(n.sites[j].name)
          << ", \"invocations\": " << n.sites[j].invocations
          << ", \"events_by_kind\": " << KindsJson(n.sites[j].events)
          << ", \"time_ns\": " << n.sites[j].time_ns
          << ", \"waits\": " << WaitsJson(n.sites[j].waits) << "}";
    out << "]}";
  }
  out << "], \"messages\": [";
  for (size_t from = 0; from < s.messages.size(); ++from) {
    out << (from ? ", " : "") << "[";
    for (size_t to = 0; to < s.messages[from].size(); ++to)
      out << (to ? ", " : "") << s.messages[from][to];
    out << "]";
  }
  out << "], \"handovers_per_dds\": {";
  for (size_t i = 0; i < s.handovers_per_dds.size(); ++i)
    out << (i ? ", " : "") << "\"" << s.handovers_per_dds[i].first
        << "\": " << s.handovers_per_dds[i].second;
  out << "}, \"hottest_elements\": [";
  for (size_t i = 0; i < s.hottest_elements.size(); ++i) {
    const auto& [lock, count] = s.hottest_elements[i];
    out << (i ? ", " : "") << "{\"dds\": " << (lock >> 40)
        << ", \"element\": " << (lock & kElementMask) << ", \"handovers\": " << count << "}";
  }
  out << "]}\n";
}

void AddTraceStatsCommand(CLI::App& parent, CommandResult&) {
  AddTraceReportCommand(parent, "stats",
                        "Counts per node and operator, the message matrix, lock contention",
                        [](const std::string& dir, bool json, std::ostream& out) {
                          const TraceReader trace = OpenTrace(dir);
                          const TraceStats s = ComputeStats(trace);
                          if (json)
                            PrintStatsJson(s, out);
                          else
                            PrintText(dir, trace, s, out);
                        });
}

}  // namespace strads::tool
