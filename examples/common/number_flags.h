// Checks for real-valued flags. CLI11 reads "nan" and "inf" as numbers, and its Range,
// PositiveNumber and NonNegativeNumber checks let NaN through (every comparison with NaN is
// false), so a flag like `--gamma nan` would train to a NaN model without a word. These refuse
// it at the command line (exit code 2, CLI11's message naming the flag).
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <string>

namespace examples {

// `v` in its shortest form ("1", "0.5"), for messages.
inline std::string ShortNumber(double v) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, v);
  return ec == std::errc() ? std::string(text, end) : std::to_string(v);
}

// A finite real number in [low, high] (or (0, high] when `positive`).
inline CLI::Validator FiniteIn(double low, double high, bool positive = false) {
  const std::string name = positive ? "FINITE > 0" : "FINITE";
  return CLI::Validator(
      [low, high, positive](std::string& text) -> std::string {
        double v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
          return "'" + text + "' is not a finite number";
        if (positive && v <= 0) return "'" + text + "' is not above 0";
        if (v < low || v > high)
          return "'" + text + "' is outside [" + ShortNumber(low) + ", " + ShortNumber(high) + "]";
        return {};
      },
      name);
}

// A finite number above 0, e.g. a learning rate or a prior.
inline CLI::Validator PositiveFinite() { return FiniteIn(0, HUGE_VAL, /*positive=*/true); }

// A finite number at least 0, e.g. a regularization weight or a noise level.
inline CLI::Validator NonNegativeFinite() { return FiniteIn(0, HUGE_VAL); }

}  // namespace examples
