// The data of `strads trace view`'s page: the timeline (timeline.h) as binary columns, each a
// little-endian typed array encoded in base64, so that a page of 10 M events holds a few bytes
// per event instead of a JSON object each (docs/viewer.md, "trace view").
//
// Written as one JavaScript object literal:
//   {nodes, threads, origin_ns, described_limit,
//    slices: columns of operator invocations (kind 0: the driver's, 1: a worker's part),
//    waits: columns of waits, instants: columns of the untimed events,
//    arrows: {kind (0 message, 1 handover), from_track, from_ns, to_track, to_ns},
//    strings: [site names, wait names, Describe texts]}
// where the slice, wait and instant columns are {track, begin_ns, end_ns, kind, label, index,
// index_end, describe} sorted by track, then begin, with track_start (per track, where its rows
// begin; one more entry at the end). A track is node * (threads + 1) + thread, the driver being
// thread `threads`; times are ns since origin_ns (float64), labels and describe texts index
// `strings` (describe 0xffffffff: not kept, past described_limit texts).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "strads/trace/timeline.h"

namespace strads {

struct ViewDataCounts {
  uint64_t nodes = 0, threads = 0;  // threads per node, the driver not counted
  uint64_t operator_slices = 0, worker_slices = 0, waits = 0, instants = 0;
  uint64_t message_arrows = 0, handover_arrows = 0;
};

// At most this many Describe texts are kept for hover details (the rest show their kind and
// node-log index), so that a page of 10 M events stays within a browser's string limits.
inline constexpr uint64_t kViewDescribedLimit = 100'000;

// Writes the object literal of the trace directory `dir` to `out`; throws TraceError. Its
// strings may hold "</": a page that puts it in a <script> element escapes that.
ViewDataCounts WriteViewData(const std::string& dir, std::ostream& out);

// `bytes` in base64 (RFC 4648, with padding).
std::string Base64(const void* bytes, size_t size);

}  // namespace strads
