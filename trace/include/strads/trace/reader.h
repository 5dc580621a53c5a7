// Reading a trace directory. Every byte is untrusted: sizes are bounded before allocating, the
// FlatBuffers verifier runs on the manifest and on every chunk, and any defect becomes a
// TraceError naming the file, the byte offset and what was wrong. A node log that ends in a
// truncated frame or chunk is not an error: it reads up to its last complete chunk and is
// reported incomplete. Format: trace/FORMAT.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "strads/trace/event.h"
#include "strads/trace/manifest.h"
#include "strads/trace/segments.h"

namespace strads {

// A chunk's time (FORMAT.md, "Chunk"): its events happened before `time_ns`, at or after the
// previous chunk's. Kept for chunks with events (one per up to 16384 events).
struct ChunkTime {
  uint64_t first_event = 0;  // node-log index of the chunk's first event
  uint64_t time_ns = 0;      // the node's steady clock when the writer sealed the chunk
};

// One file of a node log read by TraceReader::ReadNode (segments.h).
struct SegmentRead {
  uint64_t start = 0;  // the operator count it starts after
  std::string path;
  uint64_t first_event = 0;  // node-log index of its first event
  uint64_t events = 0;
  uint64_t file_bytes = 0;
};

struct NodeTrace {
  int node = 0;
  // Node-log index of events[0] (and of the first event streamed): 0 unless the read started
  // at a later segment (the trace's first ones deleted, or a replay from a checkpoint).
  uint64_t first_event = 0;
  uint64_t events_read = 0;           // events decoded (also when streamed)
  std::vector<SegmentRead> segments;  // the files read, in order (ReadNode)
  uint64_t run_id = 0;                // what its chunks say (0: no chunk)
  std::vector<Event> events;
  std::map<uint32_t, TraceSite> sites;
  std::vector<ChunkTime> chunk_times;  // in event order; also when events are streamed
  uint64_t file_bytes = 0;             // size of node-K.log on disk
  uint64_t raw_bytes = 0;              // uncompressed frame content (the encoded chunks)
  uint64_t chunks = 0;
  uint64_t frames = 0;            // complete frames
  bool complete = false;          // ends with the writer's final chunk, nothing truncated
  std::string incomplete_reason;  // why not complete ("" if complete)
};

class TraceReader {
 public:
  // Bounds on what the reader accepts (the writer stays far below them).
  static constexpr uint64_t kMaxManifestBytes = 16u << 20;
  static constexpr uint32_t kMaxChunkBytes = 64u << 20;
  static constexpr uint64_t kMaxFrameContentBytes = 256u << 20;
  static constexpr uint32_t kMaxEventsPerChunk = 1u << 20;
  static constexpr uint32_t kMaxNodes = 65536;
  static constexpr size_t kMaxSegments = 1u << 20;  // per manifest list

  // Reads DIR/manifest and every node's log, K < node_count (every segment the trace holds,
  // ReadNode). Throws TraceError, also for a node log that is not complete under a manifest
  // that says the run closed cleanly (corrupt) and for one of another node or run (CheckRunOf).
  static TraceReader Open(const std::string& dir);
  // Reads one node log on its own (no manifest). Throws TraceError, also when a chunk names
  // another node than `node` or another run than the log's first chunk.
  static NodeTrace ReadNodeLog(const std::string& path, int node);
  // The same, streaming: `visit(events, first)` gets each chunk's events (node-log indexes
  // first, first + 1, ...) as they are decoded, and NodeTrace::events stays empty.
  using EventVisitor = std::function<void(std::span<const Event> events, uint64_t first)>;
  static NodeTrace ReadNodeLog(const std::string& path, int node, const EventVisitor& visit);
  // Reads node `node`'s log in `dir` as one log: its segments (segments.h) from the one that
  // starts after operator `from` (default: the first one held) on, in order, event indexes
  // going on across them; with `visit`, streamed. Throws TraceError naming the segment file:
  // a listed segment missing, one that is not sealed but followed by another, numbering or
  // run ids that do not go on from one segment to the next.
  static NodeTrace ReadNode(const std::string& dir, const ManifestInfo& manifest, int node,
                            const EventVisitor* visit = nullptr, uint64_t from = kFirstHeldSegment);
  // Reads and verifies one manifest file. Throws TraceError.
  static ManifestInfo ReadManifest(const std::string& path);
  // Throws TraceError naming `path` if `node` (read from it) was recorded by another run than
  // `manifest`'s (a log copied from another recording).
  static void CheckRunOf(const std::string& path, const NodeTrace& node,
                         const ManifestInfo& manifest);

  const std::string& dir() const { return dir_; }
  const ManifestInfo& manifest() const { return manifest_; }
  int nodes() const { return static_cast<int>(nodes_.size()); }
  const NodeTrace& node(int k) const { return nodes_.at(k); }
  const std::vector<Event>& events(int k) const { return nodes_.at(k).events; }
  const std::map<uint32_t, TraceSite>& sites(int k) const { return nodes_.at(k).sites; }
  uint64_t bytes_on_disk(int k) const { return nodes_.at(k).file_bytes; }
  bool complete(int k) const { return nodes_.at(k).complete; }
  // Every node log complete and the manifest says clean_close.
  bool complete() const;

 private:
  // `first_event`: the index the file's first chunk must start at; none: whatever it says.
  static NodeTrace ReadNodeLog(const std::string& path, int node, const EventVisitor* visit,
                               std::optional<uint64_t> first_event);

  std::string dir_;
  ManifestInfo manifest_;
  std::vector<NodeTrace> nodes_;
};

}  // namespace strads
