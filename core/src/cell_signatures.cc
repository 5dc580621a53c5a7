#include "cell_signatures.h"

#include <stdexcept>
#include <string>

#include "schedule.h"

namespace strads {
namespace {

// PutPacked's word for a cell whose signature does not pack: no packed signature is, since a
// missing first key means a missing second (the empty signature is both kNoPackedKey).
constexpr uint64_t kUnpackedWord = uint64_t{kNoPackedKey} << 32;

// A packed key's DDS is below kPackedDdsLimit.
bool IsPackedKey(uint32_t key) { return key >> 16 < kPackedDdsLimit; }

// Whether `word` is a packed signature as PackSignature makes them: keys that pack, rising.
bool IsPackedWord(uint64_t word) {
  const auto first = static_cast<uint32_t>(word >> 32), second = static_cast<uint32_t>(word);
  if (first == kNoPackedKey) return second == kNoPackedKey;
  return IsPackedKey(first) && (second == kNoPackedKey || (IsPackedKey(second) && first < second));
}

}  // namespace

bool PackSignature(std::span<const uint64_t> signature, uint64_t* word) {
  if (signature.size() > 2) return false;
  uint32_t keys[2] = {kNoPackedKey, kNoPackedKey};
  for (size_t i = 0; i < signature.size(); ++i) {
    const BlockKey key = signature[i];
    if (BlockKeyDds(key) >= kPackedDdsLimit || BlockKeyBlock(key) > 0xffff) return false;
    keys[i] = BlockKeyDds(key) << 16 | static_cast<uint32_t>(BlockKeyBlock(key));
  }
  *word = uint64_t{keys[0]} << 32 | keys[1];
  return true;
}

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

void CellSignatures::AddPacked(uint64_t word) {
  Key keys[2];
  size_t count = 0;
  for (const uint32_t key : {static_cast<uint32_t>(word >> 32), static_cast<uint32_t>(word)})
    if (key != kNoPackedKey) keys[count++] = MakeBlockKey(key >> 16, key & 0xffff);
  Add({keys, count});
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

size_t CellSignatures::PackedWireBytes() const {
  size_t unpacked_cells = 0, unpacked_keys = 0;
  for (size_t c = 0; c < size(); ++c) {
    uint64_t word;
    if (!PackSignature((*this)[c], &word)) ++unpacked_cells, unpacked_keys += (*this)[c].size();
  }
  return 3 * sizeof(uint64_t) + unpacked_cells * sizeof(uint32_t) + unpacked_keys * sizeof(Key) +
         size() * sizeof(uint64_t);
}

// The unpacked cells' table first, then the words: the writer and the reader take the words one
// at a time, with no array of them all (every node makes its message at once).
void CellSignatures::PutPacked(ByteWriter& w) const {
  CellSignatures unpacked;
  uint64_t word;
  for (size_t c = 0; c < size(); ++c)
    if (!PackSignature((*this)[c], &word)) unpacked.Add((*this)[c]);
  unpacked.Put(w);
  w.Put<uint64_t>(size());
  for (size_t c = 0; c < size(); ++c)
    w.Put(PackSignature((*this)[c], &word) ? word : kUnpackedWord);
}

CellSignatures CellSignatures::GetPacked(ByteReader& r, const char* what) {
  const CellSignatures unpacked = Get(r, what);
  const auto cells = r.Get<uint64_t>();
  if (cells > r.remaining() / sizeof(uint64_t) || cells < unpacked.size())
    throw std::runtime_error(std::string(what) + ": bad packed cell signatures in a message (" +
                             std::to_string(cells) + " cells in " + std::to_string(r.remaining()) +
                             " bytes)");
  CellSignatures s;
  s.Reserve(cells, 2 * cells + unpacked.KeyCount());
  size_t next_unpacked = 0;
  for (uint64_t c = 0; c < cells; ++c) {
    const auto word = r.Get<uint64_t>();
    if (word == kUnpackedWord && next_unpacked < unpacked.size()) {
      s.Add(unpacked[next_unpacked++]);
    } else if (IsPackedWord(word)) {
      s.AddPacked(word);
    } else {
      throw std::runtime_error(std::string(what) + ": bad packed cell signature in a message (" +
                               std::to_string(word) + ", cell " + std::to_string(c) + ")");
    }
  }
  if (next_unpacked != unpacked.size())
    throw std::runtime_error(std::string(what) + ": bad packed cell signatures in a message (" +
                             std::to_string(unpacked.size() - next_unpacked) +
                             " unpacked cells left)");
  return s;
}

}  // namespace strads
