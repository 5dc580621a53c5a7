// ElementRef: one element of one DDS, as engines exchange them.
#pragma once

#include <cstdint>

namespace strads {

struct ElementRef {
  uint32_t dds;
  int64_t index;
};

// An element the node holding the list owns: its offset in that node's owned range of its DDS.
// Half an ElementRef's 16 bytes, for lists of many (an AsyncFor's served elements under --nodes
// 64: 30 MB as ElementRefs). An owned range of 2^32 elements or more is refused (OwnedOffset).
struct OwnedElement {
  uint32_t dds;
  uint32_t offset;
  friend bool operator<(const OwnedElement& a, const OwnedElement& b) {
    return a.dds != b.dds ? a.dds < b.dds : a.offset < b.offset;
  }
  friend bool operator==(const OwnedElement&, const OwnedElement&) = default;
};

inline bool operator<(const ElementRef& a, const ElementRef& b) {
  return a.dds != b.dds ? a.dds < b.dds : a.index < b.index;
}
inline bool operator==(const ElementRef& a, const ElementRef& b) {
  return a.dds == b.dds && a.index == b.index;
}

}  // namespace strads
