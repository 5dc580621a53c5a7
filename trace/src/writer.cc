#include "strads/trace/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "codec.h"
#include "strads/trace/segments.h"
#include "strads/trace/trace_generated.h"

namespace strads {

static_assert(kTraceFormatVersion == static_cast<uint32_t>(fb::FormatVersion_Current),
              "kTraceFormatVersion must equal FormatVersion.Current in trace.fbs");

namespace tc = trace_codec;

namespace {

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw TraceError(path + ": " + what);
}

void WriteAll(const std::string& path, int fd, const uint8_t* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      Fail(path, std::string("write failed: ") + std::strerror(errno));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

// One column of the open chunk (FORMAT.md, "event encoding"), filled through a cursor: Room
// makes space for a run of events at once, the encoder writes with plain stores, Commit sets the
// size. Never empty of storage, so that data() is never null.
class Column {
 public:
  Column() : data_(new uint8_t[kInitialBytes]), capacity_(kInitialBytes) {}
  // A cursor at the end, with room for `bytes` more.
  uint8_t* Room(size_t bytes) {
    if (capacity_ - size_ < bytes) Grow(size_ + bytes);
    return data_.get() + size_;
  }
  // The bytes up to `end` (a cursor from Room, advanced) are the column's.
  void Commit(const uint8_t* end) { size_ = static_cast<size_t>(end - data_.get()); }
  void clear() { size_ = 0; }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_.get(), size_}; }

 private:
  static constexpr size_t kInitialBytes = 4096;
  void Grow(size_t need) {
    const size_t capacity = std::max(need, 2 * capacity_);
    std::unique_ptr<uint8_t[]> grown(new uint8_t[capacity]);
    std::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = capacity;
  }
  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
  size_t capacity_;
};

// The most bytes one event adds to each column: the kind; the thread, and for a lock grant the
// lock's space and e (three varints); a, b, c and d (a varint each, or 4 bytes of a digest).
constexpr size_t kMaxKindBytes = 1;
constexpr size_t kMaxThreadBytes = 3 * tc::kMaxVarintBytes;
constexpr size_t kMaxFieldBytes = tc::kMaxVarintBytes;

struct TraceWriter::Impl {
  tc::Predictor predictor;
  Column kinds, threads;
  std::array<Column, 4> fields;  // a, b, c, d
  uint32_t chunk_events = 0;
  uint64_t chunk_first = 0;
  std::vector<TraceSite> sites;
  std::vector<TraceSite> all_sites;  // every site defined, for the next segment's first chunk
  flatbuffers::FlatBufferBuilder builder{1 << 16};
  LZ4F_cctx* cctx = nullptr;
  LZ4F_preferences_t prefs{};
  std::vector<uint8_t> frame;  // compressed bytes of the open frame
  bool frame_open = false;
  size_t frame_content = 0;
  bool closed = false;

  Impl() {
    prefs.frameInfo.blockSizeID = LZ4F_max256KB;
    prefs.frameInfo.blockMode = LZ4F_blockLinked;
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    prefs.compressionLevel = 0;
    predictor.StartChunk();
  }
  ~Impl() {
    if (cctx) LZ4F_freeCompressionContext(cctx);
  }

  // Lets LZ4 emit what it buffered (LZ4F_flush: the block; LZ4F_compressEnd: the block and the
  // frame's end) and write()s every byte of the frame not written yet.
  template <class Lz4Tail>
  void WriteTail(const std::string& path, int fd, Lz4Tail tail) {
    const size_t old = frame.size();
    frame.resize(old + LZ4F_compressBound(0, &prefs));
    const size_t n = tail(cctx, frame.data() + old, frame.size() - old, nullptr);
    if (LZ4F_isError(n)) Fail(path, std::string("LZ4 error: ") + LZ4F_getErrorName(n));
    frame.resize(old + n);
    WriteAll(path, fd, frame.data(), frame.size());
    frame.clear();
  }
};

