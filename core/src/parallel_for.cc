#include "strads/parallel_for.h"

#include "loop_body_scope.h"
#include "node_context.h"
#include "thread_pool.h"

namespace strads::internal {

void RunParallelFor(Runtime& rt, int64_t count, FunctionRef<void(int64_t)> piece, const char* file,
                    uint32_t line) {
  const LoopBodyScope bodies("ParallelFor", file, line);
  bodies.Run([&] {
    ThreadPool& pool = rt.context().pool();
    const int threads = pool.size();
    if (threads == 1 || count <= 1) {  // no wake-up of idle threads for a loop they cannot share
      for (int64_t i = 0; i < count; ++i) piece(i);
      return;
    }
    pool.RunOnAll([&](int t) {
      for (int64_t i = t; i < count; i += threads) piece(i);
    });
  });
}

}  // namespace strads::internal
