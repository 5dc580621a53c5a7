// A node log cut into its streams, each in program order: every worker thread's lock grants, and
// the driver's events (deliveries, choices, operator boundaries, thread digests, inputs); each
// event with the operator invocation it belongs to. What `trace diff` and `trace stats` read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strads/trace/reader.h"

namespace strads {

struct StreamEvent {
  uint64_t index;    // in node-K.log
  std::string text;  // Describe(), when SplitStreams was asked for it
  size_t where;      // into NodeStreams::wheres
};

struct NodeStreams {
  std::vector<std::vector<StreamEvent>> of;  // worker threads 0..T-1, then the driver (T)
  // "before the first operator", "in AsyncFor at f.cc:12 (invocation 3)", "after ...", and
  // last "in an operator the trace does not finish" (lock grants after the last digest).
  std::vector<std::string> wheres;
  // Per entry of wheres: the operator's site ("AsyncFor at f.cc:12"), "" outside operators.
  std::vector<std::string> sites;
};

// A driver event is in the operator whose boundary it last passed; a worker's lock grant with
// acquire number n in the first operator whose end digest of that thread counts n or more.
// `describe`: fill StreamEvent::text (a comparison needs it, counting does not).
NodeStreams SplitStreams(const NodeTrace& node, uint32_t threads, bool describe);

}  // namespace strads
