// LoopBodyScope: marks the calling (driver) thread as running a loop's bodies, as node thread 0
// does, for the length of the loop. A body that calls an operator (a nested AsyncFor, a
// ParallelFor, a SyncFor) reaches Runtime::Current() on that thread, which then throws a
// UsageError naming the loop: run, the nested loop took over the node's threads in the middle
// of the outer one (an internal error on 2 threads, a result no serial loop gives on one).
// Worker threads have no runtime, so Current() already refuses them.
// It also names the loop and the body in the error report of an exception a body threw.
#pragma once

#include <cstdint>
#include <string>

namespace strads::internal {

class LoopBodyScope {
 public:
  // `file` may be empty (ParallelFor has no call site).
  LoopBodyScope(const char* kind, const char* file, uint32_t line);
  ~LoopBodyScope();
  LoopBodyScope(const LoopBodyScope&) = delete;
  LoopBodyScope& operator=(const LoopBodyScope&) = delete;

  // The innermost loop the calling thread runs the bodies of, or null.
  static const LoopBodyScope* Running();
  // "AsyncFor at trainer.cc:42".
  std::string Describe() const;

  // Runs `loop` (the engine's work for this loop) and, if an exception leaves it, notes which
  // body threw it (NoteFailure) before it goes on. Not the destructor's job: while unwinding,
  // std::current_exception() is null.
  template <class F>
  void Run(F&& loop) const {
    try {
      loop();
    } catch (...) {
      NoteFailure();
      throw;
    }
  }

  // What NoteFailure kept for the exception being handled, or "" (not thrown by a body).
  static std::string FailureNote();

 private:
  // Called in a handler as an exception leaves the loop: if one of its bodies threw it
  // (body_failure.h), the calling thread keeps " (in AsyncFor at trainer.cc:42, the body of
  // index 17)" for it. An outer loop's note replaces an inner one's: the engine's own loops run
  // inside the program's.
  void NoteFailure() const;

  const char* kind_;
  const char* file_;
  uint32_t line_;
  const LoopBodyScope* outer_;  // the engine's own loops nest (a ParallelFor inside AsyncFor)
};

}  // namespace strads::internal
