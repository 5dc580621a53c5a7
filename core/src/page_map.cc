#include "page_map.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace strads {

bool ReadPageStates(const void* p, size_t bytes, std::vector<PageState>& out) {
  out.clear();
  if (p == nullptr || bytes == 0) return true;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page;
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // One 64-bit entry per page (Documentation/admin-guide/mm/pagemap.rst): bit 63 present,
  // 62 swapped out, 61 file page or shared anonymous, 56 mapped exactly once (not the shared
  // zero page). A swapped-out page holds bytes the mapping wrote: it counts as its own, never
  // as absent, so that nothing is mapped over it.
  constexpr uint64_t kPresent = uint64_t{1} << 63, kSwapped = uint64_t{1} << 62,
                     kFilePage = uint64_t{1} << 61, kExclusive = uint64_t{1} << 56;
  std::vector<uint64_t> entries(4096);
  out.reserve(last - first);
  for (uintptr_t at = first; at < last;) {
    const size_t want = std::min<size_t>(entries.size(), last - at);
    const ssize_t got = pread(fd, entries.data(), want * sizeof(uint64_t),
                              static_cast<off_t>(at * sizeof(uint64_t)));
    if (got <= 0 || static_cast<size_t>(got) % sizeof(uint64_t) != 0) {
      close(fd);
      out.clear();
      return false;
    }
    const size_t n = static_cast<size_t>(got) / sizeof(uint64_t);
    for (size_t k = 0; k < n; ++k) {
      const uint64_t e = entries[k];
      out.push_back((e & kSwapped)     ? PageState::kOwn
                    : !(e & kPresent)  ? PageState::kAbsent
                    : (e & kFilePage)  ? PageState::kFile
                    : (e & kExclusive) ? PageState::kOwn
                                       : PageState::kZero);
    }
    at += n;
  }
  close(fd);
  return true;
}

}  // namespace strads
