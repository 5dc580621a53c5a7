// OrderedLocks: the ordered lock protocol, the one way a policy that records or replays lock
// grants takes and releases SeamLocks (docs/recording.md has the why; trace/FORMAT.md
// "which lock grants are logged" the rule). Record and Replay each own one and customise it
// through OrderedLocks::Policy; the lock engine runs its fast path inline (InlineThread).
//
// A thread takes a lock with SeamLock::Exchange, which returns the lock's last release (u, c):
// thread u after its acquire c. It counts the acquire (GrantState::Count) and releases with its
// own (thread, count). The grant is *implied* when the thread already comes after (u, c): its
// own release, or one at or before a release it is known to follow (KnownGrants: the releases
// of logged grants, and everything before the operator start). Otherwise it is *unordered*:
// Policy::UnorderedGrant (Record logs it, so that it becomes known; Replay reports a
// divergence, since the recording had it logged). An acquire the trace logged (Replay sets
// GrantState::next_logged) goes to Policy::TakeLogged, which waits for the recorded release.
//
// Each thread also publishes its grant after every release (Published): a logged grant after
// thread u's release (u, c) teaches the taker u's latest published release, (u, p) with p >= c
// (LatestRelease), not only (u, c), so that fewer of its later grants are unordered. A replay
// reproduces that knowledge by waiting for u's published grant to reach (u, p) (AwaitPublished).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "strads/seam/seam_lock.h"

namespace strads {

// The thread digest: folds one acquire into a thread's running digest (starts at 0). A
// polynomial over the acquires, so that a run of acquires known in advance (the lock engine's:
// its plan fixes each thread's) folds into a digest at once (AcquireRun), with nothing per grant.
// An odd multiplier keeps each step a bijection of the digest.
inline constexpr uint64_t kAcquireDigestPrime = 0x100000001b3ULL;
inline uint64_t FoldAcquire(uint64_t digest, uint64_t lock_id, uint64_t task) {
  return (digest + (lock_id ^ (task << 24) ^ (task >> 40))) * kAcquireDigestPrime;
}

// A run of acquires folded ahead: Apply(d) is FoldAcquire of d over each Add's acquire in order.
struct AcquireRun {
  uint64_t scale = 1;  // kAcquireDigestPrime^acquires
  uint64_t sum = 0;    // the run folded from digest 0
  void Add(uint64_t lock_id, uint64_t task) {
    sum = FoldAcquire(sum, lock_id, task);
    scale *= kAcquireDigestPrime;
  }
  uint64_t Apply(uint64_t digest) const { return digest * scale + sum; }
};

// One worker thread's side of the protocol.
struct GrantState {
  uint64_t grant = 0;         // SeamLock::Grant(thread, acquires so far): what it releases with
  uint64_t digest = 0;        // FoldAcquire over those acquires
  uint64_t* known = nullptr;  // the thread's KnownGrants row
  uint64_t next_logged = 0;   // the acquire number of the thread's next logged grant; 0: none

  uint64_t acquires() const { return SeamLock::NumberOf(grant); }
  // One more acquire: the count. The digest is folded apart (Fold, or an AcquireRun).
  void Count() { grant += SeamLock::Grant(0, 1); }
  void Fold(uint64_t lock_id, int64_t task) {
    digest = FoldAcquire(digest, lock_id, static_cast<uint64_t>(task));
  }
};

// For each worker thread t of a node and each thread u, the highest release of u that t's
// grants are known to come after, kept as a lock word.
class KnownGrants {
 public:
  explicit KnownGrants(int threads)
      : threads_(static_cast<size_t>(threads)),
        stride_((threads_ + 7) / 8),
        lines_(std::make_unique<CacheLine[]>(stride_ * threads_)) {
    for (size_t t = 0; t < threads_; ++t) row(static_cast<int>(t))[t] = UINT64_MAX;
  }

  // Thread t's row: read at every grant, written at logged ones, so it lies on cache lines of
  // its own. Only thread t uses it, and StartOperator while every thread is idle.
  uint64_t* row(int thread) { return lines_[static_cast<size_t>(thread) * stride_].words; }

