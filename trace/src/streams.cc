#include "streams.h"

#include <algorithm>
#include <optional>

#include "strads/trace/describe.h"

namespace strads {

NodeStreams SplitStreams(const NodeTrace& n, uint32_t threads, bool describe) {
  NodeStreams s;
  s.of.resize(threads + 1);
  // Operator context of the driver's events: the last boundary passed. A worker's lock grant
  // numbered n belongs to the first operator whose end digest of that thread counts n or more.
  s.wheres.push_back("before the first operator");
  s.sites.push_back("");
  size_t current = 0;
  std::vector<std::vector<std::pair<uint64_t, size_t>>> digests(threads);
  std::vector<std::pair<uint32_t, uint64_t>> unassigned;  // digests before their operator's end
  for (size_t i = 0; i < n.events.size(); ++i) {
    const Event& e = n.events[i];
    if (e.kind() == EventKind::kWait) continue;  // timing, not a decision: no stream has it
    // An operator's begin and end events belong to it; after the end comes "after" it.
    size_t after = current;
    if (e.kind() == EventKind::kOperatorBegin || e.kind() == EventKind::kOperatorEnd) {
      const OperatorEvent o = e.operator_event();
      const std::string site = DescribeSite(n.sites, o.site);
      const std::string invocation = " (invocation " + std::to_string(o.invocation) + ")";
      if (e.kind() == EventKind::kOperatorBegin) {
        s.wheres.push_back("in " + site + invocation);
        s.sites.push_back(site);
        current = after = s.wheres.size() - 1;
      } else {
        // The digests just before this end belong to the operator it ends.
        for (auto [t, acquires] : unassigned) digests[t].emplace_back(acquires, current);
        unassigned.clear();
        s.wheres.push_back("after " + site + invocation);
        s.sites.push_back("");
        after = s.wheres.size() - 1;
      }
    }
    if (e.kind() == EventKind::kThreadDigest && e.thread() < threads)
      unassigned.emplace_back(e.thread(), e.thread_digest().acquires);
    if (e.kind() == EventKind::kLockGrant && e.thread() < threads) {
      s.of[e.thread()].push_back({i, describe ? Describe(e, n.sites) : "", 0});
    } else {
      s.of[threads].push_back({i, describe ? Describe(e, n.sites) : "", current});
    }
    current = after;
  }
  s.wheres.push_back("in an operator the trace does not finish");
  s.sites.push_back("(unfinished operator)");
  for (uint32_t t = 0; t < threads; ++t) {
    for (StreamEvent& ev : s.of[t]) {
      const uint64_t acquire = n.events[ev.index].lock_grant().acquire;
      const auto& d = digests[t];
      const auto it = std::lower_bound(
          d.begin(), d.end(), acquire,
          [](const std::pair<uint64_t, size_t>& entry, uint64_t a) { return entry.first < a; });
      ev.where = it == d.end() ? s.wheres.size() - 1 : it->second;
    }
  }
  return s;
}

}  // namespace strads
