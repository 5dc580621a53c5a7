// The ordering seam (design.md section 4): every decision whose outcome can differ between two
// runs of the same program on the same input, and that can change results, goes through an
// OrderingPolicy. The core ships the Live policy; the recorder and the replayer plug theirs in
// through Runtime::SetOrderingPolicy or the policy factory (policy_factory.h). The core never
// includes their headers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "strads/seam/transport.h"

namespace strads {

// A spin lock whose grants are decided by the policy. One word: the held bit, and the lock's last
// grant: the node-local thread that last released it and that thread's acquire count then (its
// grants on the node so far, this one included). A fresh lock has thread 0, count 0: "before
// thread 0's first acquire", which every thread has seen. Policies that order grants (Record,
// Replay) take a lock with one exchange, which returns the last grant in a register, and write
// their own at release with a plain store, as Live's release does: a grant can be logged as
// "after thread t's acquire n" at no extra cache traffic, and one that logged grants already
// order need not be logged at all (FORMAT.md). Live leaves the last grant alone. Eight bytes: a
// lock per element of a DDS.
struct SeamLock {
  static constexpr uint64_t kHeld = 1;
  static constexpr int kThreadBits = 15;           // bits 1..15
  static constexpr uint64_t kThreadMask = 0xfffe;  // the thread bits in place
  static constexpr int kNumberShift = 16;          // bits 16..63
  static constexpr uint64_t kMaxThreads = uint64_t{1} << kThreadBits;
  static constexpr uint64_t kMaxNumber = (uint64_t{1} << (64 - kNumberShift)) - 1;

  // The word of "granted to `thread` as its acquire `number`" (held bit clear).
  static constexpr uint64_t Grant(uint64_t thread, uint64_t number) {
    return number << kNumberShift | thread << 1;
  }
  static constexpr uint16_t ThreadOf(uint64_t word) {
    return static_cast<uint16_t>((word >> 1) & (kMaxThreads - 1));
  }
  static constexpr uint64_t NumberOf(uint64_t word) { return word >> kNumberShift; }

  // Takes the lock as `grant` if `before` (a word read from it) is free and still current: one
  // compare-exchange. On failure `before` is the current word if the exchange was tried.
  bool TryTake(uint64_t& before, uint64_t grant) {
    return (before & kHeld) == 0 &&
           word.compare_exchange_weak(before, grant | kHeld, std::memory_order_acquire,
                                      std::memory_order_relaxed);
  }

  // Sets the held bit; true if it was clear (the lock is taken, the last grant unchanged). One
  // atomic bit-test-and-set with no load before it: a lock word last written by another core
  // moves here once (a load and then a compare-exchange move it twice).
  bool TrySet() { return (word.fetch_or(kHeld, std::memory_order_acquire) & kHeld) == 0; }

  // The ordered protocol's take: sets the word to "held" and returns the word from before. When
  // that was held too, the lock is not taken and its last grant is lost, which is harmless: the
  // holder's release writes its own (the caller waits, LiveOrderingPolicy::SpinExchange).
  uint64_t Exchange() { return word.exchange(kHeld, std::memory_order_acquire); }

  std::atomic<uint64_t> word{0};
};
static_assert(sizeof(SeamLock) == 8);

// The thread digest: folds one acquire into a thread's running digest (starts at 0). It runs
// on every lock grant of a recording, so it is cheap: an odd multiplier that fits an
// instruction's immediate (the 32-bit FNV prime) keeps each step a bijection of the digest.
inline uint64_t FoldAcquire(uint64_t digest, uint64_t lock_id, uint64_t task) {
  return (digest ^ lock_id ^ (task << 24) ^ (task >> 40)) * 0x1000193ULL;
}

// A worker thread's side of the ordered lock protocol (Record, Replay), which an engine may run
// inline, keeping this in registers for an operator (LockedLoop does): take with
// SeamLock::Exchange (LiveOrderingPolicy::SpinExchange while held), Count the acquire, call the
// policy's UnorderedGrant when KnownGrants::Follows(known, last) fails; release by storing
// `grant`. An acquire numbered `next_logged` goes through the policy's Acquire instead (state
// written back around the call).
struct GrantState {
  uint64_t grant = 0;         // SeamLock::Grant(thread, acquires so far)
  uint64_t digest = 0;        // FoldAcquire over those acquires
  uint64_t* known = nullptr;  // the thread's KnownGrants row
  uint64_t next_logged = 0;   // 0: none

