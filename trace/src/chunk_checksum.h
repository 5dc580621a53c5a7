// The checksum a chunk's payload should carry (FORMAT.md, "chunk checksum"), computed from a
// verified chunk: what the reader compares with the stored one, and what the checksum-fixing fuzz
// harness (fuzz/node_log_fixed_fuzzer.cc) writes in so that mutants reach the decoder.
// Internal to strads_trace.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codec.h"
#include "strads/trace/trace_generated.h"

namespace strads::trace_codec {

// The sites of a verified chunk, in order.
inline std::vector<TraceSite> ChunkSites(const fb::Chunk& chunk) {
  std::vector<TraceSite> sites;
  if (chunk.sites()) {
    for (const fb::Site* s : *chunk.sites()) {
      sites.push_back(TraceSite{s->id(), s->kind() ? s->kind()->str() : std::string(),
                                s->file() ? s->file()->str() : std::string(), s->line()});
    }
  }
  return sites;
}

inline uint64_t ChunkChecksum(const fb::Chunk& chunk, const std::vector<TraceSite>& sites) {
  auto column = [](const flatbuffers::Vector<uint8_t>* v) {
    return v ? std::span<const uint8_t>(v->data(), v->size()) : std::span<const uint8_t>();
  };
  return ChunkChecksum(chunk.first_event(), chunk.event_count(), chunk.final(),
                       {column(chunk.kinds()), column(chunk.threads()), column(chunk.a()),
                        column(chunk.b()), column(chunk.c()), column(chunk.d())},
                       sites, chunk.time_ns(), chunk.node(), chunk.run_id());
}

}  // namespace strads::trace_codec
