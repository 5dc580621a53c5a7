// The loop body of the AsyncFor tests: index i is an edge between two seeded vertices, and a
// non-commutative update of the two vertices' values, so that the result depends on the order
// of bodies that share a vertex.
#pragma once

#include <cstdint>

namespace strads::testing {

struct Edge {
  int32_t a, b;
};

inline Edge EdgeAt(int64_t i, int64_t n) {
  uint64_t x = static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ULL;
  return {static_cast<int32_t>(x % n), static_cast<int32_t>((x >> 32) % n)};
}

inline void Update(double& xa, double& xb, int64_t i) {
  const double t = xa;
  xa = 0.5 * xa + 0.25 * xb + static_cast<double>(i % 7);
  xb = 0.75 * xb - 0.125 * t;
}

}  // namespace strads::testing
