#include "strads/trace/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "chunk_checksum.h"
#include "codec.h"
#include "strads/regular_file.h"
#include "strads/trace/segments.h"
#include "strads/trace/trace_generated.h"

namespace strads {

namespace tc = trace_codec;

namespace {

[[noreturn]] void Fail(const std::string& file, uint64_t offset, const std::string& what) {
  throw TraceError(file + ": offset " + std::to_string(offset) + ": " + what);
}

// Bytes with 8-byte aligned storage (the FlatBuffers verifier checks alignment).
class Bytes {
 public:
  void resize(size_t n) {
    storage_.resize((n + 7) / 8);
    size_ = n;
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage_.data()); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(storage_.data()); }
  size_t size() const { return size_; }

 private:
  std::vector<uint64_t> storage_;
  size_t size_ = 0;
};

// Reads a whole regular file of at most `max_bytes`.
Bytes ReadFile(const std::string& path, uint64_t max_bytes) {
  std::string why;
  const int fd = OpenRegularFile(path, &why);
  if (fd < 0) Fail(path, 0, why);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) Fail(path, 0, std::string("cannot stat: ") + std::strerror(errno));
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    Fail(path, 0,
         "file size " + std::to_string(size) + " over the bound " + std::to_string(max_bytes));
  }
  Bytes bytes;
  bytes.resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t r = ::read(fd, bytes.data() + done, size - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) Fail(path, done, std::string("read failed: ") + std::strerror(errno));
    if (r == 0) break;  // shrank while reading: keep what is there
    done += static_cast<size_t>(r);
  }
  bytes.resize(done);
  return bytes;
}

std::string Printable(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f) {
      s += static_cast<char>(p[i]);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", p[i]);
      s += buf;
    }
  }
  return s;
}

// Checks the identifier and field 0 (format_version) of the root table of the FlatBuffer that
// starts at buf + start, before the full verification (so a newer version is reported as such
// rather than as a verifier failure).
void CheckIdentifierAndVersion(const std::string& file, uint64_t offset, const uint8_t* buf,
                               size_t len, size_t start, const char* what) {
  if (len < start + 8) Fail(file, offset, std::string(what) + " too short");
  if (std::memcmp(buf + start + 4, tc::kIdentifier, 4) != 0) {
    Fail(file, offset,
         std::string("bad magic: ") + what + " file identifier is '" +
             Printable(buf + start + 4, 4) + "', expected '" + tc::kIdentifier + "'");
  }
  flatbuffers::Verifier v(buf, len);
  const auto root = v.VerifyOffset(start);
  const auto* table =
      root ? reinterpret_cast<const flatbuffers::Table*>(buf + start + root) : nullptr;
  if (!table || !table->VerifyTableStart(v) || !table->VerifyField<uint32_t>(v, 4, 4)) {
    Fail(file, offset,
         std::string("FlatBuffers verifier failed on the ") + what + " (format_version)");
  }
  const uint32_t version = table->GetField<uint32_t>(4, 0);
  if (version != kTraceFormatVersion) {
    Fail(file, offset,
         "unknown trace format version: got " + std::to_string(version) +
             ", this reader supports " + std::to_string(kTraceFormatVersion));
  }
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// A [ulong] the verifier passed: it checks a vector's length and bounds but aligns only the
// length (to 4), so a corrupted offset can leave the elements 4-aligned. Copied as bytes, never
// loaded as uint64_t (a misaligned load is undefined behaviour; found by manifest_fuzzer).
std::vector<uint64_t> U64s(const flatbuffers::Vector<uint64_t>* v) {
  std::vector<uint64_t> out(v ? v->size() : 0);
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(uint64_t));
  for (uint64_t& x : out) x = flatbuffers::EndianScalar(x);
  return out;
}

std::string Hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Decodes the columns of a verified chunk, appending to `out`.
class ChunkDecoder {
 public:
  ChunkDecoder(const std::string& file, uint64_t offset, const std::string& where)
      : file_(file), offset_(offset), where_(where) {}

  [[noreturn]] void Bad(const std::string& what) const { Fail(file_, offset_, where_ + what); }

