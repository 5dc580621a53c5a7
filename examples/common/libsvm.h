// LIBSVM samples: the classification sample of the logistic regression example (mlr --data FILE)
// and the regression sample of lasso (lasso --data FILE), with the parsers of one line, shared
// by those programs and the fuzz harness (fuzz/libsvm_fuzzer.cc).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

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

// Splits a LIBSVM line "label idx:val idx:val ..." into `tokens` (at most `max_features` + 1;
// `capacity` names the limit in the error), then parses it: label(token) for the label, then
// feature(k, id, value) for the k-th pair, id 0-based. Throws std::invalid_argument on any
// defect (the label's from `label`), a repeated feature id included.
template <class Label, class Feature>
inline void ParseLibsvmFields(std::string_view line, int64_t features, size_t max_features,
                              const char* capacity, std::vector<std::string_view>& tokens,
                              Label label, Feature feature) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(what); };
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  tokens.clear();
  for (size_t pos = 0; pos < line.size();) {
    while (pos < line.size() && is_space(line[pos])) ++pos;
    const size_t start = pos;
    while (pos < line.size() && !is_space(line[pos])) ++pos;
    if (pos == start) break;
    if (tokens.size() == max_features + 1)
      fail("more than " + std::to_string(max_features) + " features on one line (" + capacity +
           ")");
    tokens.push_back(line.substr(start, pos - start));
  }
  if (tokens.empty()) fail("empty line");
  label(tokens[0]);
  thread_local std::vector<int64_t> ids;  // sorted only when the line's ids do not ascend
  ids.clear();
  bool ascending = true;
  for (size_t k = 1; k < tokens.size(); ++k) {
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
    ascending = ascending && (ids.empty() || id > ids.back());
    ids.push_back(id);
    float v = 0;
    const auto [vend, vec] = std::from_chars(t.data() + colon + 1, t.data() + t.size(), v);
    if (vec != std::errc() || vend != t.data() + t.size() || !std::isfinite(v))
      fail("feature value " + Quote(t.substr(colon + 1)) + " is not a finite number");
    feature(k - 1, static_cast<int32_t>(id - 1), v);
  }
  // A repeated id would be two entries of one matrix cell, which a program and its twin may
  // combine differently (summed in a dot product, listed twice in a column): refused, as libsvm's
  // own tools do. Ids out of order are accepted (the sum does not depend on it).
  if (!ascending) {
    std::sort(ids.begin(), ids.end());
    const auto repeated = std::adjacent_find(ids.begin(), ids.end());
    if (repeated != ids.end())
      fail("feature id " + std::to_string(*repeated) + " appears more than once on the line");
  }
}

// Parses "label idx:val idx:val ..." (LIBSVM). Throws std::invalid_argument on any defect.
inline Sample ParseLibsvm(std::string_view line, int classes, int64_t features) {
  thread_local std::vector<std::string_view> tokens;
  Sample s{};
  const auto label = [&](std::string_view t) {
    int64_t value = -1;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec != std::errc() || end != t.data() + t.size())
      throw std::invalid_argument("label " + Quote(t) + " is not an integer");
    if (value < 0 || value >= classes)
      throw std::invalid_argument("label " + std::to_string(value) + " is outside [0, " +
                                  std::to_string(classes) + ") (--classes)");
    s.label = static_cast<int32_t>(value);
  };
  ParseLibsvmFields(line, features, kMaxNnz, "the capacity of a sample", tokens, label,
                    [&s](size_t k, int32_t id, float v) { s.index[k] = id, s.value[k] = v; });
  s.nnz = static_cast<int32_t>(tokens.size() - 1);
  return s;
}

// One regression sample (lasso --data FILE): a real target and its (feature id, value) pairs.
struct RegressionSample {
  double target = 0;
  std::vector<std::pair<int32_t, float>> features;
};

// Parses "target idx:val idx:val ..." (LIBSVM regression). Throws std::invalid_argument on any
// defect.
inline RegressionSample ParseLibsvmRegression(std::string_view line, int64_t features) {
  thread_local std::vector<std::string_view> tokens;
  RegressionSample s;
  const auto target = [&s](std::string_view t) {
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), s.target);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(s.target))
      throw std::invalid_argument("target " + Quote(t) + " is not a finite number");
  };
  ParseLibsvmFields(line, features, static_cast<size_t>(features), "the model's features", tokens,
                    target, [&s](size_t, int32_t id, float v) { s.features.emplace_back(id, v); });
  return s;
}

}  // namespace examples
