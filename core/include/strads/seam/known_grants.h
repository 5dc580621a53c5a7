// KnownGrants: for each worker thread t of a node and each thread u, the highest acquire number
// of u that t's lock grants are known to come after (kept as a lock word, see Follows). It decides
// which lock grants a trace logs (recorder/FORMAT.md, "which lock grants are logged"); the Record
// and Replay policies keep it alike, so that a replay implies exactly the grants the recording
// implied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "strads/seam/ordering.h"

namespace strads {

class KnownGrants {
 public:
  explicit KnownGrants(int threads)
      : threads_(static_cast<size_t>(threads)),
        stride_((threads_ + 7) / 8),
        lines_(std::make_unique<CacheLine[]>(stride_ * threads_)) {
    for (size_t t = 0; t < threads_; ++t) row(static_cast<int>(t))[t] = UINT64_MAX;
  }

  // Thread t's row: read at every grant, written at logged ones, so it lies on cache lines of
  // its own. Only thread t uses it, and StartOperator while every thread is idle.
  uint64_t* row(int thread) { return lines_[static_cast<size_t>(thread) * stride_].words; }

  // Whether the thread owning `row` already comes after the last grant in lock word `word`:
  // its own grant (a thread's own entry is the maximum), or one at or before a grant it is
  // known to follow. Otherwise the grant it is taking must be logged. An entry holds the
  // largest lock word of such a grant (number << 16 | kLowBits), so that the lock word is
  // compared as it is, and ThreadOf(word) * 8 is (word & kThreadMask) * 4: no shifts.
  static bool Follows(const uint64_t* row, uint64_t word) {
    static_assert(SeamLock::kNumberShift == 16 && SeamLock::kThreadBits == 15);
    uint64_t ceiling;
    std::memcpy(&ceiling, reinterpret_cast<const char*>(row) + (word & SeamLock::kThreadMask) * 4,
                8);
    return word <= ceiling;
  }
  // The thread owning `row` now comes after the last grant in `word` (a logged grant).
  static void Learn(uint64_t* row, uint64_t word) {
    row[SeamLock::ThreadOf(word)] = word | kLowBits;
  }

  // At an operator start, with every thread idle: every grant so far comes before any to come.
  // `acquires_of(u)` is thread u's acquire count.
  template <class AcquiresOf>
  void StartOperator(const AcquiresOf& acquires_of) {
    for (size_t t = 0; t < threads_; ++t)
      for (size_t u = 0; u < threads_; ++u)
        if (u != t)
          row(static_cast<int>(t))[u] =
              SeamLock::Grant(0, acquires_of(static_cast<int>(u))) | kLowBits;
  }

 private:
  static constexpr uint64_t kLowBits = SeamLock::kThreadMask | SeamLock::kHeld;  // below the number
  struct alignas(64) CacheLine {
    uint64_t words[8];
  };
  size_t threads_;
  size_t stride_;  // cache lines per row
  std::unique_ptr<CacheLine[]> lines_;
};

}  // namespace strads
