// A trace laid out on a time axis: a track per thread of each node (the workers 0..T-1, then the
// driver as track T), operator invocations and waits as slices, the untimed events as instants,
// message deliveries and logged lock handovers as arrows. `trace export` writes it as Chrome
// Trace Event JSON (chrome_export.h) and `trace view` as binary columns of a web page
// (view_data.h); docs/viewer.md says where untimed events are placed.
//
// Streamed: each node log is read twice, chunk by chunk (TraceReader::ReadNodeLog with a
// visitor); what is kept between the passes grows with operator invocations and threads, not
// with events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "strads/trace/event.h"
#include "strads/trace/reader.h"

namespace strads {

struct TimelineOptions {
  std::optional<int> node;  // only this node
  // Only node-log event indexes in [from, to] of `node` (required with them), the slices of the
  // operator invocations they overlap, and the arrows whose ends lie in those slices.
  std::optional<uint64_t> from, to;
};

// An operator invocation on the driver's track, or a worker's part of it (the same times) on the
// track of a worker that acquired locks in it: its waits, grants and handovers sit inside.
struct TimelineSlice {
  int node = 0;
  uint32_t track = 0;
  bool worker = false;
  const std::string* name = nullptr;  // the site's description
  uint64_t begin_ns = 0, end_ns = 0;
  uint64_t invocation = 0, begin_index = 0, end_index = 0;  // node-log indexes
};

// A message delivery (from where the sender began the operator invocation it is delivered in)
// or a logged lock handover (from the releasing thread's acquire to the acquiring one's).
struct TimelineArrow {
  enum class Kind { kMessage, kHandover } kind = Kind::kMessage;
  std::string name;  // "message 3 from node 1", "lock 1099511627781"
  int from_node = 0, to_node = 0;
  uint32_t from_track = 0, to_track = 0;
  uint64_t from_ns = 0, to_ns = 0;
};

// What WalkTimeline produces, node by node, in node-log order within a node.
class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  // Once, before anything else: the trace's shape and the earliest time of the nodes shown.
  virtual void Start(int nodes, uint32_t threads, uint64_t origin_ns) = 0;
  // Before the events of node `node` (only nodes shown).
  virtual void BeginNode(int node) = 0;
  virtual void Slice(const TimelineSlice& slice) = 0;
  // A wait (`e` is its event, at node-log `index`) on the waiting thread's track.
  virtual void Wait(int node, uint32_t track, const Event& e, uint64_t index,
                    const TraceSites& sites) = 0;
  // An untimed event placed at `ns`: a lock grant on its worker's track, a delivery, choice,
  // input or thread digest on the driver's.
  virtual void Instant(int node, uint32_t track, uint64_t ns, const Event& e, uint64_t index,
                       const TraceSites& sites) = 0;
  virtual void Arrow(const TimelineArrow& arrow) = 0;
};

// Walks the trace directory `dir`. Throws TraceError (bad trace, a node that does not exist,
// --from/--to without a node, a trace without times: format 5 and older are refused).
void WalkTimeline(const std::string& dir, const TimelineOptions& options, TimelineSink& sink);

}  // namespace strads
