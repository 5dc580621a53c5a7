// LIBSVM samples for the logistic regression example (mlr --data FILE): the sample type and the
// parser of one line, shared by mlr and its fuzz harness (fuzz/libsvm_fuzzer.cc).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "common/quote.h"

namespace examples {

inline constexpr int kMaxNnz = 32;  // capacity of a sample's sparse feature list

// One training sample: a label and up to kMaxNnz (feature id, value) pairs. Trivially
// copyable, so that it can live in a dvector.
struct Sample {
  int32_t label;
  int32_t nnz;
  int32_t index[kMaxNnz];  // 0-based feature ids
  float value[kMaxNnz];
};
static_assert(std::is_trivially_copyable_v<Sample>);

// Parses "label idx:val idx:val ..." (LIBSVM). Throws std::invalid_argument on any defect.
inline Sample ParseLibsvm(std::string_view line, int classes, int64_t features) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(what); };
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  std::string_view tokens[kMaxNnz + 2];
  int count = 0;
  for (size_t pos = 0; pos < line.size();) {
    while (pos < line.size() && is_space(line[pos])) ++pos;
    const size_t start = pos;
    while (pos < line.size() && !is_space(line[pos])) ++pos;
    if (pos == start) break;
    if (count == kMaxNnz + 1)
      fail("more than " + std::to_string(kMaxNnz) + " features on one line (the capacity of a " +
           "sample)");
    tokens[count++] = line.substr(start, pos - start);
  }
  if (count == 0) fail("empty line");
  Sample s{};
  {
    const std::string_view t = tokens[0];
    int64_t label = -1;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), label);
    if (ec != std::errc() || end != t.data() + t.size())
      fail("label " + Quote(t) + " is not an integer");
    if (label < 0 || label >= classes)
      fail("label " + std::to_string(label) + " is outside [0, " + std::to_string(classes) +
           ") (--classes)");
    s.label = static_cast<int32_t>(label);
  }
  s.nnz = count - 1;
  for (int k = 1; k < count; ++k) {
    const std::string_view t = tokens[k];
    const size_t colon = t.find(':');
    if (colon == std::string_view::npos)
      fail("feature " + Quote(t) + " is not of the form index:value");
    int64_t id = 0;
    const auto [iend, iec] = std::from_chars(t.data(), t.data() + colon, id);
    if (iec != std::errc() || iend != t.data() + colon || id < 1)
      fail("feature id " + Quote(t.substr(0, colon)) + " is not a positive integer");
    if (id > features)
      fail("feature id " + std::to_string(id) + " is beyond the model's " +
           std::to_string(features) + " features (--features)");
    float v = 0;
    const auto [vend, vec] = std::from_chars(t.data() + colon + 1, t.data() + t.size(), v);
    if (vec != std::errc() || vend != t.data() + t.size() || !std::isfinite(v))
      fail("feature value " + Quote(t.substr(colon + 1)) + " is not a finite number");
    s.index[k - 1] = static_cast<int32_t>(id - 1);
    s.value[k - 1] = v;
  }
  return s;
}

}  // namespace examples
