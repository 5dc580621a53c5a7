#include "strads/trace/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <utility>

#include "codec.h"
#include "strads/regular_file.h"
#include "strads/trace/trace_generated.h"

namespace strads {

namespace {

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw TraceError(path + ": " + what + (errno ? std::string(": ") + std::strerror(errno) : ""));
}

// Closes its file descriptor when it goes out of scope, a Fail included (errno kept).
struct OpenFile {
  int fd;
  ~OpenFile() {
    if (fd < 0) return;
    const int saved = errno;
    ::close(fd);
    errno = saved;
  }
  bool Close() {  // now, reporting failure
    const int closing = fd;
    fd = -1;
    return ::close(closing) == 0;
  }
};

}  // namespace

ManifestWriter::ManifestWriter(std::string dir, ManifestInfo info)
    : dir_(std::move(dir)), info_(std::move(info)) {}

void ManifestWriter::WriteStart() {
  info_.clean_close = false;
  Write(dir_, info_);
}

void ManifestWriter::WriteCleanClose() {
  info_.clean_close = true;
  Write(dir_, info_);
}

void ManifestWriter::WriteSegments(std::string checkpoint_dir, std::vector<uint64_t> segments,
                                   std::vector<uint64_t> checkpoints) {
  info_.checkpoint_dir = std::move(checkpoint_dir);
  info_.segments = std::move(segments);
  info_.checkpoints = std::move(checkpoints);
  Write(dir_, info_);
}

void ManifestWriter::Write(const std::string& dir, const ManifestInfo& info) {
  flatbuffers::FlatBufferBuilder b(1024);
  std::vector<flatbuffers::Offset<fb::InputFile>> inputs;
  for (const auto& in : info.inputs) {
    inputs.push_back(fb::CreateInputFile(b, b.CreateString(in.path), in.fnv1a64, in.size));
  }
  const auto manifest = fb::CreateManifest(
      b, info.format_version, b.CreateString(info.program), b.CreateString(info.build_id),
      b.CreateVectorOfStrings(info.arguments), info.node_count, info.threads_per_node,
      b.CreateVector(inputs), info.start_time_ns, info.clean_close,
      trace_codec::ManifestChecksum(info), info.run_id, b.CreateString(info.checkpoint_dir),
      b.CreateVector(info.segments), b.CreateVector(info.checkpoints));
  fb::FinishSizePrefixedManifestBuffer(b, manifest);

  const std::string path = dir + "/manifest";
  const std::string tmp = path + ".tmp";
  errno = 0;
  OpenFile file{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (file.fd < 0) Fail(tmp, "cannot create");
  const uint8_t* p = b.GetBufferPointer();
  size_t n = b.GetSize();
  while (n > 0) {
    const ssize_t w = ::write(file.fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) Fail(tmp, "write failed");
    p += w;
    n -= static_cast<size_t>(w);
  }
  if (::fsync(file.fd) != 0 || !file.Close()) Fail(tmp, "fsync/close failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0) Fail(path, "rename from manifest.tmp failed");
}

std::string ManifestWriter::BuildIdOfSelf() {
  struct stat st;
  if (::stat("/proc/self/exe", &st) != 0) return "";
  return "size=" + std::to_string(st.st_size) + ";mtime_ns=" +
         std::to_string(static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL +
                        static_cast<uint64_t>(st.st_mtim.tv_nsec));
}

std::string ManifestWriter::ProgramOfSelf() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

InputChecksum ManifestWriter::ChecksumFile(const std::string& path) {
  std::string why;
  OpenFile file{OpenRegularFile(path, &why)};
  if (file.fd < 0) throw TraceError(path + ": cannot checksum input file: " + why);
  Fnv1a h;
  InputChecksum result{path, 0, 0};
  std::vector<uint8_t> buf(1 << 16);
  for (;;) {
    const ssize_t r = ::read(file.fd, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) Fail(path, "read failed");
    if (r == 0) break;
    h.Update(buf.data(), static_cast<size_t>(r));
    result.size += static_cast<uint64_t>(r);
  }
  result.fnv1a64 = h.digest();
  return result;
}

uint64_t ManifestWriter::NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

uint64_t ManifestWriter::NewRunId() {
  uint64_t id = 0;
  while (id == 0) {
    if (::getrandom(&id, sizeof id, 0) != static_cast<ssize_t>(sizeof id))
      id = NowNs() ^ (static_cast<uint64_t>(::getpid()) << 32);  // no entropy: still distinct
  }
  return id;
}

}  // namespace strads
