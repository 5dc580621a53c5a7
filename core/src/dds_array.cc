#include "strads/internal/dds_array.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "page_map.h"

namespace strads::internal {

namespace {
size_t PageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}
size_t RoundUpToPage(size_t bytes) { return (bytes + PageBytes() - 1) / PageBytes() * PageBytes(); }
}  // namespace

DdsArray::DdsArray(size_t bytes, size_t alignment) : bytes_(bytes), alignment_(alignment) {
  if (bytes == 0) return;
  if (bytes < kMapBytes) {
    data_ = static_cast<std::byte*>(::operator new (bytes, std::align_val_t{alignment}));
    return;
  }
  // An array of a huge page or more starts on a huge page boundary: otherwise only the huge
  // pages wholly inside it can be huge (AdviseHugePages), and an array of 2-4 MB, such as LDA's
  // word-topic table, may hold none. The reservation is a huge page longer, and the slack on
  // both sides is unmapped at once: it costs address space for a moment, never memory.
  const size_t slack = bytes >= kHugePageBytes ? kHugePageBytes : 0;
  void* p = mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  auto* const reserved = static_cast<std::byte*>(p);
  data_ = reserved;
  if (slack != 0) {
    const auto base = reinterpret_cast<uintptr_t>(reserved);
    data_ = reinterpret_cast<std::byte*>((base + slack - 1) / slack * slack);
    const size_t head = static_cast<size_t>(data_ - reserved);
    const size_t tail_begin = RoundUpToPage(head + bytes);
    if (head != 0) munmap(reserved, head);
    if (tail_begin < bytes + slack) munmap(reserved + tail_begin, bytes + slack - tail_begin);
  }
  mapped_ = true;
}

DdsArray::~DdsArray() { Release(); }

DdsArray::DdsArray(DdsArray&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      alignment_(std::exchange(other.alignment_, 0)),
      mapped_(std::exchange(other.mapped_, false)) {}

DdsArray& DdsArray::operator=(DdsArray&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    alignment_ = std::exchange(other.alignment_, 0);
    mapped_ = std::exchange(other.mapped_, false);
  }
  return *this;
}

void DdsArray::Release() {
  if (data_ == nullptr) return;
  if (mapped_)
    munmap(data_, bytes_);
  else
    ::operator delete (data_, std::align_val_t{alignment_});
  data_ = nullptr;
  bytes_ = 0;
  mapped_ = false;
}

size_t DdsArray::Discard(size_t begin, size_t end) {
  if (data_ == nullptr || end > bytes_ || begin >= end) return 0;
  // By address: a heap array need not start on a page. A mapping owns its last page whole, a heap
  // array only its own bytes (a DDS under kMapBytes, such as sgdmf's H, whose blocks visit every
  // node in turn under the 2-D rotation, gives their pages back as a mapped one does).
  const uintptr_t page = PageBytes();
  const auto base = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t first = (base + begin + page - 1) / page * page;
  const uintptr_t last =
      (mapped_ && end == bytes_ ? base + end + page - 1 : base + end) / page * page;
  if (first >= last) return 0;
  // MADV_DONTNEED on private memory drops the pages: the next access faults in a zero page (the
  // file's page where MapShared mapped one).
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

bool DdsArray::Publish(int fd, size_t begin, size_t end) const {
  if (fd < 0 || end > bytes_ || begin > end) return false;
  for (size_t at = begin; at < end;) {
    const ssize_t n = pwrite(fd, data_ + at, end - at, static_cast<off_t>(at));
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

size_t DdsArray::MapShared(int fd, size_t begin, size_t end) {
  if (!mapped_ || fd < 0) return 0;
  std::vector<PageState> states;
  if (!ReadPageStates(data_, bytes_, states)) return 0;
  const size_t page = PageBytes();
  const size_t first_whole = (begin + page - 1) / page;
  const size_t end_whole = end == bytes_ ? states.size() : end / page;
  const auto wanted = [&](size_t k) {
    if (states[k] == PageState::kFile) return false;  // mapped already
    return states[k] != PageState::kOwn || (k >= first_whole && k < end_whole);
  };
  // Each run is a mapping of its own in the kernel: a bound keeps a scattered array from using up
  // the process's mappings (the pages past it stay private: more memory, the same bytes).
  constexpr int kMostRuns = 64;
  size_t mapped = 0;
  int runs = 0;
  for (size_t k = 0; k < states.size() && runs < kMostRuns;) {
    if (!wanted(k)) {
      ++k;
      continue;
    }
    size_t stop = k + 1;
    while (stop < states.size() && wanted(stop)) ++stop;
    const size_t offset = k * page;
    const size_t length = std::min(stop * page, bytes_) - offset;
    // MAP_FIXED replaces the pages in place, so data() stays where it was.
    if (mmap(data_ + offset, length, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd, static_cast<off_t>(offset)) == MAP_FAILED)
      break;
    mapped += length;
    ++runs;
    k = stop;
  }
  return mapped;
}

size_t DdsArray::AdviseHugePages(size_t begin, size_t end) {
  if (!mapped_ || end > bytes_ || begin >= end) return 0;
  const auto base = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t first = (base + begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const uintptr_t last = (base + end) / kHugePageBytes * kHugePageBytes;
  if (first >= last) return 0;
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) != 0) return 0;
  return last - first;
}

}  // namespace strads::internal
