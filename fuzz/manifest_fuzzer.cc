// Fuzzes the trace reader on a manifest (TraceReader::ReadManifest, the first thing every reader
// of a trace directory calls). TraceError is the documented outcome of a bad manifest.
#include <cstdint>

#include "memory_file.h"
#include "strads/trace/error.h"
#include "strads/trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strads::fuzz::MemoryFile file(data, size);
  try {
    strads::TraceReader::ReadManifest(file.path());
  } catch (const strads::TraceError&) {
  }
  return 0;
}
