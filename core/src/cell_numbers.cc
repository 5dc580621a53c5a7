#include "cell_numbers.h"

namespace strads {

CellNumbers::CellNumbers(const EvenSplit& chunks)
    : chunks_(chunks), parts_(static_cast<size_t>(chunks.parts())) {
  for (int64_t c = 0; c < chunks.parts(); ++c)
    parts_[static_cast<size_t>(c)].bytes.assign(
        static_cast<size_t>(chunks.end(c) - chunks.begin(c)), 0);
}

void CellNumbers::Renumber(int64_t c, const std::vector<int32_t>& to) {
  Part& part = parts_[static_cast<size_t>(c)];
  if (part.renumbered.empty()) {
    part.renumbered = to;
    return;
  }
  for (int32_t& cell : part.renumbered) cell = to.at(static_cast<size_t>(cell));
}

size_t CellNumbers::HeapBytes() const {
  size_t bytes = 0;
  for (const Part& part : parts_)
    bytes += part.bytes.capacity() + part.renumbered.capacity() * sizeof(int32_t);
  return bytes;
}

void CellNumbers::Release() {
  for (Part& part : parts_) {
    std::vector<uint8_t>().swap(part.bytes);
    std::vector<int32_t>().swap(part.renumbered);
  }
}

void CellNumbers::Part::Widen(int32_t cell) {
  Part wider;
  wider.width = cell < 0x10000 ? 2 : 4;
  const size_t count = size();
  wider.bytes.resize(count * static_cast<size_t>(wider.width));
  for (size_t j = 0; j < count; ++j) wider.Set(j, Raw(j));
  wider.renumbered = std::move(renumbered);
  *this = std::move(wider);
}

}  // namespace strads
