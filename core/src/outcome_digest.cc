#include "outcome_digest.h"

#include <algorithm>
#include <cstring>

namespace strads {
namespace internal {

namespace {

uint64_t Word(const std::byte* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

}  // namespace

void FoldOutcomeBytes(Fnv1a& h, const std::byte* bytes, size_t count) {
  for (size_t start = 0; start < count; start += kOutcomeBlockBytes) {
    const std::byte* p = bytes + start;
    const size_t n = std::min(kOutcomeBlockBytes, count - start);
    Fnv1a l0, l1, l2, l3;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      l0.UpdateWord(Word(p + i));
      l1.UpdateWord(Word(p + i + 8));
      l2.UpdateWord(Word(p + i + 16));
      l3.UpdateWord(Word(p + i + 24));
    }
    // Fewer than 32 bytes left, from lane 0 on (i is a multiple of 32), the last word padded.
    if (const size_t rest = n - i; rest > 0) {
      uint64_t w[4] = {0, 0, 0, 0};
      std::memcpy(w, p + i, rest);
      const size_t words = (rest + 7) / 8;
      l0.UpdateWord(w[0]);
      if (words > 1) l1.UpdateWord(w[1]);
      if (words > 2) l2.UpdateWord(w[2]);
      if (words > 3) l3.UpdateWord(w[3]);
    }
    h.UpdateWord(l0.digest());
    h.UpdateWord(l1.digest());
    h.UpdateWord(l2.digest());
    h.UpdateWord(l3.digest());
  }
}

}  // namespace internal
}  // namespace strads
