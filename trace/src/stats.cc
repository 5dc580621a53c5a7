#include "strads/trace/stats.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>

#include "strads/trace/describe.h"
#include "streams.h"

namespace strads {

uint64_t LockAcquires(const NodeTrace& node) {
  std::map<uint32_t, uint64_t> last;  // per thread, from its last digest
  for (const Event& e : node.events)
    if (e.kind() == EventKind::kThreadDigest) last[e.thread()] = e.thread_digest().acquires;
  uint64_t sum = 0;
  for (const auto& [thread, acquires] : last) sum += acquires;
  return sum;
}

namespace {

// Operator times and waits (events that carry a time: EventTimeNs). The driver runs one operator
// at a time, so its invocations are disjoint intervals in time order; a wait belongs to the one
// its start falls in. `site_index`: node.sites by name, extended here.
void AddTimes(const NodeTrace& n, std::map<std::string, size_t>& site_index,
              TraceStats::Node& node) {
  struct Invocation {
    uint64_t begin, end;
    size_t site;
  };
  std::vector<Invocation> invocations;
  std::optional<Invocation> open;
  uint64_t first = UINT64_MAX, last = 0;
  auto site_of = [&](uint64_t id) {
    auto [it, fresh] = site_index.try_emplace(DescribeSite(n.sites, id), node.sites.size());
    if (fresh) node.sites.emplace_back(it->first);
    return it->second;
  };
  for (const Event& e : n.events) {
    if (e.kind() == EventKind::kOperatorBegin) {
      const OperatorEvent o = e.operator_event();
      open = Invocation{o.time_ns, o.time_ns, site_of(o.site)};
      first = std::min(first, o.time_ns);
    } else if (e.kind() == EventKind::kOperatorEnd && open) {
      const uint64_t end = std::max(open->begin, e.operator_event().time_ns);
      open->end = end;
      node.sites[open->site].time_ns += end - open->begin;
      invocations.push_back(*open);
      open.reset();
      last = std::max(last, end);
    }
  }
  if (first <= last) node.time_ns = last - first;
  std::sort(invocations.begin(), invocations.end(),
            [](const Invocation& a, const Invocation& b) { return a.begin < b.begin; });
  for (const Event& e : n.events) {
    if (e.kind() != EventKind::kWait) continue;  // in no stream (SplitStreams): counted here
    ++node.events_by_kind[static_cast<size_t>(EventKind::kWait)];
    const WaitEvent w = e.wait();
    const size_t kind = w.kind < TraceStats::kWaitKinds ? w.kind : 0;
    ++node.waits.count[kind];
    node.waits.ns[kind] += w.duration_ns;
    auto it = std::upper_bound(invocations.begin(), invocations.end(), w.begin_ns,
                               [](uint64_t t, const Invocation& inv) { return t < inv.begin; });
    if (it == invocations.begin()) continue;
    --it;
    if (w.begin_ns > it->end) continue;
    TraceStats::Site& site = node.sites[it->site];
    ++site.waits.count[kind];
    site.waits.ns[kind] += w.duration_ns;
    ++site.events[static_cast<size_t>(EventKind::kWait)];
  }
}

}  // namespace

TraceStats ComputeStats(const TraceReader& trace) {
  TraceStats stats;
  const int nodes = trace.nodes();
  const uint32_t threads = trace.manifest().threads_per_node;
  stats.messages.assign(static_cast<size_t>(nodes), std::vector<uint64_t>(nodes, 0));
  std::map<uint64_t, uint64_t> per_dds;
  std::unordered_map<uint64_t, uint64_t> per_lock;
  for (int k = 0; k < nodes; ++k) {
    const NodeTrace& n = trace.node(k);
    const NodeStreams streams = SplitStreams(n, threads, /*describe=*/false);
    TraceStats::Node node;
    node.node = k;
    node.events = n.events.size();
    // Per entry of streams.wheres, its site's index in node.sites (found once per entry).
    std::map<std::string, size_t> site_index;
    std::vector<size_t> site_of_where(streams.wheres.size(), SIZE_MAX);
    for (const std::vector<StreamEvent>& stream : streams.of) {
      for (const StreamEvent& se : stream) {
        const Event& e = n.events[se.index];
        const auto kind = static_cast<size_t>(e.kind());
        if (kind >= TraceStats::kKinds) continue;
        ++node.events_by_kind[kind];
        if (site_of_where[se.where] == SIZE_MAX) {
          std::string name = streams.sites[se.where];
          if (name.empty()) name = "(outside operators)";
          auto [it, fresh] = site_index.try_emplace(name, node.sites.size());
          if (fresh) node.sites.emplace_back(name);
          site_of_where[se.where] = it->second;
        }
        TraceStats::Site& site = node.sites[site_of_where[se.where]];
        ++site.events[kind];
        switch (e.kind()) {
          case EventKind::kOperatorBegin:
            ++site.invocations;
            break;
          case EventKind::kDelivery: {
            const uint64_t source = e.delivery().source;
            if (source < static_cast<uint64_t>(nodes)) ++stats.messages[source][k];
            break;
          }
          case EventKind::kChoice:
            if (e.choice().point == static_cast<uint64_t>(TraceChoicePoint::kSspPoll)) {
              ++node.ssp_polls;
              node.ssp_polls_empty += e.choice().value == 0;
            }
            break;
          case EventKind::kLockGrant: {
            const uint64_t lock = e.lock_grant().lock_id;
            ++per_dds[lock >> 40];
            ++per_lock[lock];
            break;
          }
          default:
            break;
        }
      }
    }
    AddTimes(n, site_index, node);
    node.lock_acquires = LockAcquires(n);
    stats.nodes.push_back(std::move(node));
  }
  stats.handovers_per_dds.assign(per_dds.begin(), per_dds.end());
  std::vector<std::pair<uint64_t, uint64_t>> hottest(per_lock.begin(), per_lock.end());
  const size_t top = std::min<size_t>(10, hottest.size());
  std::partial_sort(hottest.begin(), hottest.begin() + static_cast<std::ptrdiff_t>(top),
                    hottest.end(), [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  hottest.resize(top);
  stats.hottest_elements = std::move(hottest);
  return stats;
}

}  // namespace strads