  void Decode(const fb::Chunk& chunk, tc::Predictor& predictor, std::vector<Event>& out) {
    const uint32_t n = chunk.event_count();
    const auto* kinds = chunk.kinds();
    const auto* threads = chunk.threads();
    const flatbuffers::Vector<uint8_t>* fields[4] = {chunk.a(), chunk.b(), chunk.c(), chunk.d()};
    const size_t kind_count = kinds ? kinds->size() : 0;
    if (kind_count != n) {
      Bad("kinds column has " + std::to_string(kind_count) + " entries, event_count is " +
          std::to_string(n));
    }
    Cursor thread_cursor(threads);
    Cursor cursors[4] = {Cursor(fields[0]), Cursor(fields[1]), Cursor(fields[2]),
                         Cursor(fields[3])};
    predictor.StartChunk();
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t kind = kinds->Get(i);
      if (!tc::ValidKind(kind))
        Bad("event " + std::to_string(i) + ": unknown event kind " + std::to_string(kind));
      const auto event_kind = static_cast<EventKind>(kind);
      const uint64_t thread = Next(thread_cursor, "threads", i);
      if (thread > UINT32_MAX) Bad("event " + std::to_string(i) + ": thread over 32 bits");
      auto& slot = predictor.Slot(event_kind, static_cast<uint32_t>(thread));
      const auto& site_slot = predictor.SiteSlot(event_kind, static_cast<uint32_t>(thread));
      std::array<uint64_t, 4> abcd;
      uint64_t e = 0;
      if (event_kind == EventKind::kLockGrant) {
        const uint64_t space = Next(thread_cursor, "threads", i);
        if (space >> (64 - tc::kLockIndexBits) != 0)
          Bad("event " + std::to_string(i) + ": lock id space over 24 bits");
        e = Next(thread_cursor, "threads", i);
        if (e > UINT32_MAX) Bad("event " + std::to_string(i) + ": lock grant e over 32 bits");
        uint64_t& predicted = predictor.LockIndex(static_cast<uint32_t>(thread), space);
        const uint64_t index = (predicted + tc::UnZigZag(Next(cursors[0], "a", i))) &
                               ((uint64_t{1} << tc::kLockIndexBits) - 1);
        abcd[0] = (space << tc::kLockIndexBits) | index;
        predicted = index;
      } else {
        abcd[0] = site_slot[0] + tc::UnZigZag(Next(cursors[0], "a", i));
      }
      switch (event_kind) {
        case EventKind::kOperatorBegin:
        case EventKind::kOperatorEnd: {
          uint64_t& time = predictor.TimeUs(static_cast<uint32_t>(thread));
          abcd[1] = site_slot[1] + tc::UnZigZag(Next(cursors[1], "b", i));
          time += tc::UnZigZag(Next(cursors[2], "c", i));
          abcd[2] = time * tc::kTimeUnitNs;
          break;
        }
        case EventKind::kWait: {
          uint64_t& time = predictor.TimeUs(static_cast<uint32_t>(thread));
          const uint64_t begin_us = time + tc::UnZigZag(Next(cursors[1], "b", i));
          const uint64_t duration_us = Next(cursors[2], "c", i);
          abcd[1] = begin_us * tc::kTimeUnitNs;
          abcd[2] = duration_us * tc::kTimeUnitNs;
          time = begin_us + duration_us;
          break;
        }
        case EventKind::kOutcome: {
          abcd[1] = site_slot[1] + tc::UnZigZag(Next(cursors[1], "b", i));
          Cursor& c = cursors[2];
          if (c.end - c.p < tc::kOutcomeDigestBytes)
            Bad("event " + std::to_string(i) + ": outcome digest missing in column c");
          abcd[2] = 0;
          for (int k = 0; k < tc::kOutcomeDigestBytes; ++k)
            abcd[2] |= static_cast<uint64_t>(*c.p++) << (8 * k);
          break;
        }
        default:
          abcd[1] = slot[1] + tc::UnZigZag(Next(cursors[1], "b", i));
          abcd[2] = slot[2] + tc::UnZigZag(Next(cursors[2], "c", i));
      }
      abcd[3] = slot[3] + tc::UnZigZag(Next(cursors[3], "d", i));
      slot = abcd;
      out.push_back(EventColumns::Make(event_kind, static_cast<uint32_t>(thread), abcd, e));
    }
    const char* names[5] = {"threads", "a", "b", "c", "d"};
    const Cursor* all[5] = {&thread_cursor, &cursors[0], &cursors[1], &cursors[2], &cursors[3]};
    for (int k = 0; k < 5; ++k) {
      if (all[k]->p != all[k]->end) Bad(std::string("column ") + names[k] + " has extra bytes");
    }
  }

 private:
  struct Cursor {
    explicit Cursor(const flatbuffers::Vector<uint8_t>* v)
        : p(v ? v->data() : nullptr), end(v ? v->data() + v->size() : nullptr) {}
    const uint8_t* p;
    const uint8_t* end;
  };
  uint64_t Next(Cursor& c, const char* column, uint32_t i) const {
    uint64_t v = 0;
    if (!tc::GetVarint(c.p, c.end, &v)) {
      Bad("event " + std::to_string(i) + ": bad or missing varint in column " + column);
    }
    return v;
  }

  const std::string& file_;
  uint64_t offset_;
  std::string where_;
};

