// A trace as Chrome Trace Event JSON (`strads trace export`), which Perfetto UI and
// chrome://tracing open: a process per node, a track per thread (the driver and each worker),
// operators and waits as complete ("X") slices, message deliveries and logged lock handovers as
// flow arrows ("s"/"f"), choices, inputs and thread digests as instant events, names as
// metadata ("M"). docs/viewer.md says where untimed events are placed.
//
// Streamed, as WalkTimeline (timeline.h) is.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "strads/trace/timeline.h"

namespace strads {

using ChromeExportOptions = TimelineOptions;

struct ChromeExportCounts {
  uint64_t operator_slices = 0;  // on the driver tracks
  uint64_t worker_slices = 0;    // a worker's part of an operator invocation
  uint64_t wait_slices = 0;
  uint64_t instants = 0;
  uint64_t message_flows = 0, handover_flows = 0;  // arrows (an "s" and an "f" each)
};

// Writes the JSON of the trace directory `dir` to `out`. Throws TraceError (bad trace, a node
// that does not exist, a trace without times: format 5 and older are refused by the reader).
ChromeExportCounts ExportChromeTrace(const std::string& dir, const ChromeExportOptions& options,
                                     std::ostream& out);

}  // namespace strads
