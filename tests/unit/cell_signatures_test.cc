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

// Sends `s` in a message, in Put's form or PutPacked's, and checks it reads back whole and what
// follows it in the message stays readable. Returns the message.
std::vector<std::byte> CheckThroughMessage(const CellSignatures& s, bool packed) {
  ByteWriter w;
  packed ? s.PutPacked(w) : s.Put(w);
  w.Put<uint64_t>(42);
  CHECK(w.size() == (packed ? s.PackedWireBytes() : s.WireBytes()) + sizeof(uint64_t));
  std::vector<std::byte> bytes = w.Take();
  ByteReader r(bytes);
  const CellSignatures back =
      packed ? CellSignatures::GetPacked(r, "test") : CellSignatures::Get(r, "test");
  REQUIRE(back.size() == s.size());
  for (size_t c = 0; c < s.size(); ++c) CHECK(std::ranges::equal(back[c], s[c]));
  CHECK(r.Get<uint64_t>() == 42);
  return bytes;
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
  CheckThroughMessage(s, /*packed=*/false);

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

// Every node sends the leader its cells at once: packed, a cell of two keys is its word (8 bytes)
// where Put wrote a 4-byte end and two 8-byte keys.
TEST_CASE("packed cell signatures cross a message whole, unpacked ones among them") {
  CellSignatures s;
  for (int64_t a = 0; a < 4; ++a) s.Add(RotationCell(a, 0xffff - a));
  s.Add({});
  s.Add(std::vector<BlockKey>{MakeBlockKey(3, 9)});
  const std::vector<BlockKey> three{MakeBlockKey(0, 7), MakeBlockKey(0, 9), MakeBlockKey(4, 1)};
  s.Add(three);                                                                        // three keys
  s.Add(std::vector<BlockKey>{MakeBlockKey(1, 2), MakeBlockKey(kPackedDdsLimit, 0)});  // a DDS
  s.Add(std::vector<BlockKey>{MakeBlockKey(2, 0x10000)});                              // a block
  s.Add(RotationCell(0, 0));
  const std::vector<std::byte> bytes = CheckThroughMessage(s, /*packed=*/true);

  // Every message cut short is refused, never read past its end.
  for (size_t cut = 0; cut < bytes.size() - sizeof(uint64_t); ++cut) {
    ByteReader short_reader(bytes.data(), cut);
    CHECK_THROWS_AS(CellSignatures::GetPacked(short_reader, "test"), std::runtime_error);
  }
}

TEST_CASE("a packed table of two-key cells takes 8 bytes a cell") {
  constexpr int64_t kBlocks = 128;
  CellSignatures s;
  for (int64_t a = 0; a < kBlocks; ++a)
    for (int64_t b = 0; b < kBlocks; ++b) s.Add(RotationCell(a, b));
  CHECK(s.PackedWireBytes() == 3 * sizeof(uint64_t) + kBlocks * kBlocks * sizeof(uint64_t));
  CHECK(s.WireBytes() ==
        2 * sizeof(uint64_t) + kBlocks * kBlocks * (sizeof(uint32_t) + 2 * sizeof(BlockKey)));
}

TEST_CASE("a word that is no packed signature, or unpacked cells that do not match, are refused") {
  const auto message = [](const CellSignatures& unpacked, const std::vector<uint64_t>& words) {
    ByteWriter w;
    unpacked.Put(w);
    w.PutVector(words);
    return w.Take();
  };
  CellSignatures none, one;
  one.Add(std::vector<BlockKey>{MakeBlockKey(0, 1), MakeBlockKey(0, 2), MakeBlockKey(0, 3)});
  const uint64_t unpacked_word = uint64_t{kNoPackedKey} << 32;
  const uint64_t cell = uint64_t{1 << 16 | 3} << 32 | (2 << 16 | 5);
  const struct {
    const CellSignatures* unpacked;
    std::vector<uint64_t> words;
  } bad[] = {
      {&none, {cell, uint64_t{2 << 16 | 5} << 32 | (1 << 16 | 3)}},  // keys falling
      {&none, {uint64_t{1 << 16 | 3} << 32 | (1 << 16 | 3)}},        // a key twice
      {&none, {uint64_t{0xffff0000} << 32 | kNoPackedKey}},          // DDS 0xffff
      {&none, {uint64_t{kNoPackedKey} << 32 | 5}},                   // second key alone
      {&none, {unpacked_word}},                                      // no unpacked cell
      {&one, {cell}},                                                // one left over
  };
  for (const auto& b : bad) {
    const std::vector<std::byte> bytes = message(*b.unpacked, b.words);
    ByteReader r(bytes);
    CHECK_THROWS_WITH_AS(CellSignatures::GetPacked(r, "AsyncFor planning"),
                         doctest::Contains("AsyncFor planning: bad packed cell signature"),
                         std::runtime_error);
  }
  // And the same words with their unpacked cell read back.
  const std::vector<std::byte> good = message(one, {cell, unpacked_word});
  ByteReader r(good);
  const CellSignatures back = CellSignatures::GetPacked(r, "test");
  REQUIRE(back.size() == 2);
  CHECK(std::ranges::equal(back[0], RotationCell(3, 5)));
  CHECK(std::ranges::equal(back[1], one[0]));
}

}  // namespace
}  // namespace strads