  // One more acquire, of `lock_id` for `task`: the count and the digest.
  void Count(uint64_t lock_id, int64_t task) {
    grant += SeamLock::Grant(0, 1);
    digest = FoldAcquire(digest, lock_id, static_cast<uint64_t>(task));
  }
};

// The kinds of "choice" ordering points (the third row of design.md's table).
enum class ChoicePoint : uint32_t {
  kSspPoll = 1,       // had another node's SSP update arrived when polled (1) or not (0)
  kTaskDispatch = 2,  // which thread takes which task
};

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
  virtual void Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) = 0;
  virtual void Release(SeamLock& lock, uint64_t lock_id, int thread) = 0;

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

  // Called once when the node's driver returns or fails.
  virtual void Finish(bool ok) = 0;

  // True when Acquire and Release are exactly Live's (SeamLock::TrySet, else SpinAcquire; then
  // SpinRelease), so that an engine may inline them instead of calling them.
  virtual bool plain_locks() const { return false; }
  // For engines that run the ordered lock protocol inline (GrantState): the thread's state, or
  // nullptr (the default) to have Acquire and Release called instead.
  virtual GrantState* grant_state(int) { return nullptr; }
  // The ordered protocol took `lock` (its word before: `last`) for `thread`'s acquire already
  // counted in its GrantState, and the grant is not implied (Record logs it, Replay reports a
  // divergence). Only called for policies that return a GrantState.
  virtual void UnorderedGrant(SeamLock&, uint64_t, int, int64_t, uint64_t) {}

  // Returns once the background work for the events so far is done (Record: its writer thread
  // has encoded them). For RecordOverheadMeter, so that a recorded invocation pays for its own
  // writing instead of the live one after it.
  virtual void Drain() {}
};

// Live: decide freely. The cost is the decision itself.
class LiveOrderingPolicy : public OrderingPolicy {
 public:
  const char* mode() const override { return "live"; }
  bool plain_locks() const override { return true; }
  void Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) override;
  void Release(SeamLock& lock, uint64_t lock_id, int thread) override;
  int NextSource(Tag tag) override;
  void Delivered(const Message& message) override;
  uint64_t Choose(ChoicePoint point, uint64_t live_value) override;
  void Input(const std::string& path, uint64_t offset, std::span<const std::byte> bytes) override;
  void OperatorBegin(const OperatorSite& site) override;
  void OperatorEnd(const OperatorSite& site) override;
  void Finish(bool ok) override;

  // The lock itself, for policies that add to Live. SpinAcquire takes it and returns its word
  // from before (the last grant); it gives up the baton while it waits (baton.h).
  static uint64_t SpinAcquire(SeamLock& lock);
  // The ordered protocol's take (GrantState) after an Exchange found the lock held: waits as
  // SpinAcquire does and returns the last grant.
  static uint64_t SpinExchange(SeamLock& lock);
  static void SpinRelease(SeamLock& lock) {
    // Only the holder changes a held lock: a plain store, as cheap as clearing a flag.
    lock.word.store(lock.word.load(std::memory_order_relaxed) & ~SeamLock::kHeld,
                    std::memory_order_release);
  }
};

// Delivers the next `tag` message to this node in the order the policy decides.
Message DeliverNext(Transport& transport, OrderingPolicy& policy, Tag tag, double timeout_seconds);

}  // namespace strads
