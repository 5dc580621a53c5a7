// Opening an untrusted path for reading without blocking on it. Opening a FIFO for reading waits
// for a writer, and reading a character device may never end: every reader of a trace, a data
// file or a dual file refuses anything but a regular file, before anything can block.
// Header-only, so that the trace library, the core and the examples share it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace strads {

// What a non-regular file is, for an error message: "a FIFO", "a directory", ...
inline std::string FileKindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "of an unknown kind";
}

// Opens `path` (following symbolic links) read-only if it is a regular file, and returns the
// descriptor, in blocking mode. Else returns -1 and sets *why: "cannot open: <reason>" or "not a
// regular file (a FIFO)". O_NONBLOCK makes the open of a FIFO return at once; fstat then refuses
// it, so the check and the read are on the same file.
inline int OpenRegularFile(const std::string& path, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *why = std::string("cannot open: ") + std::strerror(errno);
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *why = std::string("cannot stat: ") + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = "not a regular file (" + FileKindName(st.st_mode) + ")";
    ::close(fd);
    return -1;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

// "" if `path` is a regular file that can be opened for reading, else why not (as above), for
// readers that open the file through a stream. Checked through a non-blocking open, so a FIFO
// never blocks the check.
inline std::string WhyNotRegularFile(const std::string& path) {
  std::string why;
  const int fd = OpenRegularFile(path, &why);
  if (fd >= 0) ::close(fd);
  return why;
}

}  // namespace strads
