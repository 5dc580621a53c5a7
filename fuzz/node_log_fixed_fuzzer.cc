// Fuzzes the trace reader's chunk decoder: the bytes are the decompressed content of a node log
// (size-prefixed chunks, FORMAT.md). Before reading, the harness writes the right checksum into
// every chunk that passes the FlatBuffers verifier and compresses the content into one LZ4 frame,
// so that mutants of the columns, sites and counts get past the checksum check (which random
// mutation almost never passes) and reach ChunkDecoder. Then it reads the result as node 0's log
// with TraceReader::ReadNodeLog, as node_log_fuzzer.cc does. Seeds: `lz4 -dc node-0.log`.
#include <lz4frame.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "chunk_checksum.h"
#include "memory_file.h"
#include "strads/trace/error.h"
#include "strads/trace/reader.h"

namespace {

// Rewrites the stored checksum of every verifiable chunk of `content` in place.
void FixChunkChecksums(std::vector<uint8_t>& content) {
  size_t off = 0;
  while (content.size() - off >= 4) {
    uint32_t size;
    std::memcpy(&size, content.data() + off, 4);
    if (size > content.size() - off - 4) return;
    // An 8-aligned copy for the verifier (the reader makes the same copy).
    std::vector<uint64_t> aligned((size + 4 + 7) / 8);
    auto* rec = reinterpret_cast<uint8_t*>(aligned.data());
    std::memcpy(rec, content.data() + off, size + 4);
    flatbuffers::Verifier verifier(rec, size + 4);
    if (verifier.VerifySizePrefixedBuffer<strads::fb::Chunk>(strads::trace_codec::kIdentifier)) {
      auto* chunk =
          const_cast<strads::fb::Chunk*>(flatbuffers::GetSizePrefixedRoot<strads::fb::Chunk>(rec));
      const uint64_t sum =
          strads::trace_codec::ChunkChecksum(*chunk, strads::trace_codec::ChunkSites(*chunk));
      uint8_t* field = reinterpret_cast<flatbuffers::Table*>(chunk)->GetAddressOf(
          strads::fb::Chunk::VT_CHECKSUM);
      if (field != nullptr) {
        flatbuffers::WriteScalar<uint64_t>(field, sum);
        std::memcpy(content.data() + off, rec, size + 4);
      }
    }
    off += size + 4;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> content(data, data + size);
  FixChunkChecksums(content);
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  std::vector<uint8_t> frame(LZ4F_compressFrameBound(content.size(), &prefs));
  const size_t n =
      LZ4F_compressFrame(frame.data(), frame.size(), content.data(), content.size(), &prefs);
  if (LZ4F_isError(n)) std::abort();  // the harness's own fault
  const strads::fuzz::MemoryFile file(frame.data(), n);
  try {
    strads::TraceReader::ReadNodeLog(file.path(), 0);
  } catch (const strads::TraceError&) {
  }
  return 0;
}
