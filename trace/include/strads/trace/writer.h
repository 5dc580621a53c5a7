// Writing a node log of a trace directory: one TraceWriter per node (node-K.log).
// Format: trace/FORMAT.md.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "strads/trace/event.h"

namespace strads {

// Appends events to DIR/node-K.log as LZ4 frames of size-prefixed FlatBuffer chunks.
// Not thread-safe: one caller thread (the Record policy's background writer thread).
// Every method throws TraceError when the file cannot be written.
class TraceWriter {
 public:
  // A chunk ends after this many events (Append starts the next one by itself).
  static constexpr uint32_t kMaxEventsPerChunk = 16384;
  // By default a frame ends once this many uncompressed bytes went into it.
  static constexpr size_t kMaxFrameContentBytes = 4u << 20;

  // Creates (truncates) DIR/node-K.log. DIR must exist. A frame ends at Close and at the first
  // chunk end that brings its content to `frame_content_bytes`. Every chunk names the node and
  // `run_id` (the manifest's), so that a reader can tell a swapped or foreign log.
  static std::unique_ptr<TraceWriter> Create(const std::string& dir, int node,
                                             size_t frame_content_bytes = kMaxFrameContentBytes,
                                             uint64_t run_id = 0);
  ~TraceWriter();  // Close()s; errors are swallowed there, call Close() to see them
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void Append(std::span<const Event> events);
  // Records a site definition in the stream (in the current chunk), so readers can name the
  // sites of kOperatorBegin/kOperatorEnd events. Define a site before its first event.
  void DefineSite(uint32_t id, std::string kind, std::string file, uint32_t line);
  // Ends the current chunk and LZ4 block and write()s them (the frame stays open): when Flush
  // returns, every event appended so far is in the kernel (a SIGKILL afterwards loses nothing).
  void Flush();
  // Writes a final chunk (marks the node log complete), flushes and closes. Idempotent.
  void Close();
  // Seals this segment of the node log (a final chunk, fsync, close) and goes on in
  // DIR/node-K.from-START.log (segments.h): event numbers go on, and every site defined so far
  // is defined again in the new file's first chunk, so that the segment reads on its own.
  // When it returns, every event appended before is on disk.
  void StartSegment(uint64_t start);

  const std::string& path() const { return path_; }
  uint64_t events_written() const { return next_event_; }

 private:
  struct Impl;
  TraceWriter(std::string dir, std::string path, int fd, uint32_t node, uint64_t run_id,
              size_t frame_content_bytes);
  void EndChunk(bool final);
  void EndFrame();

  std::string dir_;
  std::string path_;
  int fd_ = -1;
  uint32_t node_;
  uint64_t run_id_;
  size_t frame_content_bytes_;
  uint64_t next_event_ = 0;  // index of the next event appended
  std::unique_ptr<Impl> impl_;
};

}  // namespace strads
