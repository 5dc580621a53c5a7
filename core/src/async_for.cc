// AsyncFor's entry point: picks the engine for the call and runs it (async_engine.h).
#include <string>

#include "async_loop.h"
#include "checkpoint.h"
#include "collectives.h"
#include "locked_loop.h"
#include "loop_body_scope.h"
#include "node_context.h"
#include "strads/fnv1a.h"
#include "strads/internal/async_engine.h"

namespace strads::internal {

void RunAsyncFor(Runtime& rt, LoopSite site, int64_t first, int64_t last,
                 const std::vector<int64_t>* order, LoopBody body, GroupRunner run_group) {
  const bool locks = order == nullptr && rt.options().async_engine == AsyncEngine::kLocks;
  // A given order over an empty range runs nothing, and no plan checks it (AsyncLoop::Prepare):
  // checked here, where only the empty order passes.
  if (order && last < first)
    AsyncLoop::CheckOrder(std::string(site.file) + ":" + std::to_string(site.line), first, last,
                          *order);
  // An empty range is no operator invocation (the engines return before OperatorBegin).
  if (last >= first && rt.context().checkpoints().SkipOperator(
                           locks ? "AsyncFor/locks" : "AsyncFor", site.file, site.line))
    return;
  // Nodes that call this loop with other bounds or order, or another loop, stop at its first
  // message (one node sends none: no name to build).
  const char* kind = site.dynamic ? "DynamicAsyncFor" : order ? "OrderedAsyncFor" : "AsyncFor";
  std::string name;
  if (rt.nodes() > 1) {
    name = OperatorName(kind, site.file, site.line,
                        "over [" + std::to_string(first) + ", " + std::to_string(last) + "]");
    if (order) {
      Fnv1a h;
      h.Update(order->data(), order->size() * sizeof(int64_t));
      name += " in a given order (hash " + h.hex() + ")";
    }
  }
  const Collectives::OperatorScope scope(rt.context().collectives(), std::move(name));
  const LoopBodyScope bodies(kind, site.file, site.line);
  bodies.Run([&] {
    if (locks) {
      LockedLoop& locked = LockedLoop::At(rt, site, first, last);
      locked.Prepare(rt, body);
      locked.Execute(rt, body);
      return;
    }
    // Under --dual-in every call follows the order the dual-test file lists for it.
    const auto followed = AsyncLoop::FollowedOrder(rt, site.file, site.line, first, last);
    // The file's order replaces the program's, whose plan would have checked it: a program order
    // that is no permutation fails under dual testing as it does when run alone.
    if (followed && order)
      AsyncLoop::CheckOrder(std::string(site.file) + ":" + std::to_string(site.line), first, last,
                            *order);
    AsyncLoop& loop = AsyncLoop::At(rt, site, first, last, followed ? followed.get() : order);
    loop.Prepare(rt, body);
    loop.Execute(rt, run_group);
  });
}

}  // namespace strads::internal