  // Whether the thread owning `row` already comes after the release in the free lock word
  // `word`: its own (a thread's own entry is the maximum), or one at or before a release it is
  // known to follow. An entry holds the largest such lock word, so that the word is compared as
  // it is (a free word compares as (thread, number)).
  static bool Follows(const uint64_t* row, uint64_t word) {
    return word <= row[SeamLock::ThreadOf(word)];
  }
  // The thread owning `row` now comes after the release in the free lock word `word` (a logged
  // grant's).
  static void Learn(uint64_t* row, uint64_t word) { row[SeamLock::ThreadOf(word)] = word; }

  // At an operator start, with every thread idle: every grant so far comes before any to come.
  // `acquires_of(u)` is thread u's acquire count.
  template <class AcquiresOf>
  void StartOperator(const AcquiresOf& acquires_of) {
    for (size_t t = 0; t < threads_; ++t)
      for (size_t u = 0; u < threads_; ++u)
        if (u != t)
          row(static_cast<int>(t))[u] = SeamLock::Grant(u, acquires_of(static_cast<int>(u)));
  }

 private:
  struct alignas(64) CacheLine {
    uint64_t words[8];
  };
  size_t threads_;
  size_t stride_;  // cache lines per row
  std::unique_ptr<CacheLine[]> lines_;
};

class OrderedLocks {
 public:
  // What a policy that orders grants decides: the cases the protocol cannot decide alone.
  class Policy {
   public:
    virtual ~Policy() = default;
    // The protocol took `lock` (last release: `last`) for `thread`'s acquire, already counted,
    // and the grant is not implied.
    virtual void UnorderedGrant(SeamLock& lock, uint64_t lock_id, int thread, int64_t task,
                                uint64_t last) = 0;
    // `thread`'s next acquire is its GrantState::next_logged: take `lock` as the trace says,
    // count it (GrantState::Count; the caller folds the digest), learn its last release, set
    // the next next_logged. Only policies that set next_logged (Replay) are called.
    virtual void TakeLogged(SeamLock& lock, uint64_t lock_id, int thread, int64_t task);
    // Called about every millisecond while `thread` waits for `lock_id` to be released, with
    // the seconds waited so far; may throw to end the wait (Replay: its timeout, or another
    // thread's divergence).
    virtual void Waiting(int thread, uint64_t lock_id, int64_t task, double seconds) {
      (void)thread, (void)lock_id, (void)task, (void)seconds;
    }
    // `thread` waited `duration_ns` (at least kWaitReportNs, ordering.h) from `begin_ns` for
    // `lock_id`, held by another thread; called on the waiting thread once it holds the lock,
    // before UnorderedGrant. Record logs it for the timeline.
    virtual void LockWaited(int thread, uint64_t lock_id, uint64_t begin_ns, uint64_t duration_ns) {
      (void)thread, (void)lock_id, (void)begin_ns, (void)duration_ns;
    }
  };

  // Checked between operators, far enough below 2^48 that no operator carries a count over.
  static constexpr uint64_t kMaxAcquires = uint64_t{1} << 47;

  OrderedLocks(int threads, Policy& policy);
  OrderedLocks(const OrderedLocks&) = delete;
  OrderedLocks& operator=(const OrderedLocks&) = delete;

  int threads() const { return threads_; }
  GrantState& state(int thread) { return slots_[thread].state; }
  // The grant `thread` released with last (or earlier: an inline thread publishes after a run of
  // releases), written (release order) after the locks' own words:
  // whoever reads (u, p) there (acquire order) comes after every release of u up to count p.
  std::atomic<uint64_t>& published(int thread) { return slots_[thread].published; }
  // The latest release of the thread that released the free lock word `last` known to have
  // happened: `last` or that thread's published grant, whichever is later. A logged grant is
  // logged after it (the lock's last release was at or before it).
  uint64_t LatestRelease(uint64_t last) {
    const uint64_t p = published(SeamLock::ThreadOf(last)).load(std::memory_order_acquire);
    return p > last ? p : last;
  }
  // Waits until the thread of the free lock word `release` has published it or a later one,
  // telling the policy (Waiting) as Take does.
  void AwaitPublished(uint64_t release, int thread, uint64_t lock_id, int64_t task);
  uint64_t acquires(int thread) const { return slots_[thread].state.acquires(); }

