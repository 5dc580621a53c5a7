// Cache lines of one's own: for data that one thread writes at a high rate while other threads
// run next to it (reconnaissance's per-thread hooks, scratch copies and encoders).
//
// Why: two threads that write the same 64-byte line, or one writes it and the other reads it,
// pass the line between their cores on every write, even when they touch different bytes of it
// (false sharing). malloc packs small blocks 16 bytes apart, so whether a thread's hot data
// shares a line with another thread's is decided by what was allocated before: a 24-byte change
// in an unrelated class (AsyncLoop) once moved the first call's heap by 16 bytes, put thread 0's
// scratch copies on the line of thread 1's delayed adds and doubled reconnaissance at 19 M
// ratings (docs/async_for.md, "Reconnaissance's speed and the heap"). Aligned to whole lines,
// such data shares no line whatever the heap looks like.
#pragma once

#include <cstddef>
#include <new>

namespace strads {

// The line size of the x86-64 and AArch64 cores strads runs on (std::hardware_destructive_
// interference_size is the same, but GCC warns wherever it is used in a header).
inline constexpr size_t kCacheLineBytes = 64;

// Rounds `bytes` up to whole cache lines.
constexpr size_t CacheLineRoundUp(size_t bytes) {
  return (bytes + kCacheLineBytes - 1) / kCacheLineBytes * kCacheLineBytes;
}

// A std::allocator that gives whole cache lines: each block starts a line and is rounded up to
// whole lines, so no other block shares a line with it. For small buffers a thread writes often
// (a vector's few elements would otherwise sit beside another thread's).
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator

  T* allocate(size_t n) {
    return static_cast<T*>(
        ::operator new (CacheLineRoundUp(n * sizeof(T)), std::align_val_t{kCacheLineBytes}));
  }
  void deallocate(T* p, size_t) { ::operator delete (p, std::align_val_t{kCacheLineBytes}); }

  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

}  // namespace strads
