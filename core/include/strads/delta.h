// Delta<T>: how the changes several nodes made to one element during a lock-engine AsyncFor
// merge at its owner. Arithmetic types and std::arrays of them average the changes:
//   x = start + (sum over contributions k of (after_k - start)) / count,
// summed in the given (delivery) order; a single contribution is taken exactly. Any other type
// takes the last contribution. Specialise Delta for your type to merge it otherwise.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <type_traits>

namespace strads {

template <class T, class = void>
struct Delta {
  static constexpr bool kAdditive = false;
  static void Merge(T& x, const T& /*start*/, std::span<const T> afters) {
    if (!afters.empty()) x = afters.back();
  }
};

template <class T>
struct Delta<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static constexpr bool kAdditive = true;
  static void Merge(T& x, const T& start, std::span<const T> afters) {
    if (afters.size() <= 1) {  // one contribution: exactly its value
      if (!afters.empty()) x = afters[0];
      return;
    }
    T sum{};
    for (const T& a : afters) sum += a - start;
    x = start + sum / static_cast<T>(afters.size());
  }
};

template <class U, size_t N>
struct Delta<std::array<U, N>, std::enable_if_t<std::is_arithmetic_v<U>>> {
  static constexpr bool kAdditive = true;
  static void Merge(std::array<U, N>& x, const std::array<U, N>& start,
                    std::span<const std::array<U, N>> afters) {
    if (afters.size() <= 1) {  // one contribution: exactly its value
      if (!afters.empty()) x = afters[0];
      return;
    }
    for (size_t i = 0; i < N; ++i) {
      U sum{};
      for (const auto& a : afters) sum += a[i] - start[i];
      x[i] = start[i] + sum / static_cast<U>(afters.size());
    }
  }
};

}  // namespace strads
