// Fuzzes the UCI bag-of-words loader of the LDA examples (examples::LoadDocword, `lda --data`).
// std::runtime_error "path:line: what" is the documented outcome of a bad file.
#include <cstdint>
#include <stdexcept>

#include "common/lda_corpus.h"
#include "memory_file.h"

// 8 MB of tokens: the bound LoadDocword checks, small so that each input runs fast.
constexpr int64_t kMaxTokens = int64_t{1} << 20;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strads::fuzz::MemoryFile file(data, size);
  try {
    examples::LoadDocword(file.path(), kMaxTokens);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
