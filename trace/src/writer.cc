#include "strads/trace/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
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

struct TraceWriter::Impl {
  tc::Predictor predictor;
  std::vector<uint8_t> kinds, threads;
  std::array<std::vector<uint8_t>, 4> fields;  // a, b, c, d
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

void TraceWriter::Append(std::span<const Event> events) {
  Impl& m = *impl_;
  if (m.closed) Fail(path_, "Append after Close");
  for (const Event& event : events) {
    if (m.chunk_events == kMaxEventsPerChunk) EndChunk(false);
    const uint8_t kind = static_cast<uint8_t>(event.kind());
    if (!tc::ValidKind(kind)) Fail(path_, "Append: invalid event kind " + std::to_string(kind));
    const uint32_t thread = event.thread();
    const auto [a, b, c, d] = EventColumns::Abcd(event);
    const uint64_t e = EventColumns::E(event);
    m.kinds.push_back(kind);
    tc::PutVarint(m.threads, thread);
    auto& slot = m.predictor.Slot(event.kind(), thread);
    const auto& site_slot = m.predictor.SiteSlot(event.kind(), thread);
    if (event.kind() == EventKind::kLockGrant) {
      const uint64_t space = a >> tc::kLockIndexBits;
      const uint64_t index = a & ((uint64_t{1} << tc::kLockIndexBits) - 1);
      uint64_t& predicted = m.predictor.LockIndex(thread, space);
      if (e > UINT32_MAX) Fail(path_, "Append: lock grant with e over 32 bits");
      tc::PutVarint(m.threads, space);  // beside the thread: both repeat, LZ4 likes that
      tc::PutVarint(m.threads, e);
      tc::PutVarint(m.fields[0], tc::ZigZag(index - predicted));
      predicted = index;
    } else {
      if (e != 0)
        Fail(path_, "Append: e must be 0 for a " + std::string(EventKindName(event.kind())));
      tc::PutVarint(m.fields[0], tc::ZigZag(a - site_slot[0]));
    }
    switch (event.kind()) {
      case EventKind::kOperatorBegin:
      case EventKind::kOperatorEnd: {
        uint64_t& time = m.predictor.TimeUs(thread);
        const uint64_t c_us = c / tc::kTimeUnitNs;
        tc::PutVarint(m.fields[1], tc::ZigZag(b - site_slot[1]));
        tc::PutVarint(m.fields[2], tc::ZigZag(c_us - time));
        time = c_us;
        break;
      }
      case EventKind::kWait: {
        uint64_t& time = m.predictor.TimeUs(thread);
        const uint64_t b_us = b / tc::kTimeUnitNs;
        const uint64_t c_us = c / tc::kTimeUnitNs;
        tc::PutVarint(m.fields[1], tc::ZigZag(b_us - time));
        tc::PutVarint(m.fields[2], c_us);
        time = b_us + c_us;
        break;
      }
      case EventKind::kOutcome:
        if (c > UINT32_MAX) Fail(path_, "Append: outcome digest over 32 bits");
        tc::PutVarint(m.fields[1], tc::ZigZag(b - site_slot[1]));
        for (int i = 0; i < tc::kOutcomeDigestBytes; ++i)
          m.fields[2].push_back(static_cast<uint8_t>(c >> (8 * i)));
        break;
      default:
        tc::PutVarint(m.fields[1], tc::ZigZag(b - slot[1]));
        tc::PutVarint(m.fields[2], tc::ZigZag(c - slot[2]));
    }
    tc::PutVarint(m.fields[3], tc::ZigZag(d - slot[3]));
    slot = {a, b, c, d};
    ++m.chunk_events;
    ++next_event_;
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
                        {m.kinds, m.threads, m.fields[0], m.fields[1], m.fields[2], m.fields[3]},
                        m.sites, time_ns, node_, run_id_);
  auto& b = m.builder;
  b.Clear();
  std::vector<flatbuffers::Offset<fb::Site>> sites;
  sites.reserve(m.sites.size());
  for (const auto& s : m.sites) {
    sites.push_back(
        fb::CreateSite(b, s.id, b.CreateString(s.kind), b.CreateString(s.file), s.line));
  }
  const auto chunk = fb::CreateChunk(
      b, kTraceFormatVersion, m.chunk_first, m.chunk_events, b.CreateVector(m.kinds),
      b.CreateVector(m.threads), b.CreateVector(m.fields[0]), b.CreateVector(m.fields[1]),
      b.CreateVector(m.fields[2]), b.CreateVector(m.fields[3]), b.CreateVector(sites), final,
      checksum, time_ns, node_, run_id_);
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
