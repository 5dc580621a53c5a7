// ParallelFor(count, F): runs F(0), ..., F(count - 1) on the calling node's threads and returns
// when all have run. It is for driver-side work between operators that is not a DDS update, such
// as a scheduler's draws and dot products (examples/common/lasso_problem.h): it plans nothing,
// checks no accesses and records nothing, so
//  - the pieces must write disjoint memory, and F(i) must depend on i and on data no piece
//    writes; then the result is the serial loop's, bit for bit, for any --threads, --nodes or
//    mpiexec -n, and a replay recomputes it (docs/parallel_for.md);
//  - it is not collective: each node runs its own pieces;
//  - it must not be called from a loop body (the node's threads are running the loop).
// Piece i runs on thread i % threads, so cut the work into pieces of fixed size, not into one
// piece per thread, or the result would depend on the thread count.
#pragma once

#include <cstdint>
#include <source_location>

#include "strads/internal/body_failure.h"
#include "strads/internal/function_ref.h"
#include "strads/runtime.h"

namespace strads {

namespace internal {
// `file` and `line`: the program's call, named in its errors; the engine's own calls pass none.
void RunParallelFor(Runtime& rt, int64_t count, FunctionRef<void(int64_t)> piece,
                    const char* file = "", uint32_t line = 0);
}  // namespace internal

template <class F>
void ParallelFor(int64_t count, F&& piece,
                 std::source_location where = std::source_location::current()) {
  internal::RunParallelFor(
      Runtime::Current(), count,
      [&piece](int64_t i) {
        try {
          piece(i);
        } catch (...) {
          internal::NoteBodyFailure(i);  // which piece threw (body_failure.h)
          throw;
        }
      },
      where.file_name(), where.line());
}

}  // namespace strads
