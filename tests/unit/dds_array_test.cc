// DdsArray: large DDS arrays are mapped by the runtime, so their pages become resident only
// where written, whatever the heap did before; Discard gives a cache's pages back.
#include "strads/internal/dds_array.h"

#include <doctest/doctest.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "memory_report.h"
#include "page_map.h"
#include "shared_array_files.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace strads {
namespace {

using internal::DdsArray;

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

TEST_CASE("a large DdsArray gets fresh pages even after the heap freed resident blocks") {
  constexpr size_t kBytes = size_t{16} << 20;
  // The state that made memory_report_test pin glibc: a large block, written and freed, with
  // the mmap threshold raised, so the heap keeps its pages resident for the next request (a
  // heap array of kBytes made here has all of them resident before any write).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  void* block = std::malloc(kBytes);
  REQUIRE(block != nullptr);
  std::memset(block, 1, kBytes);
  asm volatile("" : : "r"(block) : "memory");  // the writes must happen
  std::free(block);
  const DdsArray array(kBytes, 8);
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  malloc_trim(0);
  REQUIRE(array.mapped());
  CHECK(array.bytes() == kBytes);
  CHECK(ResidentBytes(array.data(), kBytes) == 0);
  std::memset(array.data() + 5 * kPage, 7, 3 * kPage);
  CHECK(ResidentBytes(array.data(), kBytes) == 3 * kPage);
}

TEST_CASE("DdsArray::Discard gives whole pages back, which read as zeros") {
  DdsArray array(DdsArray::kMapBytes * 2, 8);
  REQUIRE(array.mapped());
  std::memset(array.data(), 9, 16 * kPage);
  CHECK(ResidentBytes(array.data(), array.bytes()) == 16 * kPage);
  // Only the pages wholly inside the range: [kPage + 1, 10 * kPage + 5) gives back 2..9.
  CHECK(array.Discard(kPage + 1, 10 * kPage + 5) == 8 * kPage);
  CHECK(ResidentBytes(array.data(), array.bytes()) == 8 * kPage);
  CHECK(array.data()[kPage] == std::byte{9});
  CHECK(array.data()[2 * kPage] == std::byte{0});
  CHECK(array.data()[10 * kPage] == std::byte{9});
  CHECK(array.Discard(0, array.bytes() + 1) == 0);  // out of range: nothing
}

std::vector<PageState> PageStatesOf(const DdsArray& array) {
  std::vector<PageState> states;
  REQUIRE(ReadPageStates(array.data(), array.bytes(), states));
  return states;
}

TEST_CASE("arrays sharing a file read an owner's published pages as one copy until they write") {
  const size_t bytes = DdsArray::kMapBytes * 2;
  SharedArrayFiles files;
  const int fd = files.FileFor(3, bytes);
  REQUIRE(fd >= 0);
  CHECK(files.FileFor(3, bytes) == fd);
  CHECK(files.FileFor(3, bytes + 8) == -1);  // nodes that disagree on a length share nothing
  DdsArray owner(bytes, 8), reader(bytes, 8);
  // The owner's range is 16 and a half pages: page 16 is an edge page it shares with the next.
  const size_t owned = 16 * kPage + kPage / 2;
  std::memset(owner.data(), 7, owned);
  REQUIRE(owner.Publish(fd, 0, owned));
  CHECK(owner.MapShared(fd, 0, owned) == bytes - kPage);  // all but the edge page
  CHECK(owner.data()[5 * kPage] == std::byte{7});
  CHECK(PageStatesOf(owner)[5] == PageState::kFile);
  CHECK(PageStatesOf(owner)[16] == PageState::kOwn);
  // A reader that never wrote reads the owner's values from the file: no page of its own.
  CHECK(reader.MapShared(fd, 0, 0) == bytes);
  CHECK(reader.data()[3 * kPage + 10] == std::byte{7});
  CHECK(PageStatesOf(reader)[3] == PageState::kFile);
  // A write makes the page the reader's own; the owner's stays as published.
  reader.data()[4 * kPage] = std::byte{1};
  CHECK(PageStatesOf(reader)[4] == PageState::kOwn);
  CHECK(owner.data()[4 * kPage] == std::byte{7});
  // The owner's later writes reach no reader before it publishes them.
  owner.data()[6 * kPage] = std::byte{9};
  CHECK(reader.data()[6 * kPage] == std::byte{7});
  // Mapping again keeps the pages the reader wrote; Discard turns them back into the file's.
  reader.MapShared(fd, 0, 0);
  CHECK(reader.data()[4 * kPage] == std::byte{1});
  CHECK(reader.Discard(4 * kPage, 5 * kPage) == kPage);
  CHECK(reader.data()[4 * kPage] == std::byte{7});
}

TEST_CASE("a small DdsArray comes from the heap, aligned, and a move hands the memory over") {
  DdsArray small(1000, 64);
  CHECK(!small.mapped());
  REQUIRE(small.data() != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(small.data()) % 64 == 0);
  CHECK(small.Discard(0, 1000) == 0);
  std::byte* const at = small.data();
  DdsArray moved(std::move(small));
  CHECK(moved.data() == at);
  CHECK(small.data() == nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  CHECK(DdsArray(0, 8).data() == nullptr);
}

// A DDS under kMapBytes whose blocks visit nodes (sgdmf's H) must give a departed block's pages
// back as a mapped one does: before, Discard did nothing on a heap array.
TEST_CASE("Discard gives back the whole pages inside a heap array, and only those") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = DdsArray::kMapBytes / 4;
  DdsArray small(bytes, 64);
  REQUIRE(!small.mapped());
  std::memset(small.data(), 7, bytes);
  CHECK(ResidentBytes(small.data(), bytes) >= bytes - page);
  const size_t given = small.Discard(1, bytes - 1);
  CHECK(given >= bytes - 2 * page);  // not the partial pages at either end
  CHECK(ResidentBytes(small.data(), bytes) <= bytes - given + 2 * page);
  CHECK(small.data()[bytes / 2] == std::byte{0});
  // The bytes of a page not wholly inside the range keep their values.
  CHECK(small.data()[0] == std::byte{7});
  CHECK(small.data()[bytes - 1] == std::byte{7});
}

TEST_CASE("a dvector's untouched elements stay out of memory") {
  constexpr int64_t kSize = int64_t{1} << 22;  // 32 MB of doubles
  size_t resident = 0;
  const int rc = testing::RunNodes(1, 1, [&](Runtime& rt) {
    auto& v = MakeDVector<double>(
        rt, kSize, [](int64_t) { return 1.0; }, "v");
    // A node owns the whole vector here; discarding a range it holds only as a cache drops it.
    v.DiscardElements(kSize / 2, kSize);
    resident = ResidentBytes(v.data(), kSize * sizeof(double));
  });
  REQUIRE(rc == 0);
  CHECK(resident <= kSize / 2 * sizeof(double) + kPage);
  CHECK(resident >= kSize / 2 * sizeof(double));
}

// Whether the mapping holding `p` carries MADV_HUGEPAGE ("hg" in its /proc/self/smaps VmFlags).
bool AdvisedHuge(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = at >= begin && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return (line + " ").find(" hg ") != std::string::npos;
    }
  }
  return false;
}

