// MemoryReport: the bytes a node's runtime holds, for --memory-report (each node, on stderr,
// when its driver returns): per DDS the resident part of its array (the pages the kernel has
// made resident, so untouched pages count nothing) beside its owned share, and the loop plans.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace strads {

class Runtime;

// Bytes of [p, p + bytes) in resident pages (whole pages: a page shared with a neighbouring
// allocation counts), at most `bytes`.
size_t ResidentBytes(const void* p, size_t bytes);

// Heap bytes of a vector, and of the vectors in it.
template <class T>
size_t HeapBytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
template <class T>
size_t HeapBytes(const std::vector<std::vector<T>>& v) {
  size_t bytes = v.capacity() * sizeof(std::vector<T>);
  for (const auto& inner : v) bytes += HeapBytes(inner);
  return bytes;
}

class DdsBase;

// A node's resident bytes of a DDS's array. `node`: the pages it holds for itself: of its owned
// range (in its own pages, or in the shared file where it published them: ShareOwnersPages) and
// the pages it wrote elsewhere. `read_shared`: pages of other nodes' ranges it maps from their
// shared file, one physical copy in the process, counted at their owners. Without shared pages,
// `node` is ResidentBytes of the whole array.
struct DdsResidency {
  size_t node = 0;
  size_t read_shared = 0;
};
DdsResidency NodeResidency(DdsBase& dds);

// The node's report: one line per DDS, one for the loop plans, one total.
std::string DescribeNodeMemory(Runtime& rt);

// Gives the whole free pages of every malloc arena of the process back to the kernel (glibc's
// malloc_trim; elsewhere, and under a sanitizer, nothing). Memory a thread frees in the middle of
// its arena stays resident until then: under --nodes 64, AsyncFor planning's messages and tables,
// freed by the time a loop runs, kept about 10 MB more resident through the first call's peak.
void ReturnFreeHeapPages();

}  // namespace strads
