#include "strads/trace/timeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "strads/trace/describe.h"
#include "strads/trace/error.h"
#include "strads/trace/reader.h"

namespace strads {

namespace {

// What the first pass keeps of one node: its operator invocations, where each worker's acquire
// counts stood at operator ends, and how many untimed driver events lie between two operator
// boundaries. Sizes grow with invocations and threads, not with events.
struct NodePlan {
  struct Invocation {
    uint64_t begin_ns = 0, end_ns = 0;
    uint64_t begin_index = 0, end_index = 0;
    uint64_t site = 0, invocation = 0;
    bool ended = false;
  };
  struct DigestMark {
    uint64_t acquires;  // the thread's count at the end of invocation `op`
    size_t op;
  };
  std::vector<Invocation> ops;
  std::vector<std::vector<DigestMark>> digests;  // per worker thread
  // Operator begins and ends in driver order; segment s lies between boundary s - 1 and s.
  std::vector<uint64_t> boundary_ns;
  std::vector<uint64_t> segment_events;  // untimed driver events per segment
  TraceSites sites;
  uint64_t first_ns = UINT64_MAX;
  // (site description, invocation) -> begin time, for message arrows from this node.
  std::map<std::pair<std::string, uint64_t>, uint64_t> begin_of;

  // The events the driver appends between operator boundaries, without a time of their own.
  static bool IsDriverUntimed(const Event& e) {
    return e.kind() == EventKind::kDelivery || e.kind() == EventKind::kChoice ||
           e.kind() == EventKind::kInput || e.kind() == EventKind::kThreadDigest;
  }

  void Learn(const Event& e, uint64_t index, uint32_t threads) {
    switch (e.kind()) {
      case EventKind::kOperatorBegin: {
        const OperatorEvent o = e.operator_event();
        ops.push_back({o.time_ns, o.time_ns, index, index, o.site, o.invocation, false});
        boundary_ns.push_back(o.time_ns);
        segment_events.push_back(0);
        first_ns = std::min(first_ns, o.time_ns);
        return;
      }
      case EventKind::kOperatorEnd: {
        const OperatorEvent o = e.operator_event();
        boundary_ns.push_back(o.time_ns);
        segment_events.push_back(0);
        if (!ops.empty() && !ops.back().ended) {
          ops.back().end_ns = std::max(ops.back().begin_ns, o.time_ns);
          ops.back().end_index = index;
          ops.back().ended = true;
        }
        return;
      }
      case EventKind::kWait:
        first_ns = std::min(first_ns, e.wait().begin_ns);
        return;
      default:
        break;
    }
    if (e.kind() == EventKind::kThreadDigest && e.thread() < threads && !ops.empty())
      digests[e.thread()].push_back({e.thread_digest().acquires, ops.size() - 1});
    if (IsDriverUntimed(e)) ++segment_events.back();
  }

  // The time of worker `thread`'s acquire number `acquire`: by its place among the thread's
  // acquires in the operator invocation whose end digest counts it. Nothing for a grant after
  // the last digest (an operator the trace does not finish).
  struct Placed {
    uint64_t ns;
    size_t op;  // the invocation it is in
  };
  std::optional<Placed> AcquireTime(uint32_t thread, uint64_t acquire) const {
    if (thread >= digests.size()) return std::nullopt;
    const auto& marks = digests[thread];
    const auto it =
        std::lower_bound(marks.begin(), marks.end(), acquire,
                         [](const DigestMark& m, uint64_t a) { return m.acquires < a; });
    if (it == marks.end()) return std::nullopt;
    const uint64_t before = it == marks.begin() ? 0 : std::prev(it)->acquires;
    const Invocation& op = ops[it->op];
    const double share = (static_cast<double>(acquire - before) - 0.5) /
                         static_cast<double>(std::max<uint64_t>(1, it->acquires - before));
    return Placed{
        op.begin_ns + static_cast<uint64_t>(share * static_cast<double>(op.end_ns - op.begin_ns)),
        it->op};
  }

