// Fuzzes the trace reader on a node log (TraceReader::ReadNodeLog, what `strads trace`, replay
// and gdb call): the bytes are the whole node-K.log file. TraceError is the documented outcome
// of a bad log; anything else (a crash, a sanitizer report, another exception) is a finding.
// Random bytes rarely pass the chunk checksums: node_log_fixed_fuzzer.cc reaches the decoder.
#include <cstdint>

#include "memory_file.h"
#include "strads/trace/error.h"
#include "strads/trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strads::fuzz::MemoryFile file(data, size);
  try {
    strads::TraceReader::ReadNodeLog(file.path(), 0);
  } catch (const strads::TraceError&) {
  }
  return 0;
}
