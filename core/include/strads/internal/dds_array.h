// DdsArray: the memory behind a DDS's full-length array (dds.h's storage model).
//
// An array of at least kMapBytes is mapped by the runtime itself: private and MAP_NORESERVE, so
// the whole length is reserved as address space while a page becomes resident only when it is
// written or fetched into, whatever the allocator did before the DDS was made. Smaller arrays
// come from the heap. Either way the contents start undefined (the operators initialise every
// element a node owns) and `data()[i]` is an index into contiguous memory.
//
// Under `--nodes P` the logical nodes of one process share the pages of owners' values they only
// read: owners copy their values into one memory file per DDS (Publish), every node maps it
// copy-on-write over the pages it never wrote (MapShared), and an element sent to a node whose
// page already holds its bytes is not written (shared_array_files.h; docs/async_for.md, "Memory").
#pragma once

#include <cstddef>

namespace strads::internal {

class DdsArray {
 public:
  // Arrays from this size on are mapped: below it, a page-granular mapping wastes more than
  // the untouched pages it saves.
  static constexpr size_t kMapBytes = size_t{1} << 20;
  // x86-64's and arm64's (4 KB granule) PMD size; elsewhere huge page advice only costs a call.
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  DdsArray() = default;
  // `alignment` (a power of two) applies to a heap array; a mapping is page-aligned, and one of
  // kHugePageBytes or more starts on a multiple of kHugePageBytes. Throws
  // std::bad_alloc if the address space cannot be reserved.
  DdsArray(size_t bytes, size_t alignment);
  ~DdsArray();
  DdsArray(DdsArray&& other) noexcept;
  DdsArray& operator=(DdsArray&& other) noexcept;
  DdsArray(const DdsArray&) = delete;
  DdsArray& operator=(const DdsArray&) = delete;

  std::byte* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  bool mapped() const { return mapped_; }

  // Gives the whole pages inside [begin, end) (byte offsets) back to the kernel, so they stop
  // counting as resident; they read as zeros (or as the shared file, where MapShared mapped it)
  // until written again. For elements a node held only for a while (a cache). A heap array too:
  // a page wholly inside it holds none of the allocator's data. Returns the bytes given back.
  size_t Discard(size_t begin, size_t end);

  // Writes bytes [begin, end) of the array into the memory file `fd` at the same offsets (a node
  // publishes the values of its owned range for the other logical nodes of its process).
  // Returns false if the file could not take them all.
  bool Publish(int fd, size_t begin, size_t end) const;

  // Maps `fd`, copy-on-write, over the pages of the array that hold nothing of this array's own
  // (never written), and over the whole pages inside [begin, end), whose bytes the file holds
  // (just published): those pages then read the file, one physical page for every array mapping
  // it, and a later write makes a page this array's own again. Pages it wrote elsewhere keep
  // their bytes. Only for a mapped array, with no other thread using it. Returns the bytes mapped
  // (0 without a mapping, or if its page tables cannot be read).
  size_t MapShared(int fd, size_t begin, size_t end);

  // Asks the kernel for transparent huge pages (MADV_HUGEPAGE) over the whole huge pages inside
  // bytes [begin, end): the range a node owns, which its operators write whole, so a huge page
  // there holds no byte that would not be resident anyway and the 4 KB page counts of
  // `--memory-report` stay the same. Bodies that read a large array scattered (a schedule's
  // cell order) then take a TLB miss per huge page instead of per 4 KB page. Only for a mapped
  // array; a hint: no effect where the kernel has no huge pages. Returns the bytes advised.
  size_t AdviseHugePages(size_t begin, size_t end);

 private:
  void Release();

  std::byte* data_ = nullptr;
  size_t bytes_ = 0;
  size_t alignment_ = 0;
  bool mapped_ = false;
};

}  // namespace strads::internal
