// RecordOrderingPolicy: Live, plus an event per ordering decision (design.md section 4).
//
// Lock grants follow the ordered protocol (GrantState in ordering.h): an exchange takes the
// lock and returns its last release's (thread, count); a release stores the thread's own. Only
// grants that the logged ones do not already order are appended, to a buffer per worker thread
// (no lock, no atomic), FORMAT.md: a grant of a lock last released by another thread u, when no
// earlier logged grant of this thread came after that release or a later one of u (each thread
// keeps, per other thread, the highest acquire number it is known to follow: a pairwise
// transitive reduction, as in Netzer's optimal tracing of races). On sgdmf with 2 threads that
// logs one grant in 70. LockedLoop runs the protocol inline with the counts in registers, so an
// implied grant costs the exchange and a few register operations (count, digest, logged once per
// operator, and the compare with the known row, whose entry for the last other thread met it
// keeps in a register); other callers go through Acquire and Release. The driver's events
// (deliveries, choices, operator boundaries) go to one more buffer. Full buffers go to a background
// thread that encodes, compresses and writes them (TraceWriter). Buffers are handed over at every
// operator end (the workers are idle then) and the writer writes to the kernel every
// kFlushInterval, so a SIGKILLed run leaves a trace readable up to its last flushed chunk, at most
// that long before the kill. On SIGSEGV, SIGABRT, SIGFPE and SIGBUS, and on SIGINT, SIGTERM and
// SIGHUP unless the program handles them, the buffered events are written before the process dies
// (best effort: the handler cannot take locks the crashed thread may hold).
//
// Registered as mode "record": STRADS_RECORD=DIR makes every node of a program linked with
// strads::strads record into DIR (created if missing).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "strads/known_grants.h"
#include "strads/ordering.h"
#include "strads/trace/event.h"
#include "strads/trace/manifest.h"
#include "strads/trace/writer.h"

namespace strads {

class Runtime;

class RecordOrderingPolicy : public OrderingPolicy {
 public:
  RecordOrderingPolicy(Runtime& rt, const std::string& dir);
  ~RecordOrderingPolicy() override;

  const char* mode() const override { return "record"; }
  void Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) override;
  void Release(SeamLock& lock, uint64_t lock_id, int thread) override;
  int NextSource(Tag tag) override;
  void Delivered(const Message& message) override;
  uint64_t Choose(ChoicePoint point, uint64_t live_value) override;
  void Input(const std::string& path, uint64_t offset, std::span<const std::byte> bytes) override;
  void OperatorBegin(const OperatorSite& site) override;
  void OperatorEnd(const OperatorSite& site) override;
  void Finish(bool ok) override;
  void Drain() override;
  GrantState* grant_state(int thread) override { return &counters_[thread].state; }
  // Logs the grant.
  void UnorderedGrant(SeamLock& lock, uint64_t lock_id, int thread, int64_t task,
                      uint64_t last) override;

  // Writes what is buffered, from a signal handler (see the top of this file).
  void EmergencyFlush() noexcept;

 private:
  static constexpr size_t kBufferEvents = 8192;
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
  // What a worker thread did since the run started (kThreadDigest), on its own cache line.
  struct alignas(64) ThreadCounters {
    GrantState state;     // grant: SeamLock::Grant(thread, acquires so far)
    uint64_t logged = 0;  // acquires() at the last kThreadDigest event
    uint64_t acquires() const { return SeamLock::NumberOf(state.grant); }
  };
  // Checked between operators, far enough below 2^48 that no operator can carry a count over.
  static constexpr uint64_t kMaxAcquires = uint64_t{1} << 47;

  // Throws once a thread's acquire count no longer fits a lock word (between operators).
  void CheckCounts() const;
  // The id of a site, defined in the trace (before any event naming it) on first use.
  uint32_t SiteId(const char* kind, const std::string& file, uint32_t line);
  void Handover(size_t stream);
  // Every stream's buffer, partial ones too: only while no worker appends.
  void HandoverAll();
  void DriverAppend(const Event& e);
  void Enqueue(Item item);
  void WriterLoop();

  Runtime& rt_;
  int node_;
  size_t driver_stream_;
  std::vector<std::unique_ptr<Buffer>> buffers_;  // one per worker thread, then the driver's
  std::mutex driver_mu_;                          // the driver stream may be used by workers
  std::map<std::string, uint32_t> site_ids_;
  std::unique_ptr<ThreadCounters[]> counters_;
  KnownGrants known_;

  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<ManifestWriter> manifest_;  // node 0 only
  std::mutex mu_;
  std::condition_variable cv_, drained_cv_;
  std::deque<Item> queue_;
  std::vector<std::unique_ptr<Buffer>> free_;  // written buffers, for reuse
  bool stop_ = false;
  bool busy_ = false;
  std::string writer_error_;
  std::thread writer_thread_;
};

}  // namespace strads
