// Fuzzes mlr's LIBSVM loader (`mlr --data`): strads::ReadFromFile with examples::ParseLibsvm and
// mlr's default --classes and --features, on two logical nodes so that the file is split.
#include <cstdint>

#include "common/libsvm.h"
#include "memory_file.h"
#include "run_loader.h"
#include "strads/operators.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strads::fuzz::MemoryFile file(data, size);
  strads::fuzz::RunLoader(2, [&](strads::Runtime& rt) {
    strads::ReadFromFile<examples::Sample>(rt, file.path(), [](std::string_view line) {
      return examples::ParseLibsvm(line, /*classes=*/10, /*features=*/1000);
    });
  });
  return 0;
}
