// The ordering seam (design.md section 4): every decision whose outcome can differ between two
// runs of the same program on the same input, and that can change results, goes through an
// OrderingPolicy. The core ships the Live policy; the recorder and the replayer register theirs
// with the policy registry (policy_registry.h). The core never includes their headers.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "strads/internal/function_ref.h"
#include "strads/seam/seam_lock.h"
#include "strads/seam/transport.h"

namespace strads {

class OrderedLocks;

// The kinds of "choice" ordering points (the third row of design.md's table).
enum class ChoicePoint : uint32_t {
  kSspPoll = 1,       // had another node's SSP update arrived when polled (1) or not (0)
  kTaskDispatch = 2,  // which thread takes which task
};

// What a node waited for (a "wait" event of a trace names it by these numbers).
enum class WaitKind : uint32_t {
  kLock = 1,        // a worker thread, for a lock another thread held (object: the lock id)
  kMessage = 2,     // the driver, for a message delivered through the seam (DeliverNext)
  kCollective = 3,  // the driver, in a collective (barrier, all-gather, ...) for another node
};

// Waits shorter than this are not reported (Waited): a trace keeps the waits that shape a
// timeline, not the microsecond ones that every contended lock has.
inline constexpr uint64_t kWaitReportNs = 20000;

// The steady clock (CLOCK_MONOTONIC on Linux) in ns: the time base of a trace's times.
inline uint64_t SteadyNowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Where the program is: an operator call site and how many times it ran before.
struct OperatorSite {
  const char* kind = "";  // "AsyncFor", "SyncFor", ...
  const char* file = "";
  uint32_t line = 0;
  uint64_t invocation = 0;
};

class OrderingPolicy {
 public:
  virtual ~OrderingPolicy() = default;

  // "live", "record" or "replay": engines that cannot honour a mode refuse by its name.
  virtual const char* mode() const = 0;

  // `thread` (of this node) wants `lock` (id `lock_id`) to run `task`. Returns holding it.
  // By default as inline_locks() says: the ordered protocol, or Live's plain lock.
  virtual void Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task);
  virtual void Release(SeamLock& lock, uint64_t lock_id, int thread);

  // How an engine may take this policy's locks without calling Acquire and Release per lock.
  struct InlineLocks {
    enum Kind {
      kNone,     // call Acquire and Release (the policy does more than take locks: Chaos)
      kPlain,    // Live's: SeamLock::TrySet, else TakeWhenReleased; SeamLock::ClearHeld
      kOrdered,  // the ordered protocol of `ordered` (ordered_locks.h: Record, Replay)
    } kind = kNone;
    OrderedLocks* ordered = nullptr;
  };
  virtual InlineLocks inline_locks() { return {}; }

  // The source whose next `tag` message this node must handle next; kAnySource lets the
  // transport deliver whichever arrived first. Delivered() is told what was delivered.
  virtual int NextSource(Tag tag) = 0;
  virtual void Delivered(const Message& message) = 0;

  // Any other runtime choice: Live returns `live_value`; Replay returns the recorded one.
  virtual uint64_t Choose(ChoicePoint point, uint64_t live_value) = 0;

  // This node read `bytes` at `offset` of the input file `path` (ReadFromFile), so that Replay
  // can tell a changed input from a changed program.
  virtual void Input(const std::string& path, uint64_t offset,
                     std::span<const std::byte> bytes) = 0;

  // Operator boundaries, so that trace events can be placed in the program (and handed over).
  virtual void OperatorBegin(const OperatorSite& site) = 0;
  virtual void OperatorEnd(const OperatorSite& site) = 0;
  // Just after OperatorEnd: `digest()` is a 32-bit digest of this node's share of the DDSs the
  // operator wrote (trace/FORMAT.md, "outcome"; one pass over them: call it only to use it).
  // Record logs it and Replay compares it, so that a run that repeats every order but computes
  // other values is caught.
  virtual void OperatorOutcome(const OperatorSite& site, FunctionRef<uint64_t()> digest) {
    (void)site, (void)digest;
  }

  // The node's driver waited `duration_ns` (at least kWaitReportNs) from `begin_ns`
  // (SteadyNowNs) for `source` (a node): a message or a collective. Not an ordering decision:
  // Record logs it for the timeline; Live and Replay ignore it. A worker's lock waits reach
  // OrderedLocks::Policy::LockWaited instead.
  virtual void Waited(WaitKind kind, int source, uint64_t begin_ns, uint64_t duration_ns) {
    (void)kind, (void)source, (void)begin_ns, (void)duration_ns;
  }

  // Checkpoints (docs/checkpoints.md). On every node, once its file of the checkpoint taken
  // after operator `operators` is durable and before the checkpoint is complete (its MANIFEST):
  // Record cuts its trace into a new segment here. Returns "" or what failed.
  virtual std::string CheckpointWritten(uint64_t operators) {
    (void)operators;
    return "";
  }
  // On node 0, once that checkpoint is complete and the ones beyond --checkpoint-keep are
  // deleted: `kept` are the complete checkpoints left in `dir` (operator counts, ascending).
  // Record lists them in its manifest and deletes the segments before the oldest.
  virtual void CheckpointsKept(const std::string& dir, std::span<const uint64_t> kept) {
    (void)dir, (void)kept;
  }
  // A restart restored every DDS and map at the end of operator `operators`: what runs from
  // here is what the checkpointed run did after it (Replay from a checkpoint follows its trace
  // from here on).
  virtual void Restored(uint64_t operators) { (void)operators; }

  // Called once when the node's driver returns or fails.
  virtual void Finish(bool ok) = 0;

  // Returns once the background work for the events so far is done (Record: its writer thread
  // has encoded them). For RecordOverheadMeter, so that a recorded invocation pays for its own
  // writing instead of the live one after it.
  virtual void Drain() {}
};

// Live: decide freely. The cost is the decision itself.
class LiveOrderingPolicy : public OrderingPolicy {
 public:
  const char* mode() const override { return "live"; }
  InlineLocks inline_locks() override { return {InlineLocks::kPlain, nullptr}; }
  int NextSource(Tag tag) override;
  void Delivered(const Message& message) override;
  uint64_t Choose(ChoicePoint point, uint64_t live_value) override;
  void Input(const std::string& path, uint64_t offset, std::span<const std::byte> bytes) override;
  void OperatorBegin(const OperatorSite& site) override;
  void OperatorEnd(const OperatorSite& site) override;
  void Finish(bool ok) override;
};

// Delivers the next `tag` message to this node in the order the policy decides.
Message DeliverNext(Transport& transport, OrderingPolicy& policy, Tag tag, double timeout_seconds);

}  // namespace strads
