// The machine's physical memory, the bound the example loaders check sizes from a data file
// against before allocating (docs/threat_model.md, promise 1).
#pragma once

#include <unistd.h>

#include <cstdint>

namespace examples {

// Bytes of physical memory, or INT64_MAX if the system does not say.
inline int64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return INT64_MAX;
  return static_cast<int64_t>(pages) * page;
}

}  // namespace examples
