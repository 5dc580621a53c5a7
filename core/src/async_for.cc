// AsyncFor's entry point: picks the engine for the call and runs it (async_engine.h).
#include "async_loop.h"
#include "checkpoint.h"
#include "locked_loop.h"
#include "node_context.h"
#include "strads/internal/async_engine.h"

namespace strads::internal {

void RunAsyncFor(Runtime& rt, LoopSite site, int64_t first, int64_t last,
                 const std::vector<int64_t>* order, LoopBody body, GroupRunner run_group) {
  const bool locks = order == nullptr && rt.options().async_engine == AsyncEngine::kLocks;
  // An empty range is no operator invocation (the engines return before OperatorBegin).
  if (last >= first && rt.context().checkpoints().SkipOperator(
                           locks ? "AsyncFor/locks" : "AsyncFor", site.file, site.line))
    return;
  if (locks) {
    LockedLoop& locked = LockedLoop::At(rt, site, first, last);
    locked.Prepare(rt, body);
    locked.Execute(rt, body);
    return;
  }
  // Under --dual-in every call follows the order the dual-test file lists for it.
  const auto followed = AsyncLoop::FollowedOrder(rt, site.file, site.line, first, last);
  AsyncLoop& loop = AsyncLoop::At(rt, site, first, last, followed ? followed.get() : order);
  loop.Prepare(rt, body);
  loop.Execute(rt, run_group);
}

}  // namespace strads::internal
