// The reports a failing node leaves for `strads replay` (tool/replay_command.cc). Under an MPI
// launcher the first rank to fail aborts the job, which kills the others and may lose their
// stderr, so each rank's report goes to a file in the directory STRADS_REPLAY_REPORTS names:
// node-K.txt for a divergence (the replayer's), node-K.error.txt for any other failure (the
// core's). A rank can be killed while it writes: the file is written under a temporary name and
// renamed, so `strads replay` sees either a whole report or none. Header-only: the `strads` tool
// reads them and links no core library.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace strads {

struct ReplayReport {
  int node;
  bool divergence;  // node-K.txt; else node-K.error.txt
  std::string text;
};

// Writes `report` as node-<node><suffix> in $STRADS_REPLAY_REPORTS; nothing when it is unset.
// Errors are ignored (the report also goes to stderr).
inline void WriteReplayReport(int node, const char* suffix, const std::string& report) {
  const char* dir = std::getenv("STRADS_REPLAY_REPORTS");
  if (dir == nullptr || *dir == '\0') return;
  const std::string path = std::string(dir) + "/node-" + std::to_string(node) + suffix;
  // The temporary name has no ".txt" ending: `strads replay` reads only finished reports.
  const std::string tmp = path + ".partial";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string text = report + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done == text.size()) std::rename(tmp.c_str(), path.c_str());
}

// The finished, non-empty reports in `dir`, by file name (node order). Unfinished ones (a rank
// killed while writing) and empty ones are left out: none may hide the others.
inline std::vector<ReplayReport> ReadReplayReports(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec))
    if (f.path().filename().string().ends_with(".txt")) names.push_back(f.path().filename());
  std::sort(names.begin(), names.end());
  std::vector<ReplayReport> reports;
  for (const std::string& name : names) {
    int node = -1;
    if (std::sscanf(name.c_str(), "node-%d", &node) != 1) continue;
    std::ifstream in(dir + "/" + name);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (text.empty()) continue;
    reports.push_back({node, !name.ends_with(".error.txt"), std::move(text)});
  }
  return reports;
}

}  // namespace strads
