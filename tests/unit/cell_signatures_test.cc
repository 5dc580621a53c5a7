// CellSignatures keeps the cells' signatures in two flat arrays, and sends them as those arrays.
#include "cell_signatures.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "schedule.h"

namespace strads {
namespace {

// Cell (a, b) of a 2-D rotation over two DDSs of `blocks` blocks each: sgdmf's W x H.
std::vector<BlockKey> RotationCell(int64_t a, int64_t b) {
  return {MakeBlockKey(1, a), MakeBlockKey(2, b)};
}

TEST_CASE("cell signatures read back as added, an empty one included") {
  CellSignatures s;
  CHECK(s.empty());
  s.Add(RotationCell(3, 5));
  s.Add({});  // a cell of bodies that write nothing binned
  s.Add(std::vector<BlockKey>{MakeBlockKey(0, 7), MakeBlockKey(0, 9), MakeBlockKey(4, 1)});
  REQUIRE(s.size() == 3);
  CHECK(std::ranges::equal(s[0], RotationCell(3, 5)));
  CHECK(s[1].empty());
  CHECK(std::ranges::equal(
      s.at(2), std::vector<BlockKey>{MakeBlockKey(0, 7), MakeBlockKey(0, 9), MakeBlockKey(4, 1)}));
  CHECK(s.KeyCount() == 5);
  CHECK_THROWS_AS(s.at(3), std::out_of_range);
  s.Release();
  CHECK(s.empty());
  CHECK(s.HeapBytes() == 0);
}

// What every node holds while it plans --nodes 64 --blocks 128: 16 384 cells of two keys. As a
// vector of vectors that was 24 bytes a cell in the outer array and a 16-byte allocation.
TEST_CASE("a table of two-key cells holds 20 bytes a cell, reserved or grown") {
  constexpr int64_t kBlocks = 128;
  CellSignatures reserved, grown;
  reserved.Reserve(kBlocks * kBlocks, 2 * kBlocks * kBlocks);
  for (int64_t a = 0; a < kBlocks; ++a)
    for (int64_t b = 0; b < kBlocks; ++b) {
      reserved.Add(RotationCell(a, b));
      grown.Add(RotationCell(a, b));
    }
  CHECK(reserved.HeapBytes() == kBlocks * kBlocks * (2 * sizeof(BlockKey) + sizeof(uint32_t)));
  // Grown by doubling: at most twice that.
  CHECK(grown.HeapBytes() <= 2 * reserved.HeapBytes());
  CHECK(std::ranges::equal(grown[kBlocks * 5 + 7], RotationCell(5, 7)));
}

TEST_CASE("cell signatures cross a message whole, and a table that is not one is refused") {
  CellSignatures s;
  for (int64_t a = 0; a < 5; ++a) s.Add(RotationCell(a, 4 - a));
  s.Add({});
  ByteWriter w;
  s.Put(w);
  w.Put<uint64_t>(42);  // what follows the table in a message stays readable
  CHECK(w.size() == s.WireBytes() + sizeof(uint64_t));
  const std::vector<std::byte> bytes = w.Take();
  ByteReader r(bytes);
  const CellSignatures back = CellSignatures::Get(r, "test");
  REQUIRE(back.size() == s.size());
  for (size_t c = 0; c < s.size(); ++c) CHECK(std::ranges::equal(back[c], s[c]));
  CHECK(r.Get<uint64_t>() == 42);

  // Ends that do not reach the key count, or that fall: an error naming the reader's place.
  for (const std::vector<uint32_t>& ends :
       {std::vector<uint32_t>{2, 3}, std::vector<uint32_t>{2, 1, 4}}) {
    ByteWriter bad;
    bad.PutVector(ends);
    bad.PutVector(std::vector<BlockKey>(4, 0));
    const std::vector<std::byte> bad_bytes = bad.Take();
    ByteReader br(bad_bytes);
    CHECK_THROWS_WITH_AS(CellSignatures::Get(br, "AsyncFor planning"),
                         doctest::Contains("AsyncFor planning: bad cell signatures"),
                         std::runtime_error);
  }
}

}  // namespace
}  // namespace strads
