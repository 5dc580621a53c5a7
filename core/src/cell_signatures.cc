#include "cell_signatures.h"

#include <stdexcept>
#include <string>

namespace strads {

std::span<const CellSignatures::Key> CellSignatures::at(size_t cell) const {
  if (cell >= ends_.size())
    throw std::out_of_range("CellSignatures: cell " + std::to_string(cell) + " of " +
                            std::to_string(ends_.size()));
  return (*this)[cell];
}

void CellSignatures::Add(std::span<const Key> signature) {
  if (keys_.size() + signature.size() > UINT32_MAX)
    throw std::length_error("CellSignatures: more than 2^32 keys");
  keys_.insert(keys_.end(), signature.begin(), signature.end());
  ends_.push_back(static_cast<uint32_t>(keys_.size()));
}

void CellSignatures::Reserve(size_t cells, size_t keys) {
  ends_.reserve(cells);
  keys_.reserve(keys);
}

void CellSignatures::Release() {
  std::vector<uint32_t>().swap(ends_);
  std::vector<Key>().swap(keys_);
}

size_t CellSignatures::WireBytes() const {
  return 2 * sizeof(uint64_t) + ends_.size() * sizeof(uint32_t) + keys_.size() * sizeof(Key);
}

void CellSignatures::Put(ByteWriter& w) const {
  w.PutVector(ends_);
  w.PutVector(keys_);
}

CellSignatures CellSignatures::Get(ByteReader& r, const char* what) {
  CellSignatures s;
  s.ends_ = r.GetVector<uint32_t>();
  s.keys_ = r.GetVector<Key>();
  bool valid = s.ends_.empty() ? s.keys_.empty() : s.ends_.back() == s.keys_.size();
  for (size_t c = 1; valid && c < s.ends_.size(); ++c) valid = s.ends_[c - 1] <= s.ends_[c];
  if (!valid)
    throw std::runtime_error(std::string(what) + ": bad cell signatures in a message (" +
                             std::to_string(s.ends_.size()) + " cells, " +
                             std::to_string(s.keys_.size()) + " keys)");
  return s;
}

}  // namespace strads
