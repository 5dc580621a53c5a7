#include "strads/internal/dds_array.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>
#include <utility>

namespace strads::internal {

namespace {
size_t PageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}
}  // namespace

DdsArray::DdsArray(size_t bytes, size_t alignment) : bytes_(bytes), alignment_(alignment) {
  if (bytes == 0) return;
  if (bytes < kMapBytes) {
    data_ = static_cast<std::byte*>(::operator new (bytes, std::align_val_t{alignment}));
    return;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::byte*>(p);
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
  if (!mapped_ || end > bytes_ || begin >= end) return 0;
  const size_t page = PageBytes();
  const size_t first = (begin + page - 1) / page * page;
  const size_t last = end == bytes_ ? (end + page - 1) / page * page : end / page * page;
  if (first >= last) return 0;
  // MADV_DONTNEED on a private anonymous mapping drops the pages: the next access faults in a
  // zero page.
  if (madvise(data_ + first, last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

}  // namespace strads::internal
