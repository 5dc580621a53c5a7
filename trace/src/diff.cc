#include "strads/trace/diff.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "streams.h"

namespace strads {

namespace {

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
    const NodeStreams sa = SplitStreams(a.node(k), threads, /*describe=*/true),
                      sb = SplitStreams(b.node(k), threads, /*describe=*/true);
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
