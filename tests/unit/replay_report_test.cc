// The report files a failing rank leaves for `strads replay` (seam/replay_report.h): a rank
// killed while writing must not leave an empty report that hides the other ranks' reports (an
// ASan run under load printed "strads replay: " and nothing else, exit 3: the empty node-0.txt,
// streamed into std::cerr, had set its failbit).
#include "strads/seam/replay_report.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scratch_dir.h"

namespace {

// The reports' directory, named by STRADS_REPLAY_REPORTS while the test runs.
struct ReportDir : strads::testing::ScratchDir {
  ReportDir() : ScratchDir("strads-report-test") {
    ::setenv("STRADS_REPLAY_REPORTS", path.c_str(), 1);
  }
  ~ReportDir() { ::unsetenv("STRADS_REPLAY_REPORTS"); }
  void Put(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
  }
};

}  // namespace

TEST_CASE("replay reports: a rank's report is written whole, under its final name only") {
  ReportDir dir;
  strads::WriteReplayReport(1, ".txt", "replay divergence on node 1");
  strads::WriteReplayReport(0, ".error.txt", "node 0 waited 120 s");
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir.path)) {
    ++files;
    CHECK(f.path().string().ends_with(".txt"));
  }
  CHECK(files == 2);
  const auto reports = strads::ReadReplayReports(dir.path);
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].node == 0);
  CHECK_FALSE(reports[0].divergence);
  CHECK(reports[0].text == "node 0 waited 120 s\n");
  CHECK(reports[1].node == 1);
  CHECK(reports[1].divergence);
}

TEST_CASE("replay reports: empty and unfinished reports are left out, never hiding the others") {
  ReportDir dir;
  dir.Put("node-0.txt", "");  // a rank killed between creating and writing (the old writer)
  dir.Put("node-1.txt.partial", "replay diver");
  dir.Put("node-2.txt", "replay divergence on node 2\n");
  const auto reports = strads::ReadReplayReports(dir.path);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].node == 2);
  CHECK(reports[0].text == "replay divergence on node 2\n");
}