  // The time of the `j`-th untimed driver event of segment `s`: spread evenly between the
  // segment's boundaries; before the first and after the last boundary, at that boundary.
  uint64_t DriverTime(size_t s, uint64_t j) const {
    if (boundary_ns.empty()) return first_ns == UINT64_MAX ? 0 : first_ns;
    if (s == 0) return boundary_ns.front();
    if (s >= boundary_ns.size()) return boundary_ns.back();
    const uint64_t lo = boundary_ns[s - 1], hi = std::max(lo, boundary_ns[s]);
    return lo + (hi - lo) * (j + 1) / (segment_events[s] + 1);
  }
};

}  // namespace

void WalkTimeline(const std::string& dir, const TimelineOptions& options, TimelineSink& sink) {
  const ManifestInfo manifest = TraceReader::ReadManifest(dir + "/manifest");
  const int nodes = static_cast<int>(manifest.node_count);
  const uint32_t threads = manifest.threads_per_node;
  if (options.node && (*options.node < 0 || *options.node >= nodes))
    throw TraceError(dir + ": no node " + std::to_string(*options.node) + " (the trace has " +
                     std::to_string(nodes) + " nodes)");
  auto wanted = [&](int k) { return !options.node || *options.node == k; };
  if ((options.from || options.to) && !options.node)
    throw TraceError(dir + ": --from and --to are event indexes of one node log: give --node");
  auto in_range = [&](uint64_t index) {
    return (!options.from || index >= *options.from) && (!options.to || index <= *options.to);
  };
  // An invocation is shown when it overlaps the range, so that every event shown has its slice.
  auto shown = [&](const NodePlan::Invocation& inv) {
    return (!options.from || inv.end_index >= *options.from) &&
           (!options.to || inv.begin_index <= *options.to);
  };

  // Pass 1: every node's plan (a message arrow starts on its sender's plan).
  std::vector<NodePlan> plans(static_cast<size_t>(nodes));
  uint64_t origin = UINT64_MAX;
  for (int k = 0; k < nodes; ++k) {
    NodePlan& plan = plans[static_cast<size_t>(k)];
    plan.digests.resize(threads);
    plan.segment_events.push_back(0);
    const TraceReader::EventVisitor learn = [&](std::span<const Event> events, uint64_t first) {
      for (size_t i = 0; i < events.size(); ++i) plan.Learn(events[i], first + i, threads);
    };
    NodeTrace n = TraceReader::ReadNode(dir, manifest, k, &learn);
    plan.sites = std::move(n.sites);
    for (const NodePlan::Invocation& op : plan.ops)
      plan.begin_of.try_emplace({DescribeSite(plan.sites, op.site), op.invocation}, op.begin_ns);
    if (wanted(k)) origin = std::min(origin, plan.first_ns);
  }
  sink.Start(nodes, threads, origin == UINT64_MAX ? 0 : origin);

  for (int k = 0; k < nodes; ++k) {
    if (!wanted(k)) continue;
    const NodePlan& plan = plans[static_cast<size_t>(k)];
    sink.BeginNode(k);
    // Pass 2: the events, in node-log order.
    size_t op = 0, segment = 0;
    uint64_t in_segment = 0;
    std::vector<size_t> digest_cursor(threads, 0);
    const TraceReader::EventVisitor emit = [&](std::span<const Event> events, uint64_t first) {
      for (size_t i = 0; i < events.size(); ++i) {
        const Event& e = events[i];
        const uint64_t index = first + i;
        switch (e.kind()) {
          case EventKind::kOperatorBegin:
            ++segment, in_segment = 0;
            continue;
          case EventKind::kOperatorEnd: {
            ++segment, in_segment = 0;
            const size_t current = op;
            while (op < plan.ops.size() && plan.ops[op].end_index <= index) ++op;
            if (current >= plan.ops.size() || plan.ops[current].end_index != index) continue;
            const NodePlan::Invocation& inv = plan.ops[current];
            const std::string name = DescribeSite(plan.sites, inv.site);
            TimelineSlice slice{
                k,          threads,        false,           &name,        inv.begin_ns,
                inv.end_ns, inv.invocation, inv.begin_index, inv.end_index};
            if (shown(inv)) sink.Slice(slice);
            // Each worker that acquired locks in it: the same slice on its track.
            for (uint32_t t = 0; t < threads; ++t) {
              auto& c = digest_cursor[t];
              const auto& marks = plan.digests[t];
              bool worked = false;
              while (c < marks.size() && marks[c].op <= current) worked |= marks[c++].op == current;
              if (!worked || !shown(inv)) continue;
              slice.track = t;
              slice.worker = true;
              sink.Slice(slice);
            }
            continue;
          }
          case EventKind::kWait:
            if (in_range(index)) sink.Wait(k, std::min(e.thread(), threads), e, index, plan.sites);
            continue;
          case EventKind::kLockGrant: {
            if (!in_range(index) || e.thread() >= threads) continue;
            const LockGrantEvent g = e.lock_grant();
            const auto at = plan.AcquireTime(g.thread, g.acquire);
            const auto from = plan.AcquireTime(g.from_thread, g.from_count);
            if (!at) continue;  // after the last digest: no operator to place it in
            sink.Instant(k, g.thread, at->ns, e, index, plan.sites);
            // Both ends inside worker slices that are shown.
            if (from && g.from_thread < threads && shown(plan.ops[at->op]) &&
                shown(plan.ops[from->op]))
              sink.Arrow({TimelineArrow::Kind::kHandover, "lock " + std::to_string(g.lock_id), k, k,
                          g.from_thread, g.thread, from->ns, at->ns});
            continue;
          }
          default:
            if (!NodePlan::IsDriverUntimed(e)) continue;
            break;
        }
        // An untimed driver event.
        const uint64_t ns = plan.DriverTime(segment, in_segment++);
        if (!in_range(index)) continue;
        sink.Instant(k, threads, ns, e, index, plan.sites);
        if (e.kind() != EventKind::kDelivery) continue;
        const DeliveryEvent d = e.delivery();
        if (d.source >= static_cast<uint64_t>(nodes) || !wanted(static_cast<int>(d.source)) ||
            op >= plan.ops.size() || plan.ops[op].begin_index > index)
          continue;  // not inside an operator invocation
        // Sends are not recorded: the arrow starts where the sender began the operator
        // invocation the message is delivered in (control replication: the same one).
        const NodePlan::Invocation& inv = plan.ops[op];
        const auto& sender = plans[d.source].begin_of;
        const auto it = sender.find({DescribeSite(plan.sites, inv.site), inv.invocation});
        if (it == sender.end()) continue;
        sink.Arrow({TimelineArrow::Kind::kMessage,
                    "message " + std::to_string(d.seq) + " from node " + std::to_string(d.source),
                    static_cast<int>(d.source), k, threads, threads, it->second, ns});
      }
    };
    TraceReader::ReadNode(dir, manifest, k, &emit);
  }
}

}  // namespace strads
