// Trace events: what the Record policy appends and what a TraceReader returns (design.md
// section 5). The byte layout on disk is described in trace/FORMAT.md.
#pragma once

#include <cassert>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "strads/trace/error.h"

namespace strads {

// The trace format version this library writes and the only one it reads. Equal to
// FormatVersion.Current in trace/trace.fbs (checked at compile time).
inline constexpr uint32_t kTraceFormatVersion = 9;

enum class EventKind : uint8_t {
  // A worker thread was granted a lock last released by another thread, and no earlier logged
  // grant of this thread already orders it after that release (FORMAT.md, "which lock grants
  // are logged"). Grants without an event are implied, and the kThreadDigest events check them.
  kLockGrant = 1,
  kDelivery = 2,       // this node handled a message
  kChoice = 3,         // any other runtime choice
  kOperatorBegin = 4,  // an operator call started
  kOperatorEnd = 5,    // and finished
  // Written just before a kOperatorEnd for each worker thread that acquired locks since its
  // previous digest (FORMAT.md, "thread digest").
  kThreadDigest = 6,
  kInput = 7,  // this node read part of an input file
  // A thread waited (for a lock, a message, a collective) at least the recorder's threshold.
  // Not an ordering decision: for timelines only; replay and trace diff skip it.
  kWait = 8,
  // Written just after a kOperatorEnd: a digest of what the operator wrote on this node
  // (FORMAT.md, "outcome"), so that a replay that follows every order but computes other values
  // is a divergence.
  kOutcome = 9,
};

// Short lower-case name of a kind ("lock_grant", ...); "unknown" for values outside the enum.
const char* EventKindName(EventKind kind);

// The runtime's choice points (strads::ChoicePoint in the core's ordering.h) as a trace numbers
// them. The trace library does not see the core; the Record policy static_asserts that the
// numbers agree.
enum class TraceChoicePoint : uint64_t {
  kSspPoll = 1,       // had another node's SSP update arrived when polled (1) or not (0)
  kTaskDispatch = 2,  // which thread takes which task
};

// "ssp_poll", "task_dispatch"; "unknown" for other numbers.
const char* ChoicePointName(uint64_t point);

// What a kWait event waited for (strads::WaitKind in the core's ordering.h; the Record policy
// static_asserts that the numbers agree).
enum class TraceWaitKind : uint64_t {
  kLock = 1,        // a worker thread, for a lock held by another thread
  kMessage = 2,     // the driver, for a message delivered through the ordering seam
  kCollective = 3,  // the driver, in a collective (barrier, all-gather, ...)
};

// "lock", "message", "collective"; "unknown" for other numbers.
const char* WaitKindName(uint64_t kind);

// The fields of each kind. `thread` is the node-local thread an event is about (lock grants,
// digests) or that appended it: the node's driver appends the other kinds, as thread number
// "threads per node".
struct LockGrantEvent {
  uint32_t thread = 0;       // the worker thread granted the lock
  uint64_t lock_id = 0;      // engine-defined; the lock engine's is dds_id << 40 | element
  uint64_t task = 0;         // the loop index the lock was taken for
  uint64_t acquire = 0;      // this grant's acquire number: 1 for the thread's first on the node
  uint32_t from_thread = 0;  // the thread that released the lock last
  // from_thread's acquire count at a release the grant came after: the lock's last release or
  // a later one of from_thread's (FORMAT.md, "Which lock grants are logged")
  uint64_t from_count = 0;
};
struct DeliveryEvent {
  uint32_t thread = 0;
  uint64_t source = 0;  // node
  uint64_t seq = 0;     // the source's sequence number for the message
  uint64_t tag = 0;
};
struct ChoiceEvent {
  uint32_t thread = 0;
  uint64_t point = 0;  // TraceChoicePoint
  uint64_t value = 0;  // what was chosen
};
// kOperatorBegin or kOperatorEnd.
struct OperatorEvent {
  uint32_t thread = 0;
  uint64_t site = 0;        // a TraceSite id
  uint64_t invocation = 0;  // how many times the site ran before
  uint64_t time_ns =
      0;  // steady clock (CLOCK_MONOTONIC) of the node, ns (stored in us); not a decision
};
struct ThreadDigestEvent {
  uint32_t thread = 0;    // the worker thread
  uint64_t acquires = 0;  // its acquire count so far
  uint64_t digest = 0;    // of every (lock id, task) it acquired so far
};
struct WaitEvent {
  uint32_t thread = 0;    // the worker thread (lock waits) or the driver (threads per node)
  uint64_t kind = 0;      // TraceWaitKind
  uint64_t begin_ns = 0;  // steady clock, as OperatorEvent::time_ns
  uint64_t duration_ns = 0;
  uint64_t object = 0;  // the lock id (kLock), the source node (kMessage, kCollective)
};
struct OutcomeEvent {
  uint32_t thread = 0;
  uint64_t site = 0;        // the operator's TraceSite id
  uint64_t invocation = 0;  // as in its kOperatorEnd
  uint64_t digest = 0;      // of the node's share of the DDSs the operator wrote, 32 bits
};
struct InputEvent {
  uint32_t thread = 0;
  uint64_t site = 0;  // a TraceSite of kind "input" naming the file (line 0)
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t fnv1a64 = 0;  // of the bytes read
};

// One ordering event of one node: a fixed 48-byte record, so that the recording hot path appends
// it to a per-thread buffer with a few stores. Made by the factory of its kind, read by the
// accessor of its kind (which asserts the kind). How the fields sit in the stored columns a..e
// (FORMAT.md, "event encoding") is the codec's business (trace/src/codec.h).
class Event {
 public:
  Event() = default;

