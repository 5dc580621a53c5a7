// ExactSum<T>: the exact sum rounded once, whatever the order and grouping of the terms.
#include "strads/exact_sum.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using strads::ExactSum;

template <class T>
T SumOf(const std::vector<T>& terms) {
  ExactSum<T> s;
  for (T x : terms) s.Add(x);
  return s.Value();
}

template <class T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace

TEST_CASE("ExactSum: cancellations and tiny terms that naive summation loses") {
  CHECK(SumOf<double>({1e16, 1.0, -1e16}) == 1.0);
  CHECK(SumOf<double>({1e308, 1e308, -1e308}) == 1e308);  // the naive sum overflows
  CHECK(SumOf<double>(std::vector<double>(10, 0.1)) == 1.0);
  double naive = 0;
  for (int k = 0; k < 10; ++k) naive += 0.1;
  CHECK(naive != 1.0);  // what the exact sum corrects
  const double tiny = std::numeric_limits<double>::denorm_min();
  CHECK(SumOf<double>({tiny, tiny, 3 * tiny}) == 5 * tiny);
  CHECK(SumOf<double>({1.0, tiny, -1.0}) == tiny);
  CHECK(SumOf<double>({}) == 0.0);
  CHECK(SumOf<double>({-2.5, 0.5}) == -2.0);
  CHECK(SumOf<float>({1e8f, 1.0f, -1e8f}) == 1.0f);
  CHECK(SumOf<float>({std::numeric_limits<float>::denorm_min(), -1.0f, 1.0f}) ==
        std::numeric_limits<float>::denorm_min());
}

TEST_CASE("ExactSum: rounds to nearest, ties to even, as a 128-bit integer sum converts") {
  // Terms m * 2^-40 with |m| < 2^53: their exact sum is an integer times 2^-40, whose
  // conversion by the compiler (__int128 to double) is correctly rounded.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> terms;
    __int128 exact = 0;
    const int count = 1 + trial % 50;
    for (int k = 0; k < count; ++k) {
      const int64_t m = static_cast<int64_t>(rng() >> 11) * ((rng() & 1) ? 1 : -1);
      terms.push_back(std::ldexp(static_cast<double>(m), -40));
      exact += m;
    }
    CAPTURE(trial);
    CHECK(SumOf(terms) == std::ldexp(static_cast<double>(exact), -40));
  }
  // Ties: 2^53 + 1 is halfway between 2^53 and 2^53 + 2; to even gives 2^53.
  CHECK(SumOf<double>({std::ldexp(1.0, 53), 1.0}) == std::ldexp(1.0, 53));
  CHECK(SumOf<double>({std::ldexp(1.0, 53), 1.0, std::ldexp(1.0, -60)}) ==
        std::ldexp(1.0, 53) + 2);  // just above the tie: up
  CHECK(SumOf<double>({std::ldexp(1.0, 53), 3.0}) == std::ldexp(1.0, 53) + 4);  // tie: to even
}

TEST_CASE("ExactSum: the same bits for every order and grouping of the terms") {
  std::mt19937_64 rng(11);
  std::vector<double> terms;
  for (int k = 0; k < 3000; ++k) {
    const double magnitude = std::ldexp(1.0, static_cast<int>(rng() % 120) - 60);
    terms.push_back(magnitude * (static_cast<double>(rng() % 2000001) / 1e6 - 1.0));
  }
  const double want = SumOf(terms);
  bool naive_differed = false;
  for (int trial = 0; trial < 20; ++trial) {
    std::shuffle(terms.begin(), terms.end(), rng);
    // Grouped as threads and nodes would: four partial sums, merged.
    std::vector<ExactSum<double>> parts(4);
    for (size_t k = 0; k < terms.size(); ++k) parts[rng() % 4].Add(terms[k]);
    ExactSum<double> merged;
    for (const auto& p : parts) merged.Merge(p);
    CHECK(SameBits(merged.Value(), want));
    CHECK(SameBits(SumOf(terms), want));
    // Through the wire form.
    std::vector<std::byte> bytes(ExactSum<double>::kBytes);
    merged.Save(bytes.data());
    CHECK(SameBits(ExactSum<double>::Load(bytes.data()).Value(), want));
    double naive = 0;
    for (double x : terms) naive += x;
    naive_differed = naive_differed || !SameBits(naive, want);
  }
  CHECK(naive_differed);  // plain `+=` depends on the order: the test can fail
}

TEST_CASE("ExactSum: infinities and NaN are what the non-finite terms give alone") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(SumOf<double>({1.0, inf, 2.0}) == inf);
  CHECK(SumOf<double>({-inf, 1.0}) == -inf);
  CHECK(std::isnan(SumOf<double>({inf, 1.0, -inf})));
  CHECK(std::isnan(SumOf<double>({1.0, std::numeric_limits<double>::quiet_NaN()})));
  CHECK(SumOf<double>({std::numeric_limits<double>::max(), std::numeric_limits<double>::max()}) ==
        inf);  // a finite sum too large for double rounds to infinity
}
