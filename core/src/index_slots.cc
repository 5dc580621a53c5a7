#include "index_slots.h"

#include <algorithm>

namespace strads {

void IndexSlots::Insert(int64_t index, uint32_t slot) {
  ++size_;
  if (index >= 0 && static_cast<uint64_t>(index) >= dense_.size() &&
      static_cast<uint64_t>(index) < DenseLimit()) {
    const size_t grown =
        std::min(DenseLimit(), std::max(static_cast<size_t>(index) + 1, 2 * dense_.size()));
    dense_.resize(grown, kNone);
    for (auto it = sparse_.begin(); it != sparse_.end();) {
      if (it->first >= 0 && static_cast<uint64_t>(it->first) < grown) {
        dense_[static_cast<size_t>(it->first)] = it->second;
        it = sparse_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (static_cast<uint64_t>(index) < dense_.size())
    dense_[static_cast<size_t>(index)] = slot;
  else
    sparse_.emplace(index, slot);
}

void IndexSlots::Clear() {
  dense_.clear();
  sparse_.clear();
  size_ = 0;
}

size_t IndexSlots::HeldBytes() const {
  // An unordered_map node holds the pair and a next pointer; the buckets a pointer each.
  return dense_.capacity() * sizeof(uint32_t) +
         sparse_.size() * (sizeof(std::pair<const int64_t, uint32_t>) + 8) +
         sparse_.bucket_count() * sizeof(void*);
}

}  // namespace strads
