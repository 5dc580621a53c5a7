// Which body's exception ended a loop, for the node's error report ("... (in AsyncFor at
// trainer.cc:42, the body of index 17)"). The loop runners (async_for.h, sync_for.h,
// parallel_for.h) note the index in a handler around their bodies, which costs nothing until a
// body throws; the loop notes its site as the exception leaves it (loop_body_scope.h), and
// strads::Run adds both to the report when that exception ends the node.
#pragma once

#include <cstdint>
#include <exception>

namespace strads::internal {

struct BodyFailure {
  std::exception_ptr exception;  // null: nothing noted
  int64_t index = 0;
};

// Called in a handler: the exception being handled left the body of `index` (a loop index, a
// mini-batch's first index, a ParallelFor piece). Noted on the calling thread; a note of the same
// exception is kept (the innermost body that it left is the one that threw it).
[[gnu::cold, gnu::noinline]] void NoteBodyFailure(int64_t index);

// The calling thread's note, taken; and set from another thread's: how a worker's note follows
// its exception to the driver thread that rethrows it (ThreadPool, reconnaissance).
BodyFailure TakeBodyFailure();
void AdoptBodyFailure(BodyFailure failure);

}  // namespace strads::internal
