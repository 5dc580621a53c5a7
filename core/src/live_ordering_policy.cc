#include "strads/seam/ordered_locks.h"
#include "strads/seam/ordering.h"

namespace strads {

void OrderingPolicy::Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) {
  if (const InlineLocks how = inline_locks(); how.kind == InlineLocks::kOrdered)
    return how.ordered->Acquire(lock, lock_id, thread, task);
  // The free lock without a call, so that the common case saves no registers.
  if (!lock.TrySet()) [[unlikely]]
    lock.TakeWhenReleased();
}

void OrderingPolicy::Release(SeamLock& lock, uint64_t, int thread) {
  if (const InlineLocks how = inline_locks(); how.kind == InlineLocks::kOrdered)
    return how.ordered->Release(lock, thread);
  lock.ClearHeld();
}

int LiveOrderingPolicy::NextSource(Tag) { return kAnySource; }
void LiveOrderingPolicy::Delivered(const Message&) {}
uint64_t LiveOrderingPolicy::Choose(ChoicePoint, uint64_t live_value) { return live_value; }
void LiveOrderingPolicy::Input(const std::string&, uint64_t, std::span<const std::byte>) {}
void LiveOrderingPolicy::OperatorBegin(const OperatorSite&) {}
void LiveOrderingPolicy::OperatorEnd(const OperatorSite&) {}
void LiveOrderingPolicy::Finish(bool) {}

Message DeliverNext(Transport& transport, OrderingPolicy& policy, Tag tag, double timeout) {
  const int source = policy.NextSource(tag);
  const uint64_t begin = SteadyNowNs();
  Message m = transport.Receive(source, tag, timeout);
  policy.Delivered(m);
  if (const uint64_t waited = SteadyNowNs() - begin; waited >= kWaitReportNs)
    policy.Waited(WaitKind::kMessage, m.source, begin, waited);
  return m;
}

}  // namespace strads