struct NodeLogParser {
  const std::string& path;
  NodeTrace& node;
  const TraceReader::EventVisitor* visit;  // null: append to node.events
  tc::Predictor predictor;
  bool saw_final = false;
  uint64_t events_seen = 0;
  bool any_first = false;      // a later segment read on its own: its first chunk sets the base
  std::vector<Event> scratch;  // one chunk's events, for `visit`

  // Parses the decompressed content of one frame that starts at `frame_offset` in the file.
  // `frame_complete`: the frame ended (content checksum verified); otherwise the file ended
  // inside it and a trailing partial chunk is truncation, not corruption.
  // Returns false if it stopped at a truncated chunk.
  bool ParseFrame(const Bytes& content, uint64_t frame_offset, bool frame_complete) {
    size_t off = 0;
    while (off < content.size()) {
      const std::string where = "chunk " + std::to_string(node.chunks) + " (at byte " +
                                std::to_string(off) + " of the frame's content): ";
      if (saw_final) Fail(path, frame_offset, where + "data after the final chunk");
      const size_t left = content.size() - off;
      if (left < 4) {
        if (frame_complete) Fail(path, frame_offset, where + "partial chunk size prefix");
        return false;
      }
      uint32_t size;
      std::memcpy(&size, content.data() + off, 4);  // little-endian hosts only (FORMAT.md)
      if (size > TraceReader::kMaxChunkBytes) {
        Fail(path, frame_offset,
             where + "chunk size " + std::to_string(size) + " over the bound " +
                 std::to_string(TraceReader::kMaxChunkBytes));
      }
      if (size > left - 4) {
        if (frame_complete) {
          Fail(path, frame_offset,
               where + "chunk size " + std::to_string(size) + " runs past the end of the frame");
        }
        return false;
      }
      ParseChunk(content.data() + off, size + 4, frame_offset, where);
      off += size + 4;
    }
    return true;
  }

  void ParseChunk(const uint8_t* rec, size_t len, uint64_t frame_offset, const std::string& where) {
    const std::string ctx = where;
    if (reinterpret_cast<uintptr_t>(rec) % 8 != 0) {
      // Writers keep chunks 8-aligned in the frame; others are accepted through a copy (the
      // verifier checks alignment).
      Bytes aligned;
      aligned.resize(len);
      std::memcpy(aligned.data(), rec, len);
      ParseChunk(aligned.data(), len, frame_offset, where);
      return;
    }
    CheckIdentifierAndVersion(path, frame_offset, rec, len, 4, (ctx + "chunk").c_str());
    flatbuffers::Verifier verifier(rec, len);
    if (!verifier.VerifySizePrefixedBuffer<fb::Chunk>(tc::kIdentifier)) {
      Fail(path, frame_offset, ctx + "FlatBuffers verifier failed on the chunk");
    }
    const fb::Chunk& chunk = *flatbuffers::GetSizePrefixedRoot<fb::Chunk>(rec);
    if (chunk.event_count() > TraceReader::kMaxEventsPerChunk) {
      Fail(path, frame_offset,
           ctx + "event_count " + std::to_string(chunk.event_count()) + " over the bound " +
               std::to_string(TraceReader::kMaxEventsPerChunk));
    }
    std::vector<TraceSite> sites = tc::ChunkSites(chunk);
    const uint64_t sum = tc::ChunkChecksum(chunk, sites);
    if (sum != chunk.checksum()) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "chunk checksum mismatch: stored %016llx, computed %016llx",
                    static_cast<unsigned long long>(chunk.checksum()),
                    static_cast<unsigned long long>(sum));
      Fail(path, frame_offset, ctx + buf);
    }
    // Written by node K into node-K.log, every chunk by one run: a log under another name, or
    // one spliced from two recordings, would replay another node's or run's decisions.
    if (chunk.node() != static_cast<uint32_t>(node.node)) {
      Fail(path, frame_offset,
           ctx + "this is node " + std::to_string(chunk.node()) + "'s log, read as node " +
               std::to_string(node.node) + "'s (node logs renamed or swapped)");
    }
    if (node.chunks == 0) {
      node.run_id = chunk.run_id();
    } else if (chunk.run_id() != node.run_id) {
      Fail(path, frame_offset,
           ctx + "run id " + Hex(chunk.run_id()) + ", earlier chunks have " + Hex(node.run_id) +
               " (pieces of two recordings)");
    }
    if (any_first && node.chunks == 0) events_seen = node.first_event = chunk.first_event();
    if (chunk.first_event() != events_seen) {
      Fail(path, frame_offset,
           ctx + "first_event is " + std::to_string(chunk.first_event()) + ", expected " +
               std::to_string(events_seen));
    }
    if (visit == nullptr) {
      ChunkDecoder(path, frame_offset, ctx).Decode(chunk, predictor, node.events);
    } else {
      scratch.clear();
      ChunkDecoder(path, frame_offset, ctx).Decode(chunk, predictor, scratch);
      (*visit)(scratch, events_seen);
    }
    if (chunk.event_count() > 0) node.chunk_times.push_back({events_seen, chunk.time_ns()});
    events_seen += chunk.event_count();
    node.events_read += chunk.event_count();
    for (auto& s : sites) node.sites[s.id] = std::move(s);
    ++node.chunks;
    if (chunk.final()) saw_final = true;
  }
};

