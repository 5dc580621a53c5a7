// The SGD-MF update of Algorithm 1 (STRADS-AP paper), shared by sgdmf, sgdmf_serial and
// sgdmf_omp so that the three programs compute bit-identical updates for the same order.
//
// The dot product uses a fixed association (8 partial sums, then a fixed tree) instead of a
// left-to-right sum: the compiler may vectorize it without -ffast-math and the result does not
// depend on the instruction set.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace examples {

inline constexpr int kRank = 32;  // k, the factor dimension
using Row = std::array<float, kRank>;

inline float Dot(const Row& a, const Row& b) {
  float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < kRank; i += 8)
    for (int l = 0; l < 8; ++l) part[l] += a[i + l] * b[i + l];
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

// One SGD step on rating `value` of (w, h):
//   err = value - w.h;  w += gamma (err h - lambda w);  h += gamma (err w - lambda h)
// Both deltas use the old w and h, as in Algorithm 1.
inline void SgdStep(float value, Row& w, Row& h, float gamma, float lambda) {
  const float err = value - Dot(w, h);
  for (int l = 0; l < kRank; ++l) {
    const float wl = w[l], hl = h[l];
    w[l] = wl + gamma * (err * hl - lambda * wl);
    h[l] = hl + gamma * (err * wl - lambda * hl);
  }
}

// splitmix64: a counter-based generator, so that element i can be initialised on whichever
// node owns it without replaying a shared random stream.
inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform float in [0, 1) from a 64-bit hash.
inline float UnitFloat(uint64_t h) { return static_cast<float>(h >> 40) * (1.0f / 16777216.0f); }

// The initial value of row `index` of a factor matrix: uniform in [0, 0.1) per entry. `salt`
// tells W (1) from H (2).
inline Row InitRow(uint64_t seed, uint64_t salt, int64_t index) {
  Row row;
  for (int l = 0; l < kRank; ++l)
    row[l] = 0.1f * UnitFloat(SplitMix64(SplitMix64(seed ^ (salt << 56)) +
                                         static_cast<uint64_t>(index) * kRank + l));
  return row;
}

}  // namespace examples
