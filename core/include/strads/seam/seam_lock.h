// SeamLock: a spin lock whose grants the ordering seam decides (ordering.h). One word: the held
// bit, and the lock's last release: the node-local thread that released it and that thread's
// acquire count then (its grants on the node so far, that one included). A fresh lock reads
// thread 0, count 0: "before thread 0's first acquire", which every thread has seen. Live leaves
// the last release alone; the ordered protocol (ordered_locks.h) writes it at every release, so
// that a grant can be logged as "after thread u's acquire n" at no extra cache traffic. Eight
// bytes: a lock per element of a DDS.
//
// The layout: the held bit (0), the number (1..48), the thread (49..63). A free word thus
// compares as (thread, number), and rotated right by one the held bit becomes the top one: the
// ordered protocol checks a grant, the held test included, in one compare (ordered_locks.h,
// BasicInlineThread::PartnerKey), while Live's bit operations stay on bit 0, whose immediates
// are short.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "strads/seam/baton.h"

namespace strads {

struct SeamLock {
  static constexpr uint64_t kHeld = 1;
  static constexpr int kNumberShift = 1;  // the number: bits 1..48
  static constexpr int kNumberBits = 48;
  static constexpr int kThreadShift = 49;  // the thread: bits 49..63
  static constexpr int kThreadBits = 15;
  static constexpr uint64_t kMaxThreads = uint64_t{1} << kThreadBits;
  static constexpr uint64_t kThreadMask = (kMaxThreads - 1) << kThreadShift;  // in place
  static constexpr uint64_t kMaxNumber = (uint64_t{1} << kNumberBits) - 1;
  // TakeWhenReleased's `wanted` for "any release".
  static constexpr uint64_t kAnyRelease = ~uint64_t{0};

  // The word of "released by `thread` after its acquire `number`" (held bit clear).
  static constexpr uint64_t Grant(uint64_t thread, uint64_t number) {
    return thread << kThreadShift | number << kNumberShift;
  }
  static constexpr uint16_t ThreadOf(uint64_t word) {
    return static_cast<uint16_t>(word >> kThreadShift);
  }
  static constexpr uint64_t NumberOf(uint64_t word) { return (word >> kNumberShift) & kMaxNumber; }

  // Takes the lock as `grant` if `before` (a word read from it) is free and still current: one
  // compare-exchange. On failure `before` is the current word if the exchange was tried.
  bool TryTake(uint64_t& before, uint64_t grant) {
    return (before & kHeld) == 0 &&
           word.compare_exchange_weak(before, grant | kHeld, std::memory_order_acquire,
                                      std::memory_order_relaxed);
  }

  // Live's take: sets the held bit; true if it was clear (taken, the last release unchanged).
  // One atomic bit-test-and-set with no load before it: a lock word last written by another
  // core moves here once (a load and then a compare-exchange move it twice).
  bool TrySet() { return (word.fetch_or(kHeld, std::memory_order_acquire) & kHeld) == 0; }

  // The ordered protocol's take: sets the word to "held" and returns the word from before. When
  // that was held too, the lock is not taken and its last release is lost, which is harmless:
  // the holder's release writes its own (the caller then waits with TakeWhenReleased).
  uint64_t Exchange() { return word.exchange(kHeld, std::memory_order_acquire); }

  // Waits until the lock is free with last release `wanted` (kAnyRelease: any), takes it
  // (keeping the last release in the word) and returns that release. Gives up the baton while it
  // waits (the holder needs it to release). `waiting()` is called about every thousand failed
  // attempts; it may throw to end the wait.
  template <class Waiting>
  uint64_t TakeWhenReleased(uint64_t wanted, const Waiting& waiting) {
    for (uint64_t spins = 0;; ++spins) {
      uint64_t before = word.load(std::memory_order_relaxed);
      if ((wanted == kAnyRelease || before == wanted) && TryTake(before, before)) return before;
      if (Baton::enabled()) {
        Baton::Released released;
        std::this_thread::yield();
      } else if (spins >= 64) {
        std::this_thread::yield();
      }
      if (spins % 1024 == 1023) waiting();
    }
  }
  // Any release, no callback; out of line, so that fast paths that call it save no registers.
  uint64_t TakeWhenReleased();

  // Live's release: only the holder changes a held lock, so a plain store.
  void ClearHeld() {
    word.store(word.load(std::memory_order_relaxed) & ~kHeld, std::memory_order_release);
  }
  // The ordered protocol's release: the releasing thread's own (thread, count), held bit clear.
  void Release(uint64_t grant) { word.store(grant, std::memory_order_release); }

  std::atomic<uint64_t> word{0};
};
static_assert(sizeof(SeamLock) == 8);

}  // namespace strads
