// AsyncFor(S, E, F): runs F(S), ..., F(E) (inclusive end, as in the paper) in parallel on every
// node's threads, with a result equal bit for bit to running the bodies serially in the order
// Runtime::last_serial_order() reports. Collective: every node calls it. See async_loop.h.
//
// With `--async-engine locks` (or STRADS_ASYNC_ENGINE=locks) AsyncFor runs the element-lock
// engine instead (locked_loop.h): nondeterministic, no serial order. OrderedAsyncFor always
// schedules.
//
// In F, capture input data as `const dvector<T>&` (reads) and parameters as `dvector<T>&`
// (writes): a non-const access counts as a write. F's control flow must not depend on the
// values of written elements (static control flow; reconnaissance runs F with scratch values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <span>
#include <vector>

#include "strads/async_loop.h"
#include "strads/locked_loop.h"
#include "strads/runtime.h"

namespace strads {

template <class F>
void AsyncFor(int64_t first, int64_t last, F&& body,
              std::source_location where = std::source_location::current()) {
  Runtime& rt = Runtime::Current();
  if (rt.options().async_engine == AsyncEngine::kLocks) {
    LockedLoop& locked = LockedLoop::At(rt, where.file_name(), where.line(), first, last);
    locked.Prepare(rt, [&](int64_t i) { body(i); });
    locked.Execute(rt, [&](int64_t i) { body(i); });
    return;
  }
  const auto followed = AsyncLoop::FollowedOrder(rt, where.file_name(), where.line(), first, last);
  AsyncLoop& loop = AsyncLoop::At(rt, where.file_name(), where.line(), first, last, followed.get());
  loop.Prepare(rt, [&](int64_t i) { body(i); });
  loop.Execute(rt, [&](std::span<const int64_t> bodies, const std::byte* const* ahead) {
    for (size_t k = 0; k < bodies.size(); ++k) {
      __builtin_prefetch(ahead[k + AsyncLoop::kPrefetchDistance]);
      body(bodies[k]);
    }
  });
}

// The ordered variant: `order` (a permutation of first..last) is kept for every pair of
// conflicting bodies; others may run in parallel. A call with another order than the last
// call's plans again.
//
// Under --dual-in (dual testing) both AsyncFor and OrderedAsyncFor run the ordered variant with
// the order the followed file lists for this invocation of the call site (dual_trace.h).
template <class F>
void OrderedAsyncFor(int64_t first, int64_t last, const std::vector<int64_t>& order, F&& body,
                     std::source_location where = std::source_location::current()) {
  Runtime& rt = Runtime::Current();
  const auto followed = AsyncLoop::FollowedOrder(rt, where.file_name(), where.line(), first, last);
  AsyncLoop& loop = AsyncLoop::At(rt, where.file_name(), where.line(), first, last,
                                  followed ? followed.get() : &order);
  loop.Prepare(rt, [&](int64_t i) { body(i); });
  loop.Execute(rt, [&](std::span<const int64_t> bodies, const std::byte* const* ahead) {
    for (size_t k = 0; k < bodies.size(); ++k) {
      __builtin_prefetch(ahead[k + AsyncLoop::kPrefetchDistance]);
      body(bodies[k]);
    }
  });
}

}  // namespace strads
