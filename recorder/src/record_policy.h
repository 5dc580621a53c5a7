// RecordOrderingPolicy: Live, plus an event per ordering decision a replay needs (design.md
// section 4; the how and the cost: docs/recording.md). Registered as mode "record":
// STRADS_RECORD=DIR makes every node of a program linked with strads::strads record into
// DIR/node-K.log (DIR created if missing), node 0 also DIR/manifest.
//
// Contract: lock grants follow OrderedLocks; only grants it calls unordered are logged, plus a
// thread digest per worker and the operator's outcome digest at each operator end. Events are
// buffered per thread and written by a background thread at most kFlushInterval after the operator
// end that handed them over, so a SIGKILL loses at most that much. On fatal signals and on
// SIGINT/SIGTERM/SIGHUP the program does not handle, the events up to the operator in progress
// are written first, by a thread the async-signal-safe handler wakes (best effort, bounded).
// At most kMaxQueuedItems (buffers, mostly) wait for the writer: a thread handing over another
// waits for room.
// Finish(true) closes the log and, once every node did, marks the manifest cleanly closed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "strads/seam/ordered_locks.h"
#include "strads/seam/ordering.h"
#include "strads/seam/policy_registry.h"
#include "strads/trace/event.h"
#include "strads/trace/manifest.h"
#include "strads/trace/writer.h"

namespace strads {

class RecordOrderingPolicy : public OrderingPolicy, private OrderedLocks::Policy {
 public:
  RecordOrderingPolicy(const PolicyNode& node, const std::string& dir);
  ~RecordOrderingPolicy() override;

  const char* mode() const override { return "record"; }
  InlineLocks inline_locks() override { return {InlineLocks::kOrdered, &locks_}; }
  int NextSource(Tag tag) override;
  void Delivered(const Message& message) override;
  uint64_t Choose(ChoicePoint point, uint64_t live_value) override;
  void Input(const std::string& path, uint64_t offset, std::span<const std::byte> bytes) override;
  void OperatorBegin(const OperatorSite& site) override;
  void OperatorEnd(const OperatorSite& site) override;
  void Waited(WaitKind kind, int source, uint64_t begin_ns, uint64_t duration_ns) override;
  void OperatorOutcome(const OperatorSite& site, FunctionRef<uint64_t()> digest) override;
  void Finish(bool ok) override;
  void Drain() override;
  // Checkpoints cut the trace into segments (trace/FORMAT.md, "segments"): seals this node's
  // segment and starts the next; node 0 lists what is kept in the manifest and deletes the
  // segments before the oldest kept checkpoint.
  std::string CheckpointWritten(uint64_t operators) override;
  void CheckpointsKept(const std::string& dir, std::span<const uint64_t> kept) override;

  // Writes what was handed to the writer and the driver's buffer, and keeps the writer for good;
  // from the crash flusher thread, which a fatal signal's handler wakes (record_policy.cc).
  void EmergencyFlush() noexcept;

 private:
  static constexpr size_t kBufferEvents = 8192;
  // At most this many items wait for the writer, buffers (about 25 MB, a writer's batch in
  // progress aside) and the few site definitions among them: past it a handover waits for room, so
  // that a disk slower than the events, or a stalled one, holds the recording threads back instead
  // of growing the queue without bound.
  static constexpr size_t kMaxQueuedItems = 64;
  // A handover that waits this long says so on stderr (once a run): a run that seems hung then
  // says why.
  static constexpr std::chrono::seconds kStallNotice{5};
  // The longest the writer keeps events from the file (what a SIGKILL can lose).
  static constexpr std::chrono::seconds kFlushInterval{1};
  struct alignas(64) Buffer {  // its own cache lines: `used` is written on every Append
    std::unique_ptr<Event[]> events{new Event[kBufferEvents]};
    size_t used = 0;
  };
  // What the writer thread does next, in order.
  struct Item {
    std::unique_ptr<Buffer> buffer;  // events to append, or
    TraceSite site;                  // a site to define (when buffer is null)
  };

  void Append(size_t stream, const Event& e) {
    Buffer& b = *buffers_[stream];
    b.events[b.used++] = e;
    if (b.used == kBufferEvents) Handover(stream);
  }
  // The id of a site, defined in the trace (before any event naming it) on first use.
  uint32_t SiteId(const char* kind, const std::string& file, uint32_t line);
  void Handover(size_t stream);
  // Every stream's buffer, partial ones too: only while no worker appends.
  void HandoverAll();
  void DriverAppend(const Event& e);
  void Enqueue(Item item);
  void WriterLoop();
  // OrderedLocks::Policy: logs the grant.
  void UnorderedGrant(SeamLock& lock, uint64_t lock_id, int thread, int64_t task,
                      uint64_t last) override;
  // OrderedLocks::Policy: logs the wait (on the waiting worker's own buffer).
  void LockWaited(int thread, uint64_t lock_id, uint64_t begin_ns, uint64_t duration_ns) override;

  int node_;
  int nodes_;
  std::string dir_;
  std::vector<uint64_t> segments_;  // node 0: the segments held (segments.h), ascending
  std::function<void()> barrier_;   // every node, for the clean close
  size_t driver_stream_;
  std::vector<std::unique_ptr<Buffer>> buffers_;  // one per worker thread, then the driver's
  std::mutex driver_mu_;                          // the driver stream may be used by workers
  std::map<std::string, uint32_t> site_ids_;
  bool finishing_ = false;  // Finish started: waits are no longer logged
  OrderedLocks locks_;

  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<ManifestWriter> manifest_;  // node 0 only
  std::mutex mu_;
  std::condition_variable cv_, drained_cv_, room_cv_;
  std::deque<Item> queue_;
  bool stall_noticed_ = false;                 // the stall notice was given
  std::vector<std::unique_ptr<Buffer>> free_;  // written buffers, for reuse
  bool stop_ = false;
  bool busy_ = false;
  std::string writer_error_;
  std::thread writer_thread_;
};

}  // namespace strads
