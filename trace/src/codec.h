// The event encoding inside a chunk (FORMAT.md, "event encoding"), shared by the writer and the
// reader so that both use the same predictors. Internal to strads_trace.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "strads/fnv1a.h"  // the core's, header-only
#include "strads/trace/event.h"
#include "strads/trace/manifest.h"

namespace strads {

// An event's fields as the columns store them (FORMAT.md, "event encoding"): a, b, c, d and e,
// whatever the kind. The only code that sees them without a kind.
struct EventColumns {
  static Event Make(EventKind kind, uint32_t thread, const std::array<uint64_t, 4>& abcd,
                    uint64_t e) {
    return Event(kind, thread, abcd[0], abcd[1], abcd[2], abcd[3], e);
  }
  static std::array<uint64_t, 4> Abcd(const Event& event) {
    return {event.a_, event.b_, event.c_, event.d_};
  }
  static uint64_t E(const Event& event) { return event.e_; }
};

}  // namespace strads

namespace strads::trace_codec {

inline constexpr char kIdentifier[] = "STRD";
inline constexpr uint32_t kThreadSlots = 256;  // threads >= 255 share the last predictor slot
inline constexpr int kKinds = 9;               // EventKind values 1..kKinds

inline uint64_t ZigZag(uint64_t delta) {
  const auto s = static_cast<int64_t>(delta);
  return (static_cast<uint64_t>(s) << 1) ^ static_cast<uint64_t>(s >> 63);
}
inline uint64_t UnZigZag(uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

// Writes v as a varint at `out`, which has room for kMaxVarintBytes; returns the byte after it.
// Through a cursor, not a vector's push_back: a byte store may alias the vector's own end
// pointer, so each push_back reloaded and stored it (the writer's cost per event, mostly).
inline constexpr size_t kMaxVarintBytes = 10;
inline uint8_t* PutVarint(uint8_t* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

// Reads one varint from [*p, end). False if it runs past `end` or over 10 bytes / 64 bits.
inline bool GetVarint(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const uint8_t byte = *p++;
    if (shift == 63 && byte > 1) return false;  // more than 64 bits
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *v = result;
      return true;
    }
  }
  return false;
}

// Lock ids of grants are split into a "space" (bits 40..63; the lock engine's DDS id) and an
// index (bits 0..39), and the index is predicted from the same thread's previous grant in the
// same space (spaces >= kLockSpaces share the last slot): a body that locks a row of W and a
// row of H would otherwise alternate between ids 2^40 apart.
inline constexpr int kLockSpaces = 16;
inline constexpr int kLockIndexBits = 40;

// Times (operator boundaries, waits) are stored in microseconds: a steady-clock delta of an
// operator in ns took 3-4 varint bytes of noise that LZ4 cannot shrink, and nothing that reads
// times (export, stats) needs finer than a microsecond. Writers truncate; readers multiply.
inline constexpr uint64_t kTimeUnitNs = 1000;

// Outcome digests are stored in 32 bits, 4 bytes little-endian in column c (FORMAT.md).
inline constexpr int kOutcomeDigestBytes = 4;

// Predictor state, reset at every chunk start: each chunk decodes on its own.
struct Predictor {
  std::array<std::array<std::array<uint64_t, 4>, kThreadSlots>, kKinds> previous{};
  std::array<std::array<uint64_t, kLockSpaces>, kThreadSlots> lock_index{};
  // Per thread slot, the last time (us) an operator boundary or the end of a wait showed: a
  // begin is predicted from the previous end, an end from its begin, a wait from either.
  std::array<uint64_t, kThreadSlots> time_us{};

