// FNV-1a, 64 bit: the hash behind every example's `checksum:` line.
// Header-only so that the serial baselines compute exactly the same value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace strads {

class Fnv1a {
 public:
  Fnv1a() = default;
  // Continues a hash from another's digest(), which is its whole state (a hash passed along the
  // nodes: Collectives::HashInNodeOrder).
  explicit Fnv1a(uint64_t state) : state_(state) {}

  void Update(const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
      state_ ^= p[i];
      state_ *= 0x100000001b3ULL;
    }
  }
  // One step for a whole 64-bit word, not one per byte: not FNV-1a of the word's bytes, but 8
  // times fewer steps (the trace format's chunk checksum hashes its columns so, FORMAT.md).
  void UpdateWord(uint64_t word) { state_ = (state_ ^ word) * 0x100000001b3ULL; }
  uint64_t digest() const { return state_; }
  // 16 lower-case hex digits, the format of the `checksum:` line.
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(state_));
    return buf;
  }

 private:
  uint64_t state_ = 0xcbf29ce484222325ULL;
};

}  // namespace strads
