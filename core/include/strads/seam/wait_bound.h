// The bound of every wait for another node (--timeout): its valid range, its deadline and how a
// report names it. A deadline is computed saturating: steady_clock counts nanoseconds in 64 bits,
// so `now() + duration<double>(1e10)` overflows into the past (every wait fails at once) and
// 1e20 into undefined behaviour; a policy or a test may pass any double, not only the flag's.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace strads {

// --timeout's range, in seconds: from a millisecond (a shorter bound fails every wait on a
// loaded machine) to 30 days (a longer one is "forever"; far below the clock's 292 years).
inline constexpr double kMinWaitSeconds = 1e-3;
inline constexpr double kMaxWaitSeconds = 30.0 * 24 * 3600;

// "" if `seconds` is a valid --timeout, else what is wrong with it (NaN fails every comparison,
// so the test is written to reject it).
inline std::string WaitBoundError(double seconds) {
  if (std::isnan(seconds)) return "is not a number";
  if (!(seconds >= kMinWaitSeconds && seconds <= kMaxWaitSeconds)) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "is out of range %g .. %.0f s (30 days)", kMinWaitSeconds,
                  kMaxWaitSeconds);
    return buf;
  }
  return "";
}

// now() + `seconds`, saturated: NaN or a negative wait is now, a wait beyond 10 years is 10
// years (not time_point::max(), which some condition variables convert to another clock and
// overflow again; 10 years in nanoseconds is far from 2^63 whatever the uptime).
inline std::chrono::steady_clock::time_point DeadlineAfter(double seconds) {
  using Clock = std::chrono::steady_clock;
  constexpr double kFarSeconds = 10.0 * 365 * 24 * 3600;
  const Clock::time_point now = Clock::now();
  if (!(seconds > 0)) return now;
  if (seconds > kFarSeconds) seconds = kFarSeconds;
  return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// A wait's bound for a report: "120 s", "0.5 s", "1e+10 s" (never an overflowed int).
inline std::string WaitText(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g s", seconds);
  return buf;
}

}  // namespace strads
