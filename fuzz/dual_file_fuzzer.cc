// Fuzzes the dual-test file parser (DualFile::Read: `--dual-in` and `strads dualtest`).
// DualFileError is the documented outcome of a bad file.
#include <cstdint>

#include "dual_file.h"
#include "memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strads::fuzz::MemoryFile file(data, size);
  try {
    strads::DualFile::Read(file.path());
  } catch (const strads::DualFileError&) {
  }
  return 0;
}
