// The data of `strads trace view`'s page: the timeline (timeline.h) as level-of-detail tiles and
// binary row blocks, so that a page of 10 M events draws its first frame from a few thousand
// tile entries and decodes rows only where a zoom reaches them (docs/viewer.md, "trace view").
//
// WriteViewData writes two parts. The first is one JavaScript object literal, small whatever the
// trace's size:
//   {nodes, threads, origin_ns, span_ns, eager, strings: [site and wait names],
//    slices, waits, instants: row groups, arrows: the arrow group,
//    describe: {block: B, blocks: [[node, first_index, ref]]}}
// A row group is {rows, blocks: [[track, lo_ns, hi_ns, rows, min_index, max_index, ref]],
// tiles: [{buckets, ref}]}; the arrow group is {rows, blocks: [[lo_ns, hi_ns, rows, ref]],
// tiles: [{buckets, ref}]}. A ref is either inline bytes in base64 or "#ID", the id of a
// <script type="application/octet-stream"> element of the second part whose text is the bytes
// zlib-compressed (RFC 1950, DecompressionStream('deflate')) in base64. A trace of at most
// kViewEagerRows rows and arrows is all inline; a larger one has only the coarsest tiles inline.
//
// The layouts (little-endian; times are ns since origin_ns, integers):
//   row block: u32 n, u32 wide, f64 base (the first begin); then begin - previous begin and
//     end - begin as f64[n] each if wide, else u32[n] each; u32 index - previous index and
//     index_end - index (both mod 2^32); u32 label (into strings); u8 kind. Rows of one track,
//     sorted by begin; a track is node * (threads + 1) + thread, the driver being `threads`.
//   arrow block: u32 n, u32 wide, f64 base (the least end); from - base and to - base as f64[n]
//     or u32[n]; u32 from_track, u32 to_track, u8 kind (0 message, 1 handover); sorted by the
//     earlier end.
//   row tiles of a level of `buckets` buckets over [0, span_ns]: u32 n, u32 track_start[tracks +
//     1], u32 bucket[n], u32 count[n] (rows beginning in it), f32 busy[n] (its covered fraction),
//     the non-empty buckets sorted by track, then bucket.
//   arrow tiles: u32 n, then n times u32 kind, from_track, to_track, from_bucket, to_bucket,
//     count.
//   describe block: the Describe texts of node-log indexes first_index .. first_index + B - 1 of
//     a node, one line each ("" for events not on the timeline as a wait or an instant).
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

// Up to this many rows and arrows, everything is inline and uncompressed: the page decodes it
// all at once, as a small trace needs no more.
inline constexpr uint64_t kViewEagerRows = 100'000;

// The page's data: `literal` receives the object literal (its strings may hold "</": a page
// that puts it in a <script> element escapes that), `elements` the <script> elements of the
// lazily decoded parts. Throws TraceError.
ViewDataCounts WriteViewData(const std::string& dir, std::ostream& literal, std::ostream& elements);

// `bytes` in base64 (RFC 4648, with padding).
std::string Base64(const void* bytes, size_t size);

}  // namespace strads