constexpr uint8_t kLz4Magic[4] = {0x04, 0x22, 0x4d, 0x18};  // 0x184D2204 little-endian

}  // namespace

NodeTrace TraceReader::ReadNodeLog(const std::string& path, int node_index) {
  return ReadNodeLog(path, node_index, nullptr, 0);
}

NodeTrace TraceReader::ReadNodeLog(const std::string& path, int node_index,
                                   const EventVisitor& visit) {
  return ReadNodeLog(path, node_index, &visit, 0);
}

NodeTrace TraceReader::ReadNodeLog(const std::string& path, int node_index,
                                   const EventVisitor* visit, std::optional<uint64_t> first_event) {
  NodeTrace node;
  node.node = node_index;
  node.first_event = first_event.value_or(0);
  const Bytes file = ReadFile(path, UINT64_MAX >> 1);
  node.file_bytes = file.size();
  NodeLogParser parser{path, node, visit, {}, false, node.first_event, !first_event, {}};

  LZ4F_dctx* dctx = nullptr;
  const LZ4F_errorCode_t ce = LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);
  if (LZ4F_isError(ce)) Fail(path, 0, std::string("LZ4 error: ") + LZ4F_getErrorName(ce));
  const std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> dctx_owner(
      dctx, &LZ4F_freeDecompressionContext);

  std::vector<uint8_t> out(1 << 18);
  size_t pos = 0;
  bool truncated = false;
  while (pos < file.size() && !truncated) {
    const size_t frame_start = pos;
    const size_t left = file.size() - pos;
    if (std::memcmp(file.data() + pos, kLz4Magic, left < 4 ? left : 4) != 0) {
      Fail(path, pos,
           "bad magic: expected an LZ4 frame (magic 04 22 4d 18), got '" +
               Printable(file.data() + pos, left < 4 ? left : 4) + "'");
    }
    if (left >= 5 && !(file.data()[pos + 4] & 0x04)) {
      Fail(path, pos, "LZ4 frame without a content checksum");
    }
    LZ4F_resetDecompressionContext(dctx);
    Bytes content;
    size_t content_size = 0;
    content.resize(0);
    bool frame_done = false;
    while (true) {
      size_t src = file.size() - pos;
      size_t dst = out.size();
      const size_t r = LZ4F_decompress(dctx, out.data(), &dst, file.data() + pos, &src, nullptr);
      if (LZ4F_isError(r)) {
        Fail(path, frame_start,
             std::string("LZ4 error in the frame (near byte ") + std::to_string(pos + src) +
                 "): " + LZ4F_getErrorName(r));
      }
      pos += src;
      if (dst > 0) {
        if (content_size + dst > kMaxFrameContentBytes) {
          Fail(path, frame_start,
               "frame content over the bound of " + std::to_string(kMaxFrameContentBytes) +
                   " bytes");
        }
        // Grow geometrically (Bytes::resize keeps the content).
        content.resize(content_size + dst);
        std::memcpy(content.data() + content_size, out.data(), dst);
        content_size += dst;
      }
      if (r == 0) {
        frame_done = true;
        break;
      }
      if (src == 0 && dst == 0) {
        if (pos == file.size()) break;  // the file ends inside this frame
        Fail(path, frame_start, "LZ4 decoder made no progress");
      }
    }
    node.raw_bytes += content_size;
    if (!parser.ParseFrame(content, frame_start, frame_done) || !frame_done) {
      truncated = true;
      node.incomplete_reason = "the file ends inside the frame at offset " +
                               std::to_string(frame_start) + " (the writer did not finish it)";
    } else {
      ++node.frames;
    }
  }
  // A killed writer leaves both; the missing final chunk is what matters to a reader.
  if (!parser.saw_final) {
    node.incomplete_reason = "no final chunk (the writer did not Close)" +
                             (truncated ? "; " + node.incomplete_reason : std::string());
  }
  node.complete = !truncated && parser.saw_final;
  return node;
}

