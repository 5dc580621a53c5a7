// Fuzzes the dual-test file parser (DualFile::Read: `--dual-in` and `strads dualtest`), as a
// finished run's file and as a stopped run's (Ending::kStopped: dualtest's serial run).
// DualFileError is the documented outcome of a bad file.
#include <cstdint>

#include "dual_file.h"
#include "memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strads::fuzz::MemoryFile file(data, size);
  for (const auto ending :
       {strads::DualFile::Ending::kComplete, strads::DualFile::Ending::kStopped})
    try {
      strads::DualFile::Read(file.path(), ending);
    } catch (const strads::DualFileError&) {
    }
  return 0;
}
