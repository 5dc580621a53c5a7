// PageStates: what this process's page tables hold for each page of a range
// (/proc/self/pagemap), so that a node can tell the pages it wrote from those it maps from a
// shared file, and report them apart (shared_array_files.h, memory_report.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strads {

enum class PageState : uint8_t {
  kAbsent,  // no page yet
  kZero,    // read, never written: the kernel's zero page
  kOwn,     // a page of this mapping alone (written, copy-on-write)
  kFile,    // a page of a file, which other mappings may map too
};

// The state of each page that [p, p + bytes) overlaps, in order; false (and `out` empty) if
// the page tables cannot be read.
bool ReadPageStates(const void* p, size_t bytes, std::vector<PageState>& out);

}  // namespace strads
