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

 private:
  std::vector<uint32_t> ends_;  // cell c's keys are keys_[ends_[c - 1], ends_[c])
  std::vector<Key> keys_;
};

}  // namespace strads
