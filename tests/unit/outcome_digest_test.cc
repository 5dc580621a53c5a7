// The outcome digest's hash against trace/FORMAT.md's definition, written out plainly here.
#include "outcome_digest.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace {

constexpr uint64_t kBasis = 0xcbf29ce484222325ULL, kPrime = 0x100000001b3ULL;

// FORMAT.md, "Outcome": blocks of 65 536 bytes; per block, word k (zero-padded at the end) to
// lane k mod 4; the lanes fold into h in order.
uint64_t Reference(uint64_t h, const std::vector<std::byte>& bytes) {
  for (size_t start = 0; start < bytes.size(); start += 65536) {
    const size_t n = std::min<size_t>(65536, bytes.size() - start);
    uint64_t lanes[4] = {kBasis, kBasis, kBasis, kBasis};
    for (size_t k = 0; k * 8 < n; ++k) {
      uint64_t w = 0;
      std::memcpy(&w, bytes.data() + start + k * 8, std::min<size_t>(8, n - k * 8));
      lanes[k % 4] = (lanes[k % 4] ^ w) * kPrime;
    }
    for (uint64_t l : lanes) h = (h ^ l) * kPrime;
  }
  return h;
}

std::vector<std::byte> Bytes(size_t n) {
  std::vector<std::byte> b(n);
  uint64_t x = 88172645463325252ULL;
  for (auto& v : b) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = static_cast<std::byte>(x);
  }
  return b;
}

uint64_t Fold(uint64_t h, const std::byte* bytes, size_t count) {
  strads::Fnv1a hash(h);
  strads::internal::FoldOutcomeBytes(hash, bytes, count);
  return hash.digest();
}

}  // namespace

TEST_CASE("the outcome digest's hash is FORMAT.md's: four lanes of words a 64 KiB block") {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{24}, size_t{31},
                   size_t{32}, size_t{33}, size_t{57}, size_t{65535}, size_t{65536}, size_t{65537},
                   size_t{65536 + 40}, size_t{200003}}) {
    CAPTURE(n);
    const std::vector<std::byte> b = Bytes(n);
    CHECK(Fold(kBasis, b.data(), n) == Reference(kBasis, b));
    CHECK(Fold(12345, b.data(), n) == Reference(12345, b));
  }
  // Nothing to hash leaves the state as it was.
  CHECK(Fold(777, nullptr, 0) == 777);
}

TEST_CASE("the outcome digest's hash tells words apart by their place, lanes and blocks alike") {
  std::vector<std::byte> b = Bytes(3 * 65536 + 100);
  const uint64_t before = Fold(kBasis, b.data(), b.size());
  // Two words of different lanes swapped, two words of one lane in different blocks swapped,
  // and one bit flipped in the zero-padded last word: each changes the hash.
  for (const auto& [i, j] : std::vector<std::pair<size_t, size_t>>{{0, 8}, {16, 65536 + 16}}) {
    std::vector<std::byte> c = b;
    std::swap_ranges(c.begin() + static_cast<std::ptrdiff_t>(i),
                     c.begin() + static_cast<std::ptrdiff_t>(i + 8),
                     c.begin() + static_cast<std::ptrdiff_t>(j));
    REQUIRE(c != b);
    CHECK(Fold(kBasis, c.data(), c.size()) != before);
  }
  b.back() ^= std::byte{1};
  CHECK(Fold(kBasis, b.data(), b.size()) != before);
}