std::unique_ptr<TraceWriter> TraceWriter::Create(const std::string& dir, int node,
                                                 size_t frame_content_bytes, uint64_t run_id) {
  if (node < 0) throw TraceError(dir + ": negative node number " + std::to_string(node));
  std::string path = NodeLogPath(dir, node);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail(path, std::string("cannot create: ") + std::strerror(errno));
  return std::unique_ptr<TraceWriter>(new TraceWriter(
      dir, std::move(path), fd, static_cast<uint32_t>(node), run_id, frame_content_bytes));
}

TraceWriter::TraceWriter(std::string dir, std::string path, int fd, uint32_t node, uint64_t run_id,
                         size_t frame_content_bytes)
    : dir_(std::move(dir)),
      path_(std::move(path)),
      fd_(fd),
      node_(node),
      run_id_(run_id),
      frame_content_bytes_(frame_content_bytes),
      impl_(std::make_unique<Impl>()) {
  const LZ4F_errorCode_t e = LZ4F_createCompressionContext(&impl_->cctx, LZ4F_VERSION);
  if (LZ4F_isError(e)) {
    ::close(fd_);
    fd_ = -1;
    Fail(path_, std::string("LZ4 error: ") + LZ4F_getErrorName(e));
  }
}

TraceWriter::~TraceWriter() {
  try {
    Close();
  } catch (const TraceError&) {
  }
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// Why the writer cannot encode `event` (FORMAT.md, "event encoding"), or "" when it can.
std::string NotEncodable(const Event& event) {
  const uint8_t kind = static_cast<uint8_t>(event.kind());
  if (!tc::ValidKind(kind)) return "Append: invalid event kind " + std::to_string(kind);
  const uint64_t e = EventColumns::E(event);
  if (event.kind() == EventKind::kLockGrant)
    return e <= UINT32_MAX ? "" : "Append: lock grant with e over 32 bits";
  if (e != 0) return "Append: e must be 0 for a " + std::string(EventKindName(event.kind()));
  if (event.kind() == EventKind::kOutcome && EventColumns::Abcd(event)[2] > UINT32_MAX)
    return "Append: outcome digest over 32 bits";
  return "";
}

}  // namespace

