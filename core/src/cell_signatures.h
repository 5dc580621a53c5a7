// CellSignatures: the signatures of a loop's cells during AsyncFor planning (schedule.h: a
// cell's signature is the sorted set of written blocks its bodies access), numbered from 0, in
// two flat arrays: every cell's keys one after another, and where each cell's keys end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strads/internal/bytes.h"

namespace strads {

// A signature of at most two keys whose DDS ids are below kPackedDdsLimit and blocks below 2^16
// (every binned one: blocks are cut at fine bins, at most 2^16) packs into a word: each key as
// dds << 16 | block, the lower first, a missing one as kNoPackedKey. The packing keeps the keys'
// order, so the word stands for the sorted signature.
inline constexpr uint32_t kPackedDdsLimit = 0xffff;
inline constexpr uint32_t kNoPackedKey = UINT32_MAX;
// Packs `signature` (sorted and unique) into *word; false if it does not pack.
bool PackSignature(std::span<const uint64_t> signature, uint64_t* word);

// Why flat: every node holds the table of every cell of the loop while it plans, and all nodes
// plan at once. As a vector of vectors a cell of two keys took 24 bytes in the outer array and a
// 16-byte allocation (32 with malloc's header), about 60 bytes; here it takes 20 (its two keys
// and a 32-bit end). With --nodes 64 --blocks 128 (16 384 cells on each of 64 nodes) that is
// 63 MB of tables against 21 MB.
class CellSignatures {
 public:
  using Key = uint64_t;  // a BlockKey (schedule.h)

  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }

  // Cell `cell`'s keys, valid until the next Add or Release. `cell` < size().
  std::span<const Key> operator[](size_t cell) const {
    const size_t begin = cell == 0 ? 0 : ends_[cell - 1];
    return {keys_.data() + begin, ends_[cell] - begin};
  }
  // As [], but throws std::out_of_range past the last cell.
  std::span<const Key> at(size_t cell) const;

  // Appends a cell with these keys (sorted and unique: the caller's signature); its number is
  // the size() before. Throws std::length_error past 2^32 keys in all.
  void Add(std::span<const Key> signature);
  // Appends the cell whose packed signature is `word` (PackSignature's).
  void AddPacked(uint64_t word);
  void Reserve(size_t cells, size_t keys);

  size_t KeyCount() const { return keys_.size(); }
  size_t HeapBytes() const {
    return ends_.capacity() * sizeof(uint32_t) + keys_.capacity() * sizeof(Key);
  }
  // Frees both arrays now (`= {}` on a vector keeps its capacity).
  void Release();

  // The table in a message: the ends, then the keys. WireBytes() is what Put
  // appends, for sizing a message before writing it.
  size_t WireBytes() const;
  void Put(ByteWriter& w) const;
  // Reads what Put wrote; throws std::runtime_error naming `what` if the ends do not rise to
  // the key count (a message that is not a table).
  static CellSignatures Get(ByteReader& r, const char* what);

  // The table in a message with each cell whose signature packs (PackSignature) as its word, 8
  // bytes, and the others as Put writes them: every node sends the leader its cells at once, 20
  // bytes a two-key cell in Put's form, 21 MB in flight with --nodes 64 --blocks 128.
  // PackedWireBytes() is what PutPacked appends.
  size_t PackedWireBytes() const;
  void PutPacked(ByteWriter& w) const;
  // Reads what PutPacked wrote; throws std::runtime_error naming `what` if a word is not a
  // packed signature or the unpacked cells are not as many as the words that stand for them.
  static CellSignatures GetPacked(ByteReader& r, const char* what);

 private:
  std::vector<uint32_t> ends_;  // cell c's keys are keys_[ends_[c - 1], ends_[c])
  std::vector<Key> keys_;
};

}  // namespace strads
