#include "owned_element_list.h"

#include <stdexcept>

namespace strads {
namespace {

void PutVarint(std::vector<uint8_t>& bytes, uint64_t value) {
  while (value >= 0x80) {
    bytes.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  bytes.push_back(static_cast<uint8_t>(value));
}

}  // namespace

OwnedElementList::OwnedElementList(std::span<const OwnedElement> sorted) : size_(sorted.size()) {
  for (size_t i = 0; i < sorted.size(); ++i) {
    const OwnedElement& e = sorted[i];
    if (i == 0 || e.dds != sorted[i - 1].dds) {
      if (i > 0 && e.dds < sorted[i - 1].dds)
        throw std::invalid_argument("OwnedElementList: elements not sorted");
      PutVarint(bytes_, uint64_t{e.offset} << 1 | 1);
      PutVarint(bytes_, e.dds);
    } else {
      if (e.offset <= sorted[i - 1].offset)
        throw std::invalid_argument("OwnedElementList: elements not sorted and distinct");
      PutVarint(bytes_, uint64_t{e.offset - sorted[i - 1].offset - 1} << 1);
    }
  }
  bytes_.shrink_to_fit();
}

}  // namespace strads
