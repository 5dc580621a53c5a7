// The fuzzer's bytes as a file path, without writing anything to disk: an anonymous memory file
// (memfd) reached through /proc/self/fd. The loaders take paths (and refuse anything but a
// regular file, which a memfd is), so the harnesses call exactly what the tools call.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace strads::fuzz {

class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) {
    fd_ = ::memfd_create("strads-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) std::abort();  // the harness cannot run: not an input's fault
    size_t done = 0;
    while (done < size) {
      const ssize_t w = ::write(fd_, data + done, size - done);
      if (w <= 0) std::abort();
      done += static_cast<size_t>(w);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace strads::fuzz