void TraceWriter::Append(std::span<const Event> events) {
  Impl& m = *impl_;
  if (m.closed) Fail(path_, "Append after Close");
  while (!events.empty()) {
    if (m.chunk_events == kMaxEventsPerChunk) EndChunk(false);
    // A run of events that fits in the chunk, with room made for all of them at once: the loop
    // below writes through cursors kept in registers.
    const size_t run = std::min<size_t>(events.size(), kMaxEventsPerChunk - m.chunk_events);
    uint8_t* k = m.kinds.Room(run * kMaxKindBytes);
    uint8_t* th = m.threads.Room(run * kMaxThreadBytes);
    uint8_t* f0 = m.fields[0].Room(run * kMaxFieldBytes);
    uint8_t* f1 = m.fields[1].Room(run * kMaxFieldBytes);
    uint8_t* f2 = m.fields[2].Room(run * kMaxFieldBytes);
    uint8_t* f3 = m.fields[3].Room(run * kMaxFieldBytes);
    size_t done = 0;
    // The complete events are the chunk's (also before a throw: the columns stay whole events).
    const auto commit = [&] {
      m.kinds.Commit(k);
      m.threads.Commit(th);
      m.fields[0].Commit(f0);
      m.fields[1].Commit(f1);
      m.fields[2].Commit(f2);
      m.fields[3].Commit(f3);
      m.chunk_events += static_cast<uint32_t>(done);
      next_event_ += done;
    };
    for (; done < run; ++done) {
      const Event& event = events[done];
      const EventKind kind = event.kind();
      const uint32_t thread = event.thread();
      const auto [a, b, c, d] = EventColumns::Abcd(event);
      const uint64_t e = EventColumns::E(event);
      if (kind == EventKind::kLockGrant && e <= UINT32_MAX) [[likely]] {
        // Nearly every event of a recording: its own path, with nothing else to check. The
        // lock id as space and index, the index predicted from the thread's last in the space;
        // b, c and d from the thread's previous grant.
        const uint64_t space = a >> tc::kLockIndexBits;
        const uint64_t index = a & ((uint64_t{1} << tc::kLockIndexBits) - 1);
        uint64_t& predicted = m.predictor.LockIndex(thread, space);
        auto& slot = m.predictor.Slot(kind, thread);
        *k++ = static_cast<uint8_t>(kind);
        th = tc::PutVarint(th, thread);
        th = tc::PutVarint(th, space);  // beside the thread: both repeat, LZ4 likes that
        th = tc::PutVarint(th, e);
        f0 = tc::PutVarint(f0, tc::ZigZag(index - predicted));
        f1 = tc::PutVarint(f1, tc::ZigZag(b - slot[1]));
        f2 = tc::PutVarint(f2, tc::ZigZag(c - slot[2]));
        f3 = tc::PutVarint(f3, tc::ZigZag(d - slot[3]));
        predicted = index;
        slot = {a, b, c, d};
        continue;
      }
      if (const std::string why = NotEncodable(event); !why.empty()) [[unlikely]] {
        commit();
        Fail(path_, why);
      }
      *k++ = static_cast<uint8_t>(kind);
      th = tc::PutVarint(th, thread);
      auto& slot = m.predictor.Slot(kind, thread);
      const auto& site_slot = m.predictor.SiteSlot(kind, thread);
      f0 = tc::PutVarint(f0, tc::ZigZag(a - site_slot[0]));
      switch (kind) {
        case EventKind::kOperatorBegin:
        case EventKind::kOperatorEnd: {
          uint64_t& time = m.predictor.TimeUs(thread);
          const uint64_t c_us = c / tc::kTimeUnitNs;
          f1 = tc::PutVarint(f1, tc::ZigZag(b - site_slot[1]));
          f2 = tc::PutVarint(f2, tc::ZigZag(c_us - time));
          time = c_us;
          break;
        }
        case EventKind::kWait: {
          uint64_t& time = m.predictor.TimeUs(thread);
          const uint64_t b_us = b / tc::kTimeUnitNs;
          const uint64_t c_us = c / tc::kTimeUnitNs;
          f1 = tc::PutVarint(f1, tc::ZigZag(b_us - time));
          f2 = tc::PutVarint(f2, c_us);
          time = b_us + c_us;
          break;
        }
        case EventKind::kOutcome:
          f1 = tc::PutVarint(f1, tc::ZigZag(b - site_slot[1]));
          for (int i = 0; i < tc::kOutcomeDigestBytes; ++i)
            *f2++ = static_cast<uint8_t>(c >> (8 * i));
          break;
        default:
          f1 = tc::PutVarint(f1, tc::ZigZag(b - slot[1]));
          f2 = tc::PutVarint(f2, tc::ZigZag(c - slot[2]));
      }
      f3 = tc::PutVarint(f3, tc::ZigZag(d - slot[3]));
      slot = {a, b, c, d};
    }
    commit();
    events = events.subspan(run);
  }
}

void TraceWriter::DefineSite(uint32_t id, std::string kind, std::string file, uint32_t line) {
  if (impl_->closed) Fail(path_, "DefineSite after Close");
  impl_->all_sites.push_back(TraceSite{id, kind, file, line});
  impl_->sites.push_back(TraceSite{id, std::move(kind), std::move(file), line});
}

