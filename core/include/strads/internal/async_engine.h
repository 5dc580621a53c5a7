// The non-template side of AsyncFor (async_for.h): the engines run in the library, the program's
// body reaches them through two FunctionRefs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strads/internal/function_ref.h"
#include "strads/runtime.h"

namespace strads::internal {

// Runs one body: F(i).
using LoopBody = FunctionRef<void(int64_t)>;
// Runs a group's bodies in order: F(first + bodies[k]) (offsets in 32 bits halve a plan's
// memory). ahead[k] is an address body k reads, for software prefetch: ahead has
// bodies.size() + kPrefetchDistance entries, the last ones pointing at a dummy.
using GroupRunner = FunctionRef<void(int64_t first, std::span<const uint32_t> bodies,
                                     const std::byte* const* ahead)>;
inline constexpr size_t kPrefetchDistance = 8;

struct LoopSite {
  const char* file;
  uint32_t line;
  bool dynamic = false;  // DynamicAsyncFor: plan every call
};

// Collective. AsyncFor(first, last) at `site` (`order` null), or OrderedAsyncFor (`order` a
// permutation of first..last). The schedule engine calls `run_group` per group and `body` for
// reconnaissance; the lock engine (unordered calls with --async-engine locks) calls `body`.
void RunAsyncFor(Runtime& rt, LoopSite site, int64_t first, int64_t last,
                 const std::vector<int64_t>* order, LoopBody body, GroupRunner run_group);

// Collective. AsyncForEach(indices) at `site`: `body` runs an index (reconnaissance, the lock
// engine), `run_group` a group of positions in `indices` (index_set_loop.h).
void RunAsyncForEach(Runtime& rt, LoopSite site, const std::vector<int64_t>& indices, LoopBody body,
                     GroupRunner run_group);

}  // namespace strads::internal
