// Fuzzes the rating loaders of the SGD-MF examples: sgdmf's `--data` path (strads::ReadFromFile
// with examples::ParseRatingLine, on two logical nodes so that the file is split) and the serial
// programs' examples::LoadRatingsFile. Errors naming the file and line are the documented outcome.
#include <cstdint>
#include <stdexcept>

#include "common/ratings.h"
#include "memory_file.h"
#include "run_loader.h"
#include "strads/operators.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strads::fuzz::MemoryFile file(data, size);
  try {
    examples::LoadRatingsFile(file.path());
  } catch (const std::runtime_error&) {
  }
  strads::fuzz::RunLoader(2, [&](strads::Runtime& rt) {
    strads::ReadFromFile<examples::Rating>(rt, file.path(), examples::ParseRatingLine);
  });
  return 0;
}