  static Event LockGrant(const LockGrantEvent& g) {
    return {EventKind::kLockGrant, g.thread,  g.lock_id,    g.task,
            g.from_count,          g.acquire, g.from_thread};
  }
  static Event Delivery(const DeliveryEvent& d) {
    return {EventKind::kDelivery, d.thread, d.source, d.seq, d.tag, 0, 0};
  }
  static Event Choice(const ChoiceEvent& c) {
    return {EventKind::kChoice, c.thread, c.point, c.value, 0, 0, 0};
  }
  static Event OperatorBegin(const OperatorEvent& o) {
    return {EventKind::kOperatorBegin, o.thread, o.site, o.invocation, o.time_ns, 0, 0};
  }
  static Event OperatorEnd(const OperatorEvent& o) {
    return {EventKind::kOperatorEnd, o.thread, o.site, o.invocation, o.time_ns, 0, 0};
  }
  static Event Wait(const WaitEvent& w) {
    return {EventKind::kWait, w.thread, w.kind, w.begin_ns, w.duration_ns, w.object, 0};
  }
  static Event ThreadDigest(const ThreadDigestEvent& t) {
    return {EventKind::kThreadDigest, t.thread, t.acquires, t.digest, 0, 0, 0};
  }
  static Event Input(const InputEvent& i) {
    return {EventKind::kInput, i.thread, i.site, i.offset, i.bytes, i.fnv1a64, 0};
  }
  static Event Outcome(const OutcomeEvent& o) {
    return {EventKind::kOutcome, o.thread, o.site, o.invocation, o.digest, 0, 0};
  }

  EventKind kind() const { return kind_; }
  uint32_t thread() const { return thread_; }

  LockGrantEvent lock_grant() const {
    assert(kind_ == EventKind::kLockGrant);
    return {thread_, a_, b_, d_, static_cast<uint32_t>(e_), c_};
  }
  DeliveryEvent delivery() const {
    assert(kind_ == EventKind::kDelivery);
    return {thread_, a_, b_, c_};
  }
  ChoiceEvent choice() const {
    assert(kind_ == EventKind::kChoice);
    return {thread_, a_, b_};
  }
  OperatorEvent operator_event() const {  // of a kOperatorBegin or a kOperatorEnd
    assert(kind_ == EventKind::kOperatorBegin || kind_ == EventKind::kOperatorEnd);
    return {thread_, a_, b_, c_};
  }
  ThreadDigestEvent thread_digest() const {
    assert(kind_ == EventKind::kThreadDigest);
    return {thread_, a_, b_};
  }
  WaitEvent wait() const {
    assert(kind_ == EventKind::kWait);
    return {thread_, a_, b_, c_, d_};
  }
  InputEvent input() const {
    assert(kind_ == EventKind::kInput);
    return {thread_, a_, b_, c_, d_};
  }
  OutcomeEvent outcome() const {
    assert(kind_ == EventKind::kOutcome);
    return {thread_, a_, b_, c_};
  }

  friend bool operator==(const Event&, const Event&) = default;

 private:
  friend struct EventColumns;  // the codec

  Event(EventKind kind, uint32_t thread, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
      : kind_(kind), thread_(thread), a_(a), b_(b), c_(c), d_(d), e_(e) {}

  EventKind kind_ = EventKind::kLockGrant;
  uint32_t thread_ = 0;
  uint64_t a_ = 0, b_ = 0, c_ = 0, d_ = 0, e_ = 0;
};

// The steady-clock time an event carries (operator begin and end: theirs; a wait: its start), if
// its kind has one. Events without one are placed by their order between timed ones.
std::optional<uint64_t> EventTimeNs(const Event& event);

// An operator call site (or an input file), named by the id that events carry.
struct TraceSite {
  uint32_t id = 0;
  std::string kind;  // "AsyncFor", "SyncFor", ..., "input"
  std::string file;
  uint32_t line = 0;

  friend bool operator==(const TraceSite&, const TraceSite&) = default;
};
using TraceSites = std::map<uint32_t, TraceSite>;  // by id

}  // namespace strads
