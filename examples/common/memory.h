// The machine's physical memory, the bound the example loaders check sizes from a data file
// against before allocating (docs/threat_model.md, promise 1).
#pragma once

#include <unistd.h>

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace examples {

// Bytes of physical memory, or INT64_MAX if the system does not say.
inline int64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return INT64_MAX;
  return static_cast<int64_t>(pages) * page;
}

// Throws std::runtime_error if `bytes` (a lower bound of what the program is about to build,
// counted in double so that no product of flags overflows) exceed this machine's memory: a
// synthetic problem sized by flags is refused before it is made, as a data file's sizes are,
// rather than grown until the kernel kills the process. `what` names the flags.
inline void CheckFitsInMemory(const std::string& what, double bytes) {
  const int64_t memory = PhysicalMemoryBytes();
  if (bytes <= static_cast<double>(memory)) return;
  char text[160];
  std::snprintf(text, sizeof text, " needs at least %.3g GB, over this machine's memory of %.1f GB",
                bytes / 1e9, static_cast<double>(memory) / 1e9);
  throw std::runtime_error(what + text);
}

// The same, with `what()` called only for the refusal: a name that costs a pass over a file.
template <std::invocable What>
void CheckFitsInMemory(What&& what, double bytes) {
  if (bytes > static_cast<double>(PhysicalMemoryBytes())) CheckFitsInMemory(what(), bytes);
}

}  // namespace examples
