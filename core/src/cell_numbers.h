// CellNumbers: the cell of each body of a node's share during AsyncFor planning, each number in
// the fewest bytes its chunk's largest number needs (1, 2 or 4).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "strads/internal/even_split.h"

namespace strads {

// One array per reconnaissance chunk (EvenSplit of the share, one chunk per thread), so that the
// thread that numbers a chunk's cells widens that chunk's array alone when a number outgrows it:
// no locking, and the other chunks keep their width. sgdmf's 16 x 16 cells take one byte a body
// where an int32_t array took four (76 MB at 19 M bodies, at planning's peak).
class CellNumbers {
 public:
  CellNumbers() = default;
  // Every body's cell 0, one byte each.
  explicit CellNumbers(const EvenSplit& chunks);

  int64_t size() const { return chunks_.size(); }
  const EvenSplit& chunks() const { return chunks_; }

  // Random access, for callers that cannot go in order (a division a call).
  int32_t Get(int64_t k) const {
    const auto c = static_cast<size_t>(chunks_.part_of(k));
    return parts_[c].Cell(static_cast<size_t>(k - chunks_.begin(static_cast<int64_t>(c))));
  }
  // Sets body j of chunk c. Only one thread sets a chunk's bodies at a time, and only before
  // the chunk is renumbered (Renumber).
  void Set(int64_t c, int64_t j, int32_t cell) {
    parts_[static_cast<size_t>(c)].Set(static_cast<size_t>(j), cell);
  }
  // Calls visit(k, cell) for every body k, in order.
  template <class Visit>
  void ForEach(Visit&& visit) const {
    int64_t k = 0;
    for (size_t c = 0; c < parts_.size(); ++c)
      ForEachInChunk(static_cast<int64_t>(c), [&](int64_t, int32_t cell) { visit(k++, cell); });
  }
  // Calls visit(j, cell) for every body j of chunk c, in order; chunks may be visited on threads
  // of their own.
  template <class Visit>
  void ForEachInChunk(int64_t c, Visit&& visit) const {
    const Part& part = parts_[static_cast<size_t>(c)];
    if (part.renumbered.empty()) {
      for (size_t j = 0; j < part.size(); ++j) visit(static_cast<int64_t>(j), part.Raw(j));
    } else {
      const int32_t* const to = part.renumbered.data();
      for (size_t j = 0; j < part.size(); ++j) visit(static_cast<int64_t>(j), to[part.Raw(j)]);
    }
  }
  // Replaces every cell x of chunk c by to[x], without a pass over the chunk's bodies: the
  // numbers stay as they were set and `to` is applied as they are read (composed with an
  // earlier Renumber's). Every cell of the chunk must be below to.size(). Planning renumbers a
  // thread's cells into the node's and the node's into the loop's; as passes over every body
  // these were a third of the time LocalCells took to number them (perf, sgdmf at 19 M).
  void Renumber(int64_t c, const std::vector<int32_t>& to);
  // Bytes held (for the tests and memory reports).
  size_t HeapBytes() const;
  // Frees the arrays now; size() stays.
  void Release();

 private:
  struct Part {
    int width = 1;
    std::vector<uint8_t> bytes;
    std::vector<int32_t> renumbered;  // what each number set stands for now (empty: itself)

    size_t size() const { return bytes.size() / static_cast<size_t>(width); }
    int32_t Cell(size_t j) const {
      return renumbered.empty() ? Raw(j) : renumbered[static_cast<size_t>(Raw(j))];
    }

    // The number set for body j.
    int32_t Raw(size_t j) const {
      switch (width) {
        case 1:
          return bytes[j];
        case 2: {
          uint16_t v;
          std::memcpy(&v, &bytes[2 * j], 2);
          return v;
        }
        default: {
          int32_t v;
          std::memcpy(&v, &bytes[4 * j], 4);
          return v;
        }
      }
    }
    void Set(size_t j, int32_t cell) {
      if (width < 4 && cell >= (width == 1 ? 0x100 : 0x10000)) Widen(cell);
      switch (width) {
        case 1:
          bytes[j] = static_cast<uint8_t>(cell);
          break;
        case 2: {
          const auto v = static_cast<uint16_t>(cell);
          std::memcpy(&bytes[2 * j], &v, 2);
          break;
        }
        default:
          std::memcpy(&bytes[4 * j], &cell, 4);
      }
    }
    // Rewrites the array at the width `cell` needs.
    void Widen(int32_t cell);
  };
  EvenSplit chunks_;
  std::vector<Part> parts_;
};

}  // namespace strads
