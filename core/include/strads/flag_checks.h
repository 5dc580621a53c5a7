// CLI11 checks for the integer flags of strads programs and of the `strads` tool (strads::Run
// parses a program's flags with CLI11). CLI11 alone reads "-1" into an unsigned flag as
// 2^64 - 1 and a number past the type's range as the type's largest value, without a word, and
// its NonNegativeNumber check names its bound as a 309-digit number. These refuse such text at
// the command line: exit code 2, with a message that names the flag, the text and the range.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <string>
#include <type_traits>

namespace strads {

// A decimal integer of type T in [low, high].
template <class T>
CLI::Validator IntegerIn(T low, T high) {
  static_assert(std::is_integral_v<T>, "IntegerIn checks integer flags");
  const std::string range = std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        T value{};
        const char* const end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error == std::errc() && stop == end && value >= low && value <= high) return {};
        return "'" + text + "' is not an integer from " + range;
      },
      "INT from " + range);
}

// A decimal integer of type T from 0 to T's largest value: a seed, a count.
template <class T>
CLI::Validator NonNegativeInteger() {
  return IntegerIn<T>(0, std::numeric_limits<T>::max()).description("NONNEGATIVE");
}

}  // namespace strads
