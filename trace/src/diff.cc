#include "strads/trace/diff.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "strads/trace/describe.h"

namespace strads {

namespace {

// One event of a stream: its index in node-K.log, its text, the operator invocation it is in.
struct StreamEvent {
  uint64_t index;
  std::string text;
  size_t where;  // into Streams::wheres
};

// A node log cut into its streams: worker threads 0..T-1, then the driver (T).
struct Streams {
  std::vector<std::vector<StreamEvent>> of;
  std::vector<std::string> wheres;  // operator invocations, in order of first appearance
};

Streams Split(const NodeTrace& n, uint32_t threads) {
  Streams s;
  s.of.resize(threads + 1);
  // Operator context of the driver's events: the last boundary passed. A worker's lock grant
  // numbered n belongs to the first operator whose end digest of that thread counts n or more.
  s.wheres.push_back("before the first operator");
  size_t current = 0;
  std::vector<std::vector<std::pair<uint64_t, size_t>>> digests(threads);
  std::vector<std::pair<uint32_t, uint64_t>> unassigned;  // digests before their operator's end
  for (size_t i = 0; i < n.events.size(); ++i) {
    const Event& e = n.events[i];
    if (e.kind() == EventKind::kOperatorBegin || e.kind() == EventKind::kOperatorEnd) {
      const OperatorEvent o = e.operator_event();
      s.wheres.push_back(std::string(e.kind() == EventKind::kOperatorBegin ? "in " : "after ") +
                         DescribeSite(n.sites, o.site) + " (invocation " +
                         std::to_string(o.invocation) + ")");
      if (e.kind() == EventKind::kOperatorEnd) {
        // The digests just before this end belong to the operator it ends.
        for (auto [t, acquires] : unassigned) digests[t].emplace_back(acquires, current);
        unassigned.clear();
      }
      current = s.wheres.size() - 1;
    }
    if (e.kind() == EventKind::kThreadDigest && e.thread() < threads)
      unassigned.emplace_back(e.thread(), e.thread_digest().acquires);
    if (e.kind() == EventKind::kLockGrant && e.thread() < threads) {
      s.of[e.thread()].push_back({i, Describe(e, n.sites), 0});
    } else {
      s.of[threads].push_back({i, Describe(e, n.sites), current});
    }
  }
  s.wheres.push_back("in an operator the trace does not finish");
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

std::string ProgramName(const ManifestInfo& m) {
  return std::filesystem::path(m.program).filename().string();
}

}  // namespace

TraceDiff DiffTraces(const TraceReader& a, const TraceReader& b) {
  TraceDiff diff;
  const ManifestInfo &ma = a.manifest(), &mb = b.manifest();
  if (ProgramName(ma) != ProgramName(mb))
    diff.not_comparable = "different programs: " + ProgramName(ma) + " and " + ProgramName(mb);
  else if (ma.node_count != mb.node_count)
    diff.not_comparable = "different node counts: " + std::to_string(ma.node_count) + " and " +
                          std::to_string(mb.node_count);
  else if (ma.threads_per_node != mb.threads_per_node)
    diff.not_comparable = "different threads per node: " + std::to_string(ma.threads_per_node) +
                          " and " + std::to_string(mb.threads_per_node);
  if (!diff.not_comparable.empty()) {
    diff.verdict = TraceDiff::Verdict::kNotComparable;
    return diff;
  }
  const uint32_t threads = ma.threads_per_node;
  for (int k = 0; k < a.nodes(); ++k) {
    const Streams sa = Split(a.node(k), threads), sb = Split(b.node(k), threads);
    diff.events += a.node(k).events.size();
    std::map<std::string, TraceDiff::OperatorCount> counts;  // by where, in A
    std::vector<std::string> order;
    for (uint32_t t = 0; t <= threads; ++t) {
      const auto &ea = sa.of[t], &eb = sb.of[t];
      // Per operator invocation: the events of this stream in it, in A and in B.
      std::map<std::string,
               std::pair<std::vector<const StreamEvent*>, std::vector<const StreamEvent*>>>
          by_where;
      for (const StreamEvent& e : ea) {
        const std::string& w = sa.wheres[e.where];
        if (!counts.count(w)) order.push_back(w), counts[w] = {k, w, 0, 0, 0};
        by_where[w].first.push_back(&e);
      }
      for (const StreamEvent& e : eb) by_where[sb.wheres[e.where]].second.push_back(&e);
      for (const auto& [w, pair] : by_where) {
        const auto &xa = pair.first, &xb = pair.second;
        if (!counts.count(w)) order.push_back(w), counts[w] = {k, w, 0, 0, 0};
        TraceDiff::OperatorCount& c = counts[w];
        c.events_a += xa.size();
        c.events_b += xb.size();
        const size_t common = std::min(xa.size(), xb.size());
        for (size_t i = 0; i < common; ++i) c.differing += xa[i]->text != xb[i]->text;
        c.differing += std::max(xa.size(), xb.size()) - common;
      }
      // The stream's first difference.
      size_t i = 0;
      while (i < ea.size() && i < eb.size() && ea[i].text == eb[i].text) ++i;
      if (i == ea.size() && i == eb.size()) continue;
      TraceDiff::First f;
      f.node = k;
      f.thread = t;
      f.driver = t == threads;
      f.position = i;
      const std::string ended = "(the stream ends)";
      if (i < ea.size()) f.index_a = ea[i].index;
      if (i < eb.size()) f.index_b = eb[i].index;
      f.event_a = i < ea.size() ? ea[i].text : ended;
      f.event_b = i < eb.size() ? eb[i].text : ended;
      f.where = i < ea.size() ? sa.wheres[ea[i].where] : sb.wheres[eb[i].where];
      diff.firsts.push_back(f);
    }
    for (const std::string& w : order)
      if (counts[w].differing > 0) diff.per_operator.push_back(counts[w]);
  }
  diff.verdict =
      diff.firsts.empty() ? TraceDiff::Verdict::kIdentical : TraceDiff::Verdict::kDifferent;
  return diff;
}

}  // namespace strads