NodeTrace TraceReader::ReadNode(const std::string& dir, const ManifestInfo& manifest,
                                int node_index, const EventVisitor* visit, uint64_t from) {
  const std::vector<SegmentFile> files = NodeSegments(dir, manifest, node_index, from);
  NodeTrace whole;
  whole.node = node_index;
  for (size_t s = 0; s < files.size(); ++s) {
    const SegmentFile& file = files[s];
    struct stat st;
    if (::stat(file.path.c_str(), &st) != 0 && errno == ENOENT) {
      const bool listed = std::find(manifest.segments.begin(), manifest.segments.end(),
                                    file.start) != manifest.segments.end();
      // A node that died before creating its first log; a listed later segment was cut by
      // every node before the manifest named it.
      if (s == 0 && file.start == 0 && !manifest.clean_close) {
        whole.incomplete_reason = "node log missing";
        break;
      }
      if (!manifest.segments.empty())  // a log never cut: ReadNodeLog says it cannot open
        Fail(file.path, 0,
             std::string("missing: ") +
                 (listed ? "the manifest lists this segment" : "the segment is expected here") +
                 " (deleted or lost since the recording)");
    }
    // The first file read sets the numbering (0 for node-K.log); the others go on from it.
    std::optional<uint64_t> first;
    if (s > 0 || file.start == 0) first = s > 0 ? whole.first_event + whole.events_read : 0;
    NodeTrace part = ReadNodeLog(file.path, node_index, visit, first);
    if (s > 0 && !whole.complete)
      Fail(files[s - 1].path, whole.segments.back().file_bytes,
           "corrupt: a later segment follows, but this one " + whole.incomplete_reason +
               " (segments are sealed before the next one starts)");
    if (s == 0) {
      whole.first_event = part.first_event;
      whole.run_id = part.run_id;
    } else if (part.chunks > 0 && whole.chunks > 0 && part.run_id != whole.run_id) {
      Fail(file.path, 0,
           "run id " + Hex(part.run_id) + ", the earlier segments have " + Hex(whole.run_id) +
               " (segments of two recordings)");
    } else if (whole.chunks == 0) {
      whole.run_id = part.run_id;
    }
    whole.segments.push_back(
        {file.start, file.path, part.first_event, part.events_read, part.file_bytes});
    whole.events.insert(whole.events.end(), part.events.begin(), part.events.end());
    for (auto& [id, site] : part.sites) whole.sites[id] = std::move(site);
    whole.chunk_times.insert(whole.chunk_times.end(), part.chunk_times.begin(),
                             part.chunk_times.end());
    whole.events_read += part.events_read;
    whole.file_bytes += part.file_bytes;
    whole.raw_bytes += part.raw_bytes;
    whole.chunks += part.chunks;
    whole.frames += part.frames;
    whole.complete = part.complete;
    whole.incomplete_reason = part.incomplete_reason;
  }
  return whole;
}