  void StartChunk() {
    std::memset(&previous, 0, sizeof previous);
    std::memset(&lock_index, 0, sizeof lock_index);
    std::memset(&time_us, 0, sizeof time_us);
  }
  uint64_t& TimeUs(uint32_t thread) {
    return time_us[thread < kThreadSlots ? thread : kThreadSlots - 1];
  }
  uint64_t& LockIndex(uint32_t thread, uint64_t space) {
    return lock_index[thread < kThreadSlots ? thread : kThreadSlots - 1]
                     [space < kLockSpaces ? space : kLockSpaces - 1];
  }
  std::array<uint64_t, 4>& Slot(EventKind kind, uint32_t thread) {
    return previous[static_cast<int>(kind) - 1][thread < kThreadSlots ? thread : kThreadSlots - 1];
  }
  // What `a` and `b` of an event are predicted from: an operator end and an outcome name the
  // site and invocation of the thread's last operator begin, every other kind its own previous.
  const std::array<uint64_t, 4>& SiteSlot(EventKind kind, uint32_t thread) {
    const bool of_begin = kind == EventKind::kOperatorEnd || kind == EventKind::kOutcome;
    return Slot(of_begin ? EventKind::kOperatorBegin : kind, thread);
  }
};

inline bool ValidKind(uint8_t k) { return k >= 1 && k <= kKinds; }

// FNV-1a 64 (the core's header-only Fnv1a) of what the checksums cover, FORMAT.md.
template <typename T>
void UpdateLe(Fnv1a& h, T v) {  // little-endian fixed width
  uint8_t bytes[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<uint8_t>(v >> (8 * i));
  h.Update(bytes, sizeof bytes);
}
inline void UpdateBlock(Fnv1a& h, const uint8_t* data, uint32_t n) {  // u32 length, the bytes
  UpdateLe<uint32_t>(h, n);
  h.Update(data, n);
}
// u32 length (bytewise), then the bytes as little-endian 64-bit words, the last one padded with
// zeros, one step per word: 8 times fewer steps than UpdateBlock for the columns.
inline void UpdateBlockWords(Fnv1a& h, const uint8_t* data, uint32_t n) {
  UpdateLe<uint32_t>(h, n);
  Fnv1a local = h;  // a local, so that `data` cannot alias it and it stays in a register
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);  // little-endian hosts (FORMAT.md)
    local.UpdateWord(word);
  }
  if (i < n) {
    uint64_t word = 0;
    std::memcpy(&word, data + i, n - i);
    local.UpdateWord(word);
  }
  h = local;
}

}  // namespace strads::trace_codec

namespace strads::trace_codec {

// The chunk checksum (FORMAT.md, "chunk checksum").
inline uint64_t ChunkChecksum(uint64_t first_event, uint32_t event_count, bool final,
                              const std::array<std::span<const uint8_t>, 6>& columns,
                              const std::vector<TraceSite>& sites, uint64_t time_ns, uint32_t node,
                              uint64_t run_id) {
  Fnv1a h;
  UpdateLe<uint64_t>(h, first_event);
  UpdateLe<uint32_t>(h, event_count);
  UpdateLe<uint8_t>(h, final ? 1 : 0);
  for (const auto& column : columns) {
    UpdateBlockWords(h, column.data(), static_cast<uint32_t>(column.size()));
  }
  UpdateLe<uint32_t>(h, static_cast<uint32_t>(sites.size()));
  for (const auto& site : sites) {
    UpdateLe<uint32_t>(h, site.id);
    UpdateLe<uint32_t>(h, site.line);
    UpdateBlock(h, reinterpret_cast<const uint8_t*>(site.kind.data()),
                static_cast<uint32_t>(site.kind.size()));
    UpdateBlock(h, reinterpret_cast<const uint8_t*>(site.file.data()),
                static_cast<uint32_t>(site.file.size()));
  }
  UpdateLe<uint64_t>(h, time_ns);
  UpdateLe<uint32_t>(h, node);
  UpdateLe<uint64_t>(h, run_id);
  return h.digest();
}

}  // namespace strads::trace_codec

namespace strads::trace_codec {

// The manifest checksum (FORMAT.md, "manifest checksum"): every field but itself.
inline uint64_t ManifestChecksum(const ManifestInfo& m) {
  Fnv1a h;
  auto str = [&h](const std::string& s) {
    UpdateBlock(h, reinterpret_cast<const uint8_t*>(s.data()), static_cast<uint32_t>(s.size()));
  };
  UpdateLe<uint32_t>(h, m.format_version);
  str(m.program);
  str(m.build_id);
  UpdateLe<uint32_t>(h, static_cast<uint32_t>(m.arguments.size()));
  for (const auto& a : m.arguments) str(a);
  UpdateLe<uint32_t>(h, m.node_count);
  UpdateLe<uint32_t>(h, m.threads_per_node);
  UpdateLe<uint32_t>(h, static_cast<uint32_t>(m.inputs.size()));
  for (const auto& in : m.inputs) {
    str(in.path);
    UpdateLe<uint64_t>(h, in.fnv1a64);
    UpdateLe<uint64_t>(h, in.size);
  }
  UpdateLe<uint64_t>(h, m.start_time_ns);
  UpdateLe<uint8_t>(h, m.clean_close ? 1 : 0);
  UpdateLe<uint64_t>(h, m.run_id);
  str(m.checkpoint_dir);
  for (const auto* list : {&m.segments, &m.checkpoints}) {
    UpdateLe<uint32_t>(h, static_cast<uint32_t>(list->size()));
    for (const uint64_t v : *list) UpdateLe<uint64_t>(h, v);
  }
  return h.digest();
}

}  // namespace strads::trace_codec