  // One acquire by `thread` of `lock` (id `lock_id`) to run `task`, counted and folded into the
  // thread's digest. Returns holding it.
  void Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task);
  void Release(SeamLock& lock, int thread) {
    lock.Release(state(thread).grant);
    published(thread).store(state(thread).grant, std::memory_order_release);
  }
  // SeamLock::TakeWhenReleased for `thread`, telling the policy while it waits.
  uint64_t Take(SeamLock& lock, uint64_t wanted, int thread, uint64_t lock_id, int64_t task);

  // At an operator start, with every thread idle: every grant so far comes before any to come.
  // Throws when a thread's count nears what a lock word holds.
  void StartOperator();
  // At an operator end, with every thread idle: calls report(thread, acquires, digest) for each
  // thread that acquired a lock since the last call (Record logs a digest, Replay checks it).
  template <class Report>
  void ReportChangedThreads(const Report& report) {
    for (int t = 0; t < threads_; ++t) {
      Slot& s = slots_[t];
      if (s.state.acquires() == s.reported) continue;
      report(t, s.state.acquires(), s.state.digest);
      s.reported = s.state.acquires();
    }
  }

  // With every thread idle: `thread` has made `acquires` acquires folding to `digest`, all
  // reported. A replay from a checkpoint starts the threads where the recording's stood there.
  void RestoreThread(int thread, uint64_t acquires, uint64_t digest) {
    Slot& s = slots_[thread];
    s.state.grant = SeamLock::Grant(static_cast<uint64_t>(thread), acquires);
    s.state.digest = digest;
    s.reported = acquires;
    s.published.store(s.state.grant, std::memory_order_relaxed);
  }

  // One thread's protocol with its state in registers, for the lock engine's loop: the
  // recording of an implied grant costs the exchange, the count and the check. Calls leave the
  // fast path only for a lock found held, a logged grant or an unordered one, with the state
  // written back around them. Its acquires are counted, not folded into the digest: the
  // caller folds them (Fold, once per known run of acquires). Construct it on the thread, use
  // it, let it go.
  // kMayTakeLogged false: the thread has no logged grant ahead (next_logged is 0 when it is
  // constructed, and only TakeLogged sets it), as under Record; the check per grant goes.
  template <bool kMayTakeLogged>
  class BasicInlineThread {
   public:
    BasicInlineThread(OrderedLocks& locks, int thread)
        : locks_(locks), s_(locks.state(thread)), published_(locks.published(thread)) {
      mine_ = s_.grant & SeamLock::kThreadMask;
      Refresh();
    }
    ~BasicInlineThread() { locks_.state(thread()) = s_; }
    BasicInlineThread(const BasicInlineThread&) = delete;
    BasicInlineThread& operator=(const BasicInlineThread&) = delete;

    // The digest of acquires made (or to be made) through this thread, in their order.
    void Fold(const AcquireRun& run) { s_.digest = run.Apply(s_.digest); }

    // `lock_id` is read only off the fast path (a lock found held, a logged or an unordered
    // grant): the caller's loop need not load it per grant.
    void Acquire(SeamLock& lock, const uint64_t& lock_id, int64_t task) {
      if (kMayTakeLogged && s_.grant + SeamLock::Grant(0, 1) == logged_grant_) [[unlikely]] {
        locks_.state(thread()) = s_;
        locks_.policy_.TakeLogged(lock, lock_id, thread(), task);
        s_ = locks_.state(thread());
        Refresh();  // a logged grant raised the row
        return;
      }
      // The count before the exchange: a locked instruction runs once every earlier one has
      // retired and keeps later loads waiting, so what does not depend on the lock's last
      // release is best done while the exchange waits its turn.
      s_.Count();
      // And the registers the check needs loaded now (the empty asm): the compiler spills them
      // across the body call, and a reload after the exchange would wait for it.
      const uint64_t mine = mine_, bound = bound_;
      asm volatile("" : : "r"(mine), "r"(bound));
      // The held test and KnownGrants::Follows for the thread's own releases and its partner's,
      // in one compare (PartnerKey); a held lock and any other thread's release go further. The
      // key in place of the word (the empty asm hides that the word is the key's inverse), so
      // that the fast path keeps no copy of it.
      uint64_t key = PartnerKey(lock.Exchange(), mine);
      asm("" : "+r"(key));
      if (key > bound) [[unlikely]] {
        const uint64_t last = WordOf(key, mine);
        const int thread = SeamLock::ThreadOf(mine);
        locks_.state(thread) = s_;
        if (last & SeamLock::kHeld)
          locks_.TakeHeld(lock, lock_id, thread, task);
        else if (!KnownGrants::Follows(s_.known, last))
          locks_.policy_.UnorderedGrant(lock, lock_id, thread, task, last);
        s_ = locks_.state(thread);
        Refresh();
      }
    }
    void Release(SeamLock& lock) { lock.Release(s_.grant); }
    // After a run of Releases (the lock engine: a body's locks), so that a logged grant of
    // another thread can learn them all (LatestRelease): one store per run, not per lock.
    void Publish() { published_.store(s_.grant, std::memory_order_release); }

