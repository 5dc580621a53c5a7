#include "memory_report.h"

#include <sys/mman.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "node_context.h"
#include "page_map.h"
#include "strads/internal/dds.h"
#include "strads/internal/dds_array.h"
#include "strads/runtime.h"

namespace strads {

size_t ResidentBytes(const void* p, size_t bytes) {
  if (p == nullptr || bytes == 0) return 0;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page * page;
  std::vector<unsigned char> in_core((end - begin) / page);
  if (mincore(reinterpret_cast<void*>(begin), end - begin, in_core.data()) != 0) return 0;
  size_t resident = 0;
  for (size_t k = 0; k < in_core.size(); ++k)
    if (in_core[k] & 1) resident += page;
  return std::min(resident, bytes);
}

DdsResidency NodeResidency(DdsBase& dds) {
  const size_t eb = dds.element_bytes();
  const size_t length = static_cast<size_t>(dds.size()) * eb;
  const DdsResidency whole{ResidentBytes(dds.raw(), length), 0};
  std::vector<PageState> states;
  if (dds.array() == nullptr || !dds.array()->mapped() ||
      !ReadPageStates(dds.raw(), length, states) ||
      std::find(states.begin(), states.end(), PageState::kFile) == states.end())
    return whole;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t begin = static_cast<size_t>(dds.owned_begin()) * eb;
  const size_t end = static_cast<size_t>(dds.owned_end()) * eb;
  // The owned range by mincore, which sees a page in the shared file wherever it is mapped; the
  // pages wholly outside it by this mapping's page tables.
  DdsResidency r{ResidentBytes(dds.raw() + begin, end - begin), 0};
  for (size_t k = 0; k < states.size(); ++k) {
    if ((k + 1) * page > begin && k * page < end) continue;
    const size_t bytes = std::min(length, (k + 1) * page) - k * page;
    if (states[k] == PageState::kFile)
      r.read_shared += bytes;
    else if (states[k] != PageState::kAbsent)
      r.node += bytes;
  }
  return r;
}

std::string DescribeNodeMemory(Runtime& rt) {
  auto& context = rt.context();
  std::string text;
  char line[320];
  size_t total = 0;
  for (uint32_t d = 0; d < context.dds_count(); ++d) {
    DdsBase& dds = context.dds(d);
    const size_t length = static_cast<size_t>(dds.size()) * dds.element_bytes();
    const size_t owned =
        static_cast<size_t>(dds.owned_end() - dds.owned_begin()) * dds.element_bytes();
    const DdsResidency resident = NodeResidency(dds);
    total += resident.node;
    std::snprintf(line, sizeof line,
                  "memory: node %d dds %u '%s': %zu bytes resident, %zu owned, %zu full length",
                  rt.node(), d, dds.name().c_str(), resident.node, owned, length);
    text += line;
    if (resident.read_shared > 0) {
      std::snprintf(line, sizeof line, ", %zu read from other nodes' shared pages",
                    resident.read_shared);
      text += line;
    }
    text += '\n';
  }
  const size_t plans = context.LoopStateBytes();
  total += plans;
  std::snprintf(line, sizeof line, "memory: node %d loop plans: %zu bytes\n", rt.node(), plans);
  text += line;
  std::snprintf(line, sizeof line, "memory: node %d total: %zu bytes\n", rt.node(), total);
  text += line;
  return text;
}

// Under ASan, TSan or MSan the heap is the sanitizer's, so glibc has no free pages of its own to
// return, and calling malloc_trim there set glibc's arenas up behind the sanitizer's back: a
// logical node's thread then aborted at its exit ("malloc assertion failure in
// __malloc_arena_thread_freeres: a->attached_threads > 0", sgdmf --nodes 4 under ASan).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STRADS_SANITIZER_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define STRADS_SANITIZER_HEAP 1
#endif
#endif

void ReturnFreeHeapPages() {
#if defined(__GLIBC__) && !defined(STRADS_SANITIZER_HEAP)
  malloc_trim(0);
#endif
}

}  // namespace strads
