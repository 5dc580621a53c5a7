// CacheLineAllocator: every block starts a cache line and no two blocks share one, whatever
// their sizes (malloc alone packs small blocks 16 bytes apart).
#include "cache_line.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace strads {
namespace {

uintptr_t FirstLine(const void* p) { return reinterpret_cast<uintptr_t>(p) / kCacheLineBytes; }
uintptr_t LastLine(const void* p, size_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) + bytes - 1) / kCacheLineBytes;
}

TEST_CASE("CacheLineAllocator: small blocks each start a line and share none") {
  CHECK(CacheLineRoundUp(1) == kCacheLineBytes);
  CHECK(CacheLineRoundUp(kCacheLineBytes) == kCacheLineBytes);
  CHECK(CacheLineRoundUp(kCacheLineBytes + 1) == 2 * kCacheLineBytes);
  // Blocks of 3 to 40 bytes, made one after another: malloc would put several on one line.
  std::vector<std::vector<uint8_t, CacheLineAllocator<uint8_t>>> blocks;
  for (size_t n = 3; n <= 40; ++n) blocks.emplace_back(n, uint8_t{1});
  for (const auto& b : blocks) CHECK(reinterpret_cast<uintptr_t>(b.data()) % kCacheLineBytes == 0);
  for (size_t i = 0; i < blocks.size(); ++i)
    for (size_t j = i + 1; j < blocks.size(); ++j) {
      const auto& a = blocks[i];
      const auto& b = blocks[j];
      const bool apart = LastLine(a.data(), a.size()) < FirstLine(b.data()) ||
                         LastLine(b.data(), b.size()) < FirstLine(a.data());
      CHECK(apart);
    }
  // A vector that grows keeps its lines too (the allocator is rebound and compared equal).
  std::vector<int64_t, CacheLineAllocator<int64_t>> grown;
  for (int64_t i = 0; i < 100; ++i) grown.push_back(i);
  CHECK(reinterpret_cast<uintptr_t>(grown.data()) % kCacheLineBytes == 0);
  CHECK(grown[99] == 99);
}

}  // namespace
}  // namespace strads
