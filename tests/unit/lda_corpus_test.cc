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

TEST_CASE(
    "LoadDocword: refuses, naming the header line, a D or W whose count rows exceed the bound") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("strads_lda_rows_test_" + std::to_string(::getpid()) + ".txt"))
                               .string();
  // A bound of 2^20 tokens is 2^20 * sizeof(Token) bytes of topic-count rows.
  const int64_t bound = int64_t{1} << 20;
  const int64_t max_rows = bound / static_cast<int64_t>(sizeof(examples::TopicRow)) *
                           static_cast<int64_t>(sizeof(examples::Token));
  const auto refusal = [&](const std::string& text) {
    std::ofstream(path) << text;
    try {
      examples::LoadDocword(path, bound);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  const std::string rows = std::to_string(max_rows + 1);
  CHECK(refusal(rows + "\n1\n1\n1 1 1\n") ==
        path + ":1: document count D " + rows + " needs that many rows of " +
            std::to_string(sizeof(examples::TopicRow)) + "-byte topic counts, more than " +
            std::to_string(max_rows) + ", over this machine's memory");
  CHECK(refusal("1\n" + rows + "\n1\n1 1 1\n")
            .starts_with(path + ":2: vocabulary size W " + rows + " needs that many rows"));
  // At the bound itself the header is accepted.
  CHECK(refusal(std::to_string(max_rows) + "\n1\n1\n1 1 1\n") == "loaded");
  std::filesystem::remove(path);
}
