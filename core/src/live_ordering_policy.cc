#include <thread>

#include "strads/seam/baton.h"
#include "strads/seam/ordering.h"

namespace strads {

namespace {

// One failed attempt: spin politely, and give up the baton (the holder needs it to release).
void WaitForRelease(int spins) {
  if (Baton::enabled()) {
    Baton::Released released;
    std::this_thread::yield();
  } else if (spins > 64) {
    std::this_thread::yield();
  }
}

}  // namespace

uint64_t LiveOrderingPolicy::SpinAcquire(SeamLock& lock) {
  uint64_t before = lock.word.load(std::memory_order_relaxed);
  for (int spins = 0;; ++spins) {
    if (lock.TryTake(before, before)) return before;  // the last grant stays as it was
    if (before & SeamLock::kHeld) {
      WaitForRelease(spins);
      before = lock.word.load(std::memory_order_relaxed);
    }
  }
}

uint64_t LiveOrderingPolicy::SpinExchange(SeamLock& lock) {
  for (int spins = 0;; ++spins) {
    WaitForRelease(spins);
    if ((lock.word.load(std::memory_order_relaxed) & SeamLock::kHeld) == 0) {
      const uint64_t last = lock.Exchange();
      if ((last & SeamLock::kHeld) == 0) return last;
    }
  }
}

void LiveOrderingPolicy::Acquire(SeamLock& lock, uint64_t, int, int64_t) {
  // The free lock without a call, so that the common case saves no registers.
  if (!lock.TrySet()) [[unlikely]]
    SpinAcquire(lock);
}
void LiveOrderingPolicy::Release(SeamLock& lock, uint64_t, int) { SpinRelease(lock); }
int LiveOrderingPolicy::NextSource(Tag) { return kAnySource; }
void LiveOrderingPolicy::Delivered(const Message&) {}
uint64_t LiveOrderingPolicy::Choose(ChoicePoint, uint64_t live_value) { return live_value; }
void LiveOrderingPolicy::Input(const std::string&, uint64_t, std::span<const std::byte>) {}
void LiveOrderingPolicy::OperatorBegin(const OperatorSite&) {}
void LiveOrderingPolicy::OperatorEnd(const OperatorSite&) {}
void LiveOrderingPolicy::Finish(bool) {}

Message DeliverNext(Transport& transport, OrderingPolicy& policy, Tag tag, double timeout) {
  Message m = transport.Receive(policy.NextSource(tag), tag, timeout);
  policy.Delivered(m);
  return m;
}

}  // namespace strads
