// ElementRef: one element of one DDS, as engines exchange them.
#pragma once

#include <cstdint>

namespace strads {

struct ElementRef {
  uint32_t dds;
  int64_t index;
};

inline bool operator<(const ElementRef& a, const ElementRef& b) {
  return a.dds != b.dds ? a.dds < b.dds : a.index < b.index;
}
inline bool operator==(const ElementRef& a, const ElementRef& b) {
  return a.dds == b.dds && a.index == b.index;
}

}  // namespace strads
