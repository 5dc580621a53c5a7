#include "outcome_digest.h"

#include <algorithm>
#include <cstring>

namespace strads {
namespace internal {

namespace {

constexpr uint64_t kPrime = 0x100000001b3ULL;
constexpr uint64_t kBasis = 0xcbf29ce484222325ULL;

uint64_t Word(const std::byte* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

}  // namespace

uint64_t FoldOutcomeBytes(uint64_t h, const std::byte* bytes, size_t count) {
  for (size_t start = 0; start < count; start += kOutcomeBlockBytes) {
    const std::byte* p = bytes + start;
    const size_t n = std::min(kOutcomeBlockBytes, count - start);
    uint64_t l0 = kBasis, l1 = kBasis, l2 = kBasis, l3 = kBasis;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      l0 = (l0 ^ Word(p + i)) * kPrime;
      l1 = (l1 ^ Word(p + i + 8)) * kPrime;
      l2 = (l2 ^ Word(p + i + 16)) * kPrime;
      l3 = (l3 ^ Word(p + i + 24)) * kPrime;
    }
    // Fewer than 32 bytes left, from lane 0 on (i is a multiple of 32), the last word padded.
    if (const size_t rest = n - i; rest > 0) {
      uint64_t w[4] = {0, 0, 0, 0};
      std::memcpy(w, p + i, rest);
      const size_t words = (rest + 7) / 8;
      l0 = (l0 ^ w[0]) * kPrime;
      if (words > 1) l1 = (l1 ^ w[1]) * kPrime;
      if (words > 2) l2 = (l2 ^ w[2]) * kPrime;
      if (words > 3) l3 = (l3 ^ w[3]) * kPrime;
    }
    h = (h ^ l0) * kPrime;
    h = (h ^ l1) * kPrime;
    h = (h ^ l2) * kPrime;
    h = (h ^ l3) * kPrime;
  }
  return h;
}

}  // namespace internal
}  // namespace strads
