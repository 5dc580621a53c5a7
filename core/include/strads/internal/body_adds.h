// The undo log of a loop body's accumulator adds (strads/accumulator.h). A body reads the values
// its call began with plus its own adds, from its thread's copy of the accumulator (the view);
// Add logs each element of the view before it changes it, and the loop runners (async_for.h,
// sync_for.h) call EndBody after every body, which puts the logged elements back, so that the
// next body on the thread sees the call's start values again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strads::internal {

// Every entry saves and restores the 8 bytes at its slot, whatever the element's size, so that
// restoring is one store with no size to test: views keep 8 bytes of padding past their last
// element. Restoring last first leaves every byte at its value before the body's first add
// that covered it, and no add changes a byte its own entry does not cover, so that value is
// the call's start value.
inline constexpr size_t kBodyAddBytes = 8;

struct BodyAddLog {
  struct Entry {
    std::byte* slot;  // an element of a thread's view
    uint64_t before;  // the 8 bytes at `slot` before the add
  };
  // LDA adds twice per body; entries past these go to a thread-local vector (body_adds.cc).
  static constexpr uint32_t kInline = 16;
  static constexpr size_t kInlineBytes = kInline * sizeof(Entry);
  // The running body's entries times sizeof(Entry), the overflowed ones included: a byte
  // offset into `entries`, so that logging and undoing index them with no multiplication (an
  // add and an undo are a few instructions, and LDA's sampler runs them for every token).
  size_t bytes;
  Entry entries[kInline];
};

// Zero-initialised, so that a thread's first use runs no initialiser.
inline thread_local BodyAddLog body_add_log;

void LogBodyAddOverflow(std::byte* slot, uint64_t before);
// Restores the overflowed entries, last first, and forgets them.
void UndoBodyAddOverflow();

// Logs the view element at `slot` (with kBodyAddBytes readable and writable there) before the
// body changes it.
inline void LogBodyAdd(void* slot) {
  BodyAddLog& log = body_add_log;
  std::byte* const at = static_cast<std::byte*>(slot);
  uint64_t before;
  std::memcpy(&before, at, kBodyAddBytes);
  const size_t b = log.bytes;
  if (b < BodyAddLog::kInlineBytes) [[likely]]
    *reinterpret_cast<BodyAddLog::Entry*>(reinterpret_cast<std::byte*>(log.entries) + b) = {at,
                                                                                            before};
  else
    LogBodyAddOverflow(at, before);
  log.bytes = b + sizeof(BodyAddLog::Entry);
}

// After every body: undoes its adds to the views, last first.
inline void EndBody() {
  BodyAddLog& log = body_add_log;
  size_t b = log.bytes;
  if (b == 0) return;
  if (b > BodyAddLog::kInlineBytes) [[unlikely]] {
    UndoBodyAddOverflow();
    b = BodyAddLog::kInlineBytes;
  }
  // One entry per turn, not unrolled: a body logs a few (LDA two), and each unrolled step
  // would add its own test of the count.
#pragma GCC unroll 1
  do {
    b -= sizeof(BodyAddLog::Entry);
    const BodyAddLog::Entry& e =
        *reinterpret_cast<const BodyAddLog::Entry*>(reinterpret_cast<std::byte*>(log.entries) + b);
    std::memcpy(e.slot, &e.before, kBodyAddBytes);
  } while (b != 0);
  log.bytes = 0;
}

// EndBody on every way out of a body, an exception included.
struct BodyEnd {
  BodyEnd() = default;
  BodyEnd(const BodyEnd&) = delete;
  BodyEnd& operator=(const BodyEnd&) = delete;
  ~BodyEnd() { EndBody(); }
};

}  // namespace strads::internal
