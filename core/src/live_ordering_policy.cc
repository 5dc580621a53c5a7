#include <thread>

#include "strads/baton.h"
#include "strads/ordering.h"

namespace strads {

void LiveOrderingPolicy::SpinAcquire(SeamLock& lock) {
  for (int spins = 0;; ++spins) {
    if (lock.held.load(std::memory_order_relaxed) == 0 &&
        lock.held.exchange(1, std::memory_order_acquire) == 0)
      return;
    if (Baton::enabled()) {
      Baton::Released released;  // the holder needs it to get to its Release
      std::this_thread::yield();
    } else if (spins > 64) {
      std::this_thread::yield();
    }
  }
}

void LiveOrderingPolicy::Acquire(SeamLock& lock, uint64_t, int, int64_t) { SpinAcquire(lock); }
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