void TraceWriter::EndChunk(bool final) {
  Impl& m = *impl_;
  if (m.chunk_events == 0 && m.sites.empty() && !final) return;
  // The same clock as the Record policy's event times (the core's SteadyNowNs).
  const auto time_ns =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count());
  const uint64_t checksum =
      tc::ChunkChecksum(m.chunk_first, m.chunk_events, final,
                        {m.kinds.bytes(), m.threads.bytes(), m.fields[0].bytes(),
                         m.fields[1].bytes(), m.fields[2].bytes(), m.fields[3].bytes()},
                        m.sites, time_ns, node_, run_id_);
  auto& b = m.builder;
  b.Clear();
  const auto column = [&b](const Column& c) { return b.CreateVector(c.data(), c.size()); };
  std::vector<flatbuffers::Offset<fb::Site>> sites;
  sites.reserve(m.sites.size());
  for (const auto& s : m.sites) {
    sites.push_back(
        fb::CreateSite(b, s.id, b.CreateString(s.kind), b.CreateString(s.file), s.line));
  }
  const auto chunk = fb::CreateChunk(
      b, kTraceFormatVersion, m.chunk_first, m.chunk_events, column(m.kinds), column(m.threads),
      column(m.fields[0]), column(m.fields[1]), column(m.fields[2]), column(m.fields[3]),
      b.CreateVector(sites), final, checksum, time_ns, node_, run_id_);
  b.FinishSizePrefixed(chunk, tc::kIdentifier);

  if (!m.frame_open) {
    m.frame.resize(LZ4F_HEADER_SIZE_MAX);
    const size_t n = LZ4F_compressBegin(m.cctx, m.frame.data(), m.frame.size(), &m.prefs);
    if (LZ4F_isError(n)) Fail(path_, std::string("LZ4 error: ") + LZ4F_getErrorName(n));
    m.frame.resize(n);
    m.frame_open = true;
    m.frame_content = 0;
  }
  const size_t old = m.frame.size();
  m.frame.resize(old + LZ4F_compressBound(b.GetSize(), &m.prefs));
  const size_t n = LZ4F_compressUpdate(m.cctx, m.frame.data() + old, m.frame.size() - old,
                                       b.GetBufferPointer(), b.GetSize(), nullptr);
  if (LZ4F_isError(n)) Fail(path_, std::string("LZ4 error: ") + LZ4F_getErrorName(n));
  m.frame.resize(old + n);
  m.frame_content += b.GetSize();

  m.kinds.clear();
  m.threads.clear();
  for (auto& f : m.fields) f.clear();
  m.sites.clear();
  m.chunk_events = 0;
  m.chunk_first = next_event_;
  m.predictor.StartChunk();
  if (m.frame_content >= frame_content_bytes_) EndFrame();
}

void TraceWriter::EndFrame() {
  Impl& m = *impl_;
  if (!m.frame_open) return;
  m.WriteTail(path_, fd_, LZ4F_compressEnd);
  m.frame_open = false;
}

void TraceWriter::Flush() {
  Impl& m = *impl_;
  if (m.closed) return;
  EndChunk(false);
  // The frame stays open: a flush ends the LZ4 block only, so that the next chunks compress
  // against this one (a frame per flush cost ~80 bytes more: framing and fresh LZ4 history).
  // A reader decodes every complete block of a frame that was never ended (FORMAT.md).
  if (m.frame_open) m.WriteTail(path_, fd_, LZ4F_flush);
}

void TraceWriter::Close() {
  if (impl_->closed) return;
  impl_->closed = true;
  EndChunk(true);
  EndFrame();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) Fail(path_, std::string("close failed: ") + std::strerror(errno));
}

// Segment rotation (the only place that switches files): kept apart from the encoding above.
void TraceWriter::StartSegment(uint64_t start) {
  Impl& m = *impl_;
  if (m.closed) Fail(path_, "StartSegment after Close");
  EndChunk(true);
  EndFrame();
  if (::fsync(fd_) != 0) Fail(path_, std::string("fsync failed: ") + std::strerror(errno));
  const int sealed = fd_;
  fd_ = -1;
  if (::close(sealed) != 0) Fail(path_, std::string("close failed: ") + std::strerror(errno));
  path_ = NodeLogPath(dir_, static_cast<int>(node_), start);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) Fail(path_, std::string("cannot create: ") + std::strerror(errno));
  // The new name must outlive a crash as the sealed bytes do.
  if (const int d = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
    ::fsync(d);
    ::close(d);
  }
  m.sites = m.all_sites;
}

}  // namespace strads
