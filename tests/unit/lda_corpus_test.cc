// The LDA examples' docword loader (examples/common/lda_corpus.h): a few bytes of file must not
// make it allocate without bound (found by fuzz/docword_fuzzer.cc: 4.8 KB of "1 1 1048576" lines
// asked for 3.2 GB).
#include "common/lda_corpus.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

TEST_CASE("LoadDocword: refuses, naming the line, a count that takes the corpus over the bound") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("strads_lda_corpus_test_" + std::to_string(::getpid()) + ".txt"))
                               .string();
  std::ofstream(path) << "1\n1\n3\n1 1 1048576\n1 1 1048576\n1 1 1048576\n";
  // Three lines of 2^20 tokens: the second one stays under a bound of 2.5 * 2^20, the third not.
  std::string what;
  try {
    examples::LoadDocword(path, 5 << 19);
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  CHECK(what == path + ":6: count 1048576 makes the corpus more than 2621440 tokens, over this " +
                    "machine's memory");
  // Under a bound it reaches, the same file loads.
  CHECK(examples::LoadDocword(path, 3 << 20).tokens.size() == size_t{3} << 20);
  std::filesystem::remove(path);
}
