#include "strads/seam/ordered_locks.h"

#include <stdexcept>
#include <string>
#include <thread>

#include "strads/seam/ordering.h"  // SteadyNowNs, kWaitReportNs

namespace strads {

void OrderedLocks::Policy::TakeLogged(SeamLock&, uint64_t, int, int64_t) {
  throw std::logic_error("OrderedLocks: a logged grant for a policy that logs none ahead");
}

OrderedLocks::OrderedLocks(int threads, Policy& policy)
    : threads_(threads),
      policy_(policy),
      slots_(std::make_unique<Slot[]>(static_cast<size_t>(threads))),
      known_(threads) {
  for (int t = 0; t < threads; ++t) {
    slots_[t].state.grant = SeamLock::Grant(static_cast<uint64_t>(t), 0);
    slots_[t].published.store(slots_[t].state.grant, std::memory_order_relaxed);
    slots_[t].state.known = known_.row(t);
  }
}

void OrderedLocks::Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) {
  InlineThread(*this, thread).Acquire(lock, lock_id, task);
  state(thread).Fold(lock_id, task);
}

void OrderedLocks::TakeHeld(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) {
  const uint64_t last = Take(lock, SeamLock::kAnyRelease, thread, lock_id, task);
  if (!KnownGrants::Follows(state(thread).known, last))
    policy_.UnorderedGrant(lock, lock_id, thread, task, last);
}

uint64_t OrderedLocks::Take(SeamLock& lock, uint64_t wanted, int thread, uint64_t lock_id,
                            int64_t task) {
  const uint64_t begin = SteadyNowNs();
  const uint64_t last = lock.TakeWhenReleased(wanted, [&] {
    policy_.Waiting(thread, lock_id, task, static_cast<double>(SteadyNowNs() - begin) * 1e-9);
  });
  if (const uint64_t waited = SteadyNowNs() - begin; waited >= kWaitReportNs)
    policy_.LockWaited(thread, lock_id, begin, waited);
  return last;
}

void OrderedLocks::AwaitPublished(uint64_t release, int thread, uint64_t lock_id, int64_t task) {
  std::atomic<uint64_t>& published = slots_[SeamLock::ThreadOf(release)].published;
  if (published.load(std::memory_order_acquire) >= release) return;
  const uint64_t begin = SteadyNowNs();
  // As SeamLock::TakeWhenReleased: gives up the baton while it waits (the publisher needs it).
  for (uint64_t spins = 0; published.load(std::memory_order_acquire) < release; ++spins) {
    if (Baton::enabled()) {
      Baton::Released released;
      std::this_thread::yield();
    } else if (spins >= 64) {
      std::this_thread::yield();
    }
    if (spins % 1024 == 1023)
      policy_.Waiting(thread, lock_id, task, static_cast<double>(SteadyNowNs() - begin) * 1e-9);
  }
}

void OrderedLocks::StartOperator() {
  for (int t = 0; t < threads_; ++t)
    if (acquires(t) > kMaxAcquires)
      throw std::runtime_error("lock grants: thread " + std::to_string(t) +
                               " was granted more than 2^47 locks");
  known_.StartOperator([this](int u) { return acquires(u); });
}

}  // namespace strads
