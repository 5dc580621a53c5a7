// AsyncFor(S, E, F): runs F(S), ..., F(E) (inclusive end, as in the paper) in parallel on every
// node's threads, with a result equal bit for bit to running the bodies serially in the order
// Runtime::last_serial_order() reports. Collective: every node calls it.
//
// The first call at a call site is a reconnaissance execution: every body runs once with its
// DDS accesses recorded and its writes discarded; the scheduler builds rounds of conflict-free
// groups from them, and later calls reuse the plan (docs/async_for.md). So, in F:
//  - capture input data as `const dvector<T>&` (reads) and parameters as `dvector<T>&`
//    (writes): a non-const access counts as a write;
//  - F's control flow and the elements it accesses must not depend on the values of written
//    elements or on anything that changes between calls (static control flow).
//
// With `--async-engine locks` AsyncFor runs the element-lock engine instead: nondeterministic,
// no serial order; its lock grants and message deliveries go through the ordering seam, so it
// can be recorded and replayed. OrderedAsyncFor always schedules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <span>
#include <vector>

#include "strads/internal/async_engine.h"
#include "strads/internal/body_adds.h"
#include "strads/internal/body_failure.h"
#include "strads/runtime.h"

namespace strads {

namespace internal {

// One body, then the end of its accumulator adds (body_adds.h): reconnaissance and the lock
// engine run bodies one by one. The handlers here and in RunGroupOf only note which body threw
// (body_failure.h): a body that returns does not reach them.
template <class F>
auto RunOneOf(F& body) {
  return [&body](int64_t i) {
    const BodyEnd end;
    try {
      body(i);
    } catch (...) {
      NoteBodyFailure(i);
      throw;
    }
  };
}

// F(i) compiled as one function with everything it calls inlined, as a serial loop's body is
// inlined into its loop. Called alone, a body is a function with a small frame, and GCC keeps
// the callees that hold a large local array out of line (--param large-stack-frame-growth):
// lda's sampler, with its `double p[64]`, was a call per token where the serial twin inlines it.
// The runtime's cold paths a body can reach (accumulator Setup, the access hook's call) are
// noinline, so that flattening does not pull them in to crowd the body's registers. Callgrind,
// 1 thread: lda 824 -> 789 instructions a token, sgdmf 61.2 -> 51.4 M an epoch
// (docs/async_for.md, "Each body compiled whole").
template <class F>
[[gnu::noinline, gnu::flatten]] void RunFlat(F& body, int64_t i) {
  body(i);
}

// The group runner of body type F: the per-index loop around F, each body followed by the end
// of its accumulator adds.
template <class F>
auto RunGroupOf(F& body) {
  return [&body](int64_t first, std::span<const uint32_t> bodies, const std::byte* const* ahead) {
    size_t k = 0;
    try {
      for (; k < bodies.size(); ++k) {
        __builtin_prefetch(ahead[k + kPrefetchDistance]);
        const BodyEnd end;
        RunFlat(body, first + bodies[k]);
      }
    } catch (...) {
      NoteBodyFailure(first + bodies[k]);
      throw;
    }
  };
}

// The group runner of AsyncForEach: groups list positions in `indices`.
template <class F>
auto RunGroupOfIndexes(F& body, const std::vector<int64_t>& indices) {
  return [&body, &indices](int64_t first, std::span<const uint32_t> positions,
                           const std::byte* const* ahead) {
    size_t k = 0;
    try {
      for (; k < positions.size(); ++k) {
        __builtin_prefetch(ahead[k + kPrefetchDistance]);
        const BodyEnd end;
        RunFlat(body, indices[static_cast<size_t>(first + positions[k])]);
      }
    } catch (...) {
      NoteBodyFailure(indices[static_cast<size_t>(first + positions[k])]);
      throw;
    }
  };
}

}  // namespace internal

template <class F>
void AsyncFor(int64_t first, int64_t last, F&& body,
              std::source_location where = std::source_location::current()) {
  internal::RunAsyncFor(Runtime::Current(), {where.file_name(), where.line()}, first, last, nullptr,
                        internal::RunOneOf(body), internal::RunGroupOf(body));
}

// The dynamic variant, for bodies whose elements change from call to call (say, random
// negatives drawn afresh each epoch, from a generator seeded by the index and the epoch): every
// call runs its own reconnaissance and is planned from it, which costs a reconnaissance run and
// a planning per call. Plain AsyncFor reports such a body as an error (--access-check).
template <class F>
void DynamicAsyncFor(int64_t first, int64_t last, F&& body,
                     std::source_location where = std::source_location::current()) {
  internal::RunAsyncFor(Runtime::Current(), {where.file_name(), where.line(), /*dynamic=*/true},
                        first, last, nullptr, internal::RunOneOf(body), internal::RunGroupOf(body));
}

// The variant over an index set that changes from call to call (say, the coordinates a
// scheduler picks each round): runs F(i) for every i in `indices` (distinct; the same on every
// node), with a result equal bit for bit to running them serially in the order
// Runtime::last_serial_order() reports (a permutation of `indices`). Each index's accesses are
// recorded the first time the site runs it and kept (a bounded cache, the same on every node),
// so a call reconnoitres only the indices the site has not seen and plans from the accesses of
// its own indices: the work per call follows the set, not the range the indices come from
// (docs/async_for.md, "Index sets"). F must keep static control flow per index: a body that
// touches other elements than when it was first seen is an access error (--access-check),
// as in AsyncFor. --async-engine locks runs it on the lock engine, --dual-in follows the file.
template <class F>
void AsyncForEach(const std::vector<int64_t>& indices, F&& body,
                  std::source_location where = std::source_location::current()) {
  internal::RunAsyncForEach(Runtime::Current(), {where.file_name(), where.line()}, indices,
                            internal::RunOneOf(body), internal::RunGroupOfIndexes(body, indices));
}

// The ordered variant: `order` (a permutation of first..last) is kept for every pair of
// conflicting bodies; others may run in parallel. A call with another order than the last
// call's plans again. An order that is no permutation is a UsageError naming the call and the
// index at fault.
//
// Under --dual-in (dual testing) both AsyncFor and OrderedAsyncFor run the ordered variant with
// the order the followed file lists for this invocation of the call site.
template <class F>
void OrderedAsyncFor(int64_t first, int64_t last, const std::vector<int64_t>& order, F&& body,
                     std::source_location where = std::source_location::current()) {
  internal::RunAsyncFor(Runtime::Current(), {where.file_name(), where.line()}, first, last, &order,
                        internal::RunOneOf(body), internal::RunGroupOf(body));
}

}  // namespace strads