TEST_CASE("DdsArray::AdviseHugePages advises the whole huge pages inside the range only") {
  DdsArray array(8 * DdsArray::kHugePageBytes, 8);
  REQUIRE(array.mapped());
  const auto base = reinterpret_cast<uintptr_t>(array.data());
  // To the first huge page boundary.
  const size_t skip =
      (DdsArray::kHugePageBytes - base % DdsArray::kHugePageBytes) % DdsArray::kHugePageBytes;
  // [skip + 1, skip + 5 huge pages + 1): the huge pages 1..4 after the first boundary.
  CHECK(array.AdviseHugePages(skip + 1, skip + 5 * DdsArray::kHugePageBytes + 1) ==
        4 * DdsArray::kHugePageBytes);
  CHECK(!AdvisedHuge(array.data() + skip));
  CHECK(AdvisedHuge(array.data() + skip + DdsArray::kHugePageBytes));
  CHECK(AdvisedHuge(array.data() + skip + 5 * DdsArray::kHugePageBytes - 1));
  CHECK(!AdvisedHuge(array.data() + skip + 5 * DdsArray::kHugePageBytes));
  // A range that holds no whole huge page, and one past the array.
  CHECK(array.AdviseHugePages(skip + 1, skip + DdsArray::kHugePageBytes) == 0);
  CHECK(array.AdviseHugePages(0, array.bytes() + 1) == 0);
  DdsArray small(1000, 64);
  CHECK(small.AdviseHugePages(0, 1000) == 0);
}

TEST_CASE(
    "a mapped array of a huge page or more starts on one, so all its whole huge pages count") {
  // 2.5 huge pages: at a page-aligned start it could hold a single whole huge page, or none.
  const size_t bytes = 2 * DdsArray::kHugePageBytes + DdsArray::kHugePageBytes / 2;
  for (int k = 0; k < 4; ++k) {  // a few, so that some would start off a boundary by chance
    DdsArray array(bytes, 8);
    REQUIRE(array.mapped());
    CHECK(reinterpret_cast<uintptr_t>(array.data()) % DdsArray::kHugePageBytes == 0);
    CHECK(array.AdviseHugePages(0, bytes) == 2 * DdsArray::kHugePageBytes);
    std::memset(array.data(), 3, bytes);  // the whole length is the array's to write
    CHECK(array.data()[bytes - 1] == std::byte{3});
  }
  DdsArray smaller(DdsArray::kMapBytes + kPage, 8);  // mapped, below a huge page: no slack
  REQUIRE(smaller.mapped());
  CHECK(reinterpret_cast<uintptr_t>(smaller.data()) % kPage == 0);
}

TEST_CASE("a node's owned range is advised huge pages, and only its own pages are resident") {
  constexpr int64_t kSize = int64_t{1} << 23;  // 64 MB of doubles: 32 MB a node
  constexpr size_t kBytes = kSize * sizeof(double);
  std::vector<size_t> resident(2);
  std::vector<int> own_huge(2), other_huge(2);
  const int rc = testing::RunNodes(2, 1, [&](Runtime& rt) {
    auto& v = MakeDVector<double>(
        rt, kSize, [](int64_t i) { return static_cast<double>(i); }, "v");
    const int p = rt.node();
    const int64_t middle = (v.owned_begin() + v.owned_end()) / 2;
    const int64_t elsewhere = p == 0 ? kSize - 1 : 0;  // the other node's range
    own_huge[p] = AdvisedHuge(v.data() + middle);
    other_huge[p] = AdvisedHuge(v.data() + elsewhere);
    resident[p] = ResidentBytes(v.data(), kBytes);
  });
  REQUIRE(rc == 0);
  for (int p = 0; p < 2; ++p) {
    CAPTURE(p);
    CHECK(own_huge[p] == 1);
    CHECK(other_huge[p] == 0);
    // Huge pages hold only owned bytes: the node's resident pages are its half, as with 4 KB.
    CHECK(resident[p] >= kBytes / 2);
    CHECK(resident[p] <= kBytes / 2 + kPage);
  }
}

}  // namespace
}  // namespace strads