    // A lock word `last` as a key relative to the thread's own bits `mine` (SeamLock::kThreadMask
    // in place): their xor rotated right by one, so that the held bit is the key's top, the
    // thread bits xor the own thread's sit below it and the number at the bottom. A free word of
    // the thread's own keys below 2^48, its partner's (thread ^ 1) in [2^48, 2^49), every other
    // thread's from 2^49 up and a held word from 2^63 up. So "implied without the row", a free
    // release of the thread's own or one at or before the partner's row entry, is
    // key <= bound_ = 2^48 + that entry's number: one compare.
    static uint64_t PartnerKey(uint64_t last, uint64_t mine) {
      static_assert(SeamLock::kHeld == 1 && SeamLock::kNumberShift == 1 &&
                    SeamLock::kThreadShift == 49);
      const uint64_t x = last ^ mine;
      return x >> 1 | x << 63;  // a rotation: one instruction
    }
    // The lock word of PartnerKey(word, mine).
    static uint64_t WordOf(uint64_t key, uint64_t mine) { return (key << 1 | key >> 63) ^ mine; }

   private:
    // The thread, from its bits: a member of its own would take a register in the caller's loop.
    int thread() const { return SeamLock::ThreadOf(mine_); }
    // After the row may have changed (a logged grant, or one found held). The last thread of
    // an odd count has no partner: its entry, inside the row's zeroed cache line (a row holds
    // the thread count rounded up to 8), is never written and no release names that thread.
    void Refresh() {
      const uint64_t partner = SeamLock::ThreadOf(mine_) ^ 1;
      bound_ = uint64_t{1} << SeamLock::kNumberBits | SeamLock::NumberOf(s_.known[partner]);
      // next_logged 0 (none ahead) gives the thread's number 0, which no count's sum reaches.
      if constexpr (kMayTakeLogged) logged_grant_ = mine_ | SeamLock::Grant(0, s_.next_logged);
    }

    OrderedLocks& locks_;
    GrantState s_;
    std::atomic<uint64_t>& published_;
    uint64_t mine_;   // the thread's bits in a lock word (SeamLock::kThreadMask)
    uint64_t bound_;  // see PartnerKey
    // The grant of the thread's next logged acquire, SeamLock::Grant(thread, next_logged): the
    // check for it is then one compare with the count's sum.
    uint64_t logged_grant_ = 0;
  };
  // Any policy's thread.
  using InlineThread = BasicInlineThread<true>;
  // A thread with no logged grant ahead (see above).
  using UnloggedInlineThread = BasicInlineThread<false>;

 private:
  struct alignas(64) Slot {  // its own cache line: written on every release (published)
    GrantState state;
    uint64_t reported = 0;  // acquires at the last ReportChangedThreads
    std::atomic<uint64_t> published{0};
  };

  // The fast path's exchange found `lock` held (its last release lost): the acquire is
  // counted; waits for the holder's release and takes it.
  void TakeHeld(SeamLock& lock, uint64_t lock_id, int thread, int64_t task);

  int threads_;
  Policy& policy_;
  std::unique_ptr<Slot[]> slots_;
  KnownGrants known_;
};

}  // namespace strads
