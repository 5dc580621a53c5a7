// IndexSlots: AsyncForEach's map from a loop index to the slot of its cached accesses
// (index_set_loop.h). Most index sets index a DDS, so their indices are small and non-negative:
// those are kept in a dense table, one 32-bit slot per index, and found in one read; an index
// outside the dense range (negative, or far past the cached count) goes to a hash map. A hash
// look-up reads a bucket and then a node, two dependent cache misses once the map outgrows the
// caches (Lasso's 200 000 coordinates: 10 MB of nodes), and a call looks up every index of its
// set on the driver: docs/lasso.md, session 13.
//
// Contract: an index is in exactly one of the two parts. The dense part covers [0, dense size),
// which grows (doubling) to take an inserted index below DenseLimit(); the indices of the hash
// part that the grown range covers move into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace strads {

class IndexSlots {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The slot of `index`, or kNone. Safe to call from several threads while nothing inserts.
  uint32_t Find(int64_t index) const {
    if (static_cast<uint64_t>(index) < dense_.size()) return dense_[static_cast<size_t>(index)];
    if (sparse_.empty()) return kNone;
    const auto it = sparse_.find(index);
    return it == sparse_.end() ? kNone : it->second;
  }
  // Asks for the cache line Find(index) reads in the dense table, for a look-up soon after.
  void Prefetch(int64_t index) const {
    if (static_cast<uint64_t>(index) < dense_.size())
      __builtin_prefetch(dense_.data() + static_cast<size_t>(index));
  }
  // Maps `index` (not yet in the table) to `slot` (not kNone).
  void Insert(int64_t index, uint32_t slot);
  void Clear();

  size_t size() const { return size_; }
  size_t dense_size() const { return dense_.size(); }
  size_t HeldBytes() const;

 private:
  // The dense range may reach this bound: 16 bytes of table per cached index at most, and a
  // floor so that the first sets of a loop over a DDS already land in it.
  size_t DenseLimit() const { return 4 * (size_ + 1) + (size_t{1} << 16); }

  std::vector<uint32_t> dense_;  // kNone where no index is cached
  std::unordered_map<int64_t, uint32_t> sparse_;
  size_t size_ = 0;
};

}  // namespace strads
