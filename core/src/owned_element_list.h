// OwnedElementList: a sorted list of distinct OwnedElements kept delta-coded, for the lists an
// AsyncFor keeps from planning through every call: the read-only elements a node serves to each
// other node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "element_ref.h"

namespace strads {

// Why coded: under --nodes 64 --blocks 128 every node serves nearly its whole share of sgdmf's
// ratings, about 1.9 M elements over the process, at 8 bytes an OwnedElement 15 MB held from
// the element requests to the end of the run. Sorted, an element mostly follows the one before
// it in its DDS by a small gap, and takes one or two bytes: each element is a varint of
// (gap << 1 | starts a DDS), the gap being the offset less the one before less 1 in the same
// DDS, or, when the element starts a DDS, the offset, after a varint of the DDS.
class OwnedElementList {
 public:
  OwnedElementList() = default;
  // The list of `sorted`'s elements. Throws std::invalid_argument if they are not sorted and
  // distinct.
  explicit OwnedElementList(std::span<const OwnedElement> sorted);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t HeapBytes() const { return bytes_.capacity(); }

  // Calls fn(element) for each element, in order.
  template <class Fn>
  void ForEach(Fn fn) const {
    const uint8_t* at = bytes_.data();
    OwnedElement e{0, 0};
    for (size_t i = 0; i < size_; ++i) {
      const uint64_t head = ReadVarint(at);
      if (head & 1) {
        e.dds = static_cast<uint32_t>(ReadVarint(at));
        e.offset = static_cast<uint32_t>(head >> 1);
      } else {
        e.offset += static_cast<uint32_t>(head >> 1) + 1;
      }
      fn(e);
    }
  }

 private:
  // The coder's own bytes, never a message's: no bound to check.
  static uint64_t ReadVarint(const uint8_t*& at) {
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = *at++;
      value |= uint64_t{byte & 0x7fu} << shift;
      if (byte < 0x80) return value;
    }
  }

  std::vector<uint8_t> bytes_;
  size_t size_ = 0;
};

}  // namespace strads
