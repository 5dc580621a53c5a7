// DualFile: the validated reader of dual-test files that the runtime's --dual-in and `strads
// dualtest` share (the defects DualTrace reports come from it: dual_trace_test.cc).
#include "dual_file.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

// Writes `text` to a fresh file named `name`, removed at the end of the test.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() /
              ("strads_dual_file_test_" + std::to_string(::getpid()) + "_" + name))
                 .string()) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("DualFile: reads workers, orders and states as written") {
  const TempFile file("ok.dual",
                      "strads-dual 1\n"
                      "workers 4 2\n"
                      "asyncfor 0 10 12 order a.cc:3\n12\n10\n11\n"
                      "state asyncfor 0 0000000000001234 a.cc:3\n"
                      "state syncfor 0 00000000deadbeef src/b.cc:9\n"
                      "asyncfor 1 10 12 same a.cc:3\n"
                      "state asyncfor 1 ffffffffffffffff a.cc:3\n"
                      "end\n");
  const strads::DualFile dual = strads::DualFile::Read(file.path);
  REQUIRE(dual.workers.has_value());
  CHECK(dual.workers->nodes == 4);
  CHECK(dual.workers->threads == 2);
  REQUIRE(dual.orders.size() == 1);
  const auto& orders = dual.orders.at("a.cc:3");
  REQUIRE(orders.size() == 2);
  CHECK(*orders[0].indices == std::vector<int64_t>{12, 10, 11});
  CHECK(orders[0].line == 3);
  CHECK(orders[1].indices == orders[0].indices);  // `same`: the previous invocation's order
  CHECK(orders[1].line == 9);
  REQUIRE(dual.states.size() == 3);
  CHECK(dual.states[0].loop == "asyncfor");
  CHECK(dual.states[0].digest == 0x1234);
  CHECK(dual.states[1].loop == "syncfor");
  CHECK(dual.states[1].invocation == 0);
  CHECK(dual.states[1].digest == 0xdeadbeef);
  CHECK(dual.states[1].site == "src/b.cc:9");
  CHECK(dual.states[2].invocation == 1);
  CHECK(dual.states[2].digest == UINT64_MAX);
}

TEST_CASE("DualFile: CRLF line ends read like LF ones") {
  const TempFile crlf("crlf.dual",
                      "strads-dual 1\r\nworkers 2 1\r\nasyncfor 0 10 11 order a.cc:3\r\n11\r\n"
                      "10\r\nstate asyncfor 0 0000000000001234 a.cc:3\r\nend\r\n");
  const strads::DualFile dual = strads::DualFile::Read(crlf.path);
  REQUIRE(dual.workers.has_value());
  CHECK(dual.workers->threads == 1);
  CHECK(*dual.orders.at("a.cc:3")[0].indices == std::vector<int64_t>{11, 10});
  REQUIRE(dual.states.size() == 1);
  CHECK(dual.states[0].site == "a.cc:3");
}

TEST_CASE("DualFile: a defect is a DualFileError naming the file and the line") {
  const TempFile upper(
      "upper.dual", "strads-dual 1\nworkers 2 1\nstate syncfor 0 00000000DEADBEEF b.cc:9\nend\n");
  CHECK_THROWS_WITH_AS(strads::DualFile::Read(upper.path),
                       doctest::Contains("upper.dual:3: expected 'state"), strads::DualFileError);
  const TempFile truncated("truncated.dual", "strads-dual 1\nworkers 2 1\n");
  CHECK_THROWS_WITH_AS(strads::DualFile::Read(truncated.path),
                       doctest::Contains("truncated.dual:2: truncated: no 'end' line"),
                       strads::DualFileError);
  // Cut inside the index 11: "1" is a valid index of 10..12 (it was "index repeated" or taken).
  const TempFile cut("cut.dual", "strads-dual 1\nasyncfor 0 10 12 order a.cc:3\n12\n10\n1");
  CHECK_THROWS_WITH_AS(strads::DualFile::Read(cut.path),
                       doctest::Contains("cut.dual:5: truncated: the file ends inside this line"),
                       strads::DualFileError);
  CHECK_THROWS_WITH_AS(strads::DualFile::Read(upper.path + ".none"),
                       doctest::Contains(".none: cannot open"), strads::DualFileError);
}

TEST_CASE("DualFile: a stopped run's file gives its records before the cut, defects still throw") {
  using Ending = strads::DualFile::Ending;
  // A run stopped by an error after its first loop, inside the order of the second.
  const TempFile stopped("stopped.dual",
                         "strads-dual 1\nworkers 1 1\nasyncfor 0 10 11 order a.cc:3\n11\n10\n"
                         "state asyncfor 0 0000000000001234 a.cc:3\n"
                         "asyncfor 1 10 12 order a.cc:3\n12\n1");
  CHECK_THROWS_AS(strads::DualFile::Read(stopped.path), strads::DualFileError);
  const strads::DualFile dual = strads::DualFile::Read(stopped.path, Ending::kStopped);
  CHECK_FALSE(dual.ended);
  REQUIRE(dual.states.size() == 1);
  CHECK(dual.states[0].digest == 0x1234);
  CHECK(dual.orders.at("a.cc:3").size() == 1);  // the cut order is not taken
  // Cut inside a site's first order: the site is not listed, not listed empty.
  const TempFile first_cut("first_cut.dual",
                           "strads-dual 1\nworkers 1 1\nasyncfor 0 10 12 order b.cc:5\n12\n1");
  CHECK(strads::DualFile::Read(first_cut.path, Ending::kStopped).orders.count("b.cc:5") == 0);
  // Stopped before any loop ended: no state.
  const TempFile early("early.dual", "strads-dual 1\nworkers 1 1\n");
  CHECK(strads::DualFile::Read(early.path, Ending::kStopped).states.empty());
  // A complete file reads as before, ended.
  const TempFile complete("complete.dual", "strads-dual 1\nend\n");
  CHECK(strads::DualFile::Read(complete.path, Ending::kStopped).ended);
  // A defect before the cut is no stop.
  const TempFile bad("bad.dual", "strads-dual 1\nstate asyncfor x 12 a.cc:3\n");
  CHECK_THROWS_WITH_AS(strads::DualFile::Read(bad.path, Ending::kStopped),
                       doctest::Contains("bad.dual:2: expected 'state"), strads::DualFileError);
}
