// DdsArray: large DDS arrays are mapped by the runtime, so their pages become resident only
// where written, whatever the heap did before; Discard gives a cache's pages back.
#include "strads/internal/dds_array.h"

#include <doctest/doctest.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "memory_report.h"
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

}  // namespace
}  // namespace strads