ManifestInfo TraceReader::ReadManifest(const std::string& path) {
  const Bytes bytes = ReadFile(path, kMaxManifestBytes);
  if (bytes.size() < 4)
    Fail(path, 0, "manifest too short (" + std::to_string(bytes.size()) + " bytes)");
  uint32_t prefix;
  std::memcpy(&prefix, bytes.data(), 4);
  if (prefix != bytes.size() - 4) {
    Fail(path, 0,
         "manifest size prefix says " + std::to_string(prefix) + " bytes follow, the file has " +
             std::to_string(bytes.size() - 4) + " (truncated or not a manifest)");
  }
  CheckIdentifierAndVersion(path, 0, bytes.data(), bytes.size(), 4, "manifest");
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!fb::VerifySizePrefixedManifestBuffer(verifier)) {
    Fail(path, 0, "FlatBuffers verifier failed on the manifest");
  }
  const fb::Manifest& m = *fb::GetSizePrefixedManifest(bytes.data());
  ManifestInfo info;
  info.format_version = m.format_version();
  info.program = Str(m.program());
  info.build_id = Str(m.build_id());
  if (m.arguments()) {
    for (const auto* a : *m.arguments()) info.arguments.push_back(Str(a));
  }
  info.node_count = m.node_count();
  info.threads_per_node = m.threads_per_node();
  if (m.inputs()) {
    for (const fb::InputFile* in : *m.inputs()) {
      info.inputs.push_back(InputChecksum{Str(in->path()), in->fnv1a64(), in->size()});
    }
  }
  info.start_time_ns = m.start_time_ns();
  info.clean_close = m.clean_close();
  info.run_id = m.run_id();
  info.checkpoint_dir = Str(m.checkpoint_dir());
  info.segments = U64s(m.segments());
  info.checkpoints = U64s(m.checkpoints());
  const uint64_t sum = tc::ManifestChecksum(info);
  if (sum != m.checksum()) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "manifest checksum mismatch: stored %016llx, computed %016llx",
                  static_cast<unsigned long long>(m.checksum()),
                  static_cast<unsigned long long>(sum));
    Fail(path, 0, buf);
  }
  if (info.node_count == 0 || info.node_count > kMaxNodes) {
    Fail(path, 0,
         "node_count " + std::to_string(info.node_count) + " out of range 1.." +
             std::to_string(kMaxNodes));
  }
  for (const auto* list : {&info.segments, &info.checkpoints}) {
    const char* name = list == &info.segments ? "segments" : "checkpoints";
    if (list->size() > kMaxSegments)
      Fail(path, 0,
           std::string(name) + ": " + std::to_string(list->size()) + " entries, over the bound " +
               std::to_string(kMaxSegments));
    for (size_t i = 1; i < list->size(); ++i)
      if ((*list)[i] <= (*list)[i - 1])
        Fail(path, 0, std::string(name) + " not in ascending order at entry " + std::to_string(i));
  }
  return info;
}

TraceReader TraceReader::Open(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    throw TraceError(dir + ": cannot open trace directory: " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) throw TraceError(dir + ": not a trace directory");
  TraceReader reader;
  reader.dir_ = dir;
  reader.manifest_ = ReadManifest(dir + "/manifest");
  for (uint32_t k = 0; k < reader.manifest_.node_count; ++k) {
    NodeTrace node = ReadNode(dir, reader.manifest_, static_cast<int>(k));
    if (node.segments.empty()) {  // the run died before this node created its log
      reader.nodes_.push_back(std::move(node));
      continue;
    }
    const std::string path = node.segments.back().path;
    CheckRunOf(path, node, reader.manifest_);
    // A writer that dies leaves a short log and a manifest without clean_close; a short log
    // under a clean close was cut or damaged after the run: corrupt, not incomplete.
    if (reader.manifest_.clean_close && !node.complete) {
      Fail(path, node.file_bytes,
           "corrupt: the manifest says the run closed cleanly, but " + node.incomplete_reason);
    }
    reader.nodes_.push_back(std::move(node));
  }
  return reader;
}

void TraceReader::CheckRunOf(const std::string& path, const NodeTrace& node,
                             const ManifestInfo& manifest) {
  if (node.chunks == 0 || node.run_id == manifest.run_id) return;
  Fail(path, 0,
       "recorded by another run (run id " + Hex(node.run_id) + ") than the manifest's (" +
           Hex(manifest.run_id) + "): a node log copied from another recording");
}

bool TraceReader::complete() const {
  if (!manifest_.clean_close) return false;
  for (const auto& n : nodes_) {
    if (!n.complete) return false;
  }
  return true;
}

}  // namespace strads
