// Where two traces of the same program part (`strads trace diff`): the question a user asks
// after "did it replay?". Two recordings of a deterministic engine must be identical; two of a
// nondeterministic one (the lock engine, SSP) part at their first different decision.
//
// A node's log interleaves streams: each worker thread's lock grants, and the driver's events
// (deliveries, choices, operator boundaries, thread digests, inputs). Each stream is in program
// order, so the traces are compared stream by stream, event by event, by their descriptions
// (site ids may differ between traces; site names may not).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strads/trace/reader.h"

namespace strads {

struct TraceDiff {
  enum class Verdict { kIdentical, kDifferent, kNotComparable };
  Verdict verdict = Verdict::kIdentical;
  std::string not_comparable;  // why, for kNotComparable (program, node or thread counts)
  uint64_t events = 0;         // events compared (in A)

  // The first difference of one stream (node, thread; `driver`: the node's driver stream).
  struct First {
    int node = 0;
    uint32_t thread = 0;
    bool driver = false;
    uint64_t position = 0;                     // index among the stream's events
    std::optional<uint64_t> index_a, index_b;  // in node-K.log; none: the stream ended there
    std::string event_a, event_b;              // Describe(), or "(the stream ends)"
    std::string where;                         // the operator invocation, in A
  };
  std::vector<First> firsts;  // by node, then thread, driver last

  // Per node and operator invocation, how many of its decisions differ.
  struct OperatorCount {
    int node = 0;
    std::string where;  // "in AsyncFor/locks at sgdmf.cc:59 (invocation 3)"
    uint64_t differing = 0;
    uint64_t events_a = 0, events_b = 0;
  };
  std::vector<OperatorCount> per_operator;  // in A's order
};

// Compares `a` and `b`. Traces of different programs (by the executable's name) or of
// different node or thread counts are not comparable.
TraceDiff DiffTraces(const TraceReader& a, const TraceReader& b);

}  // namespace strads
