#include "strads/trace/segments.h"

#include <algorithm>
#include <filesystem>

#include "strads/trace/error.h"

namespace strads {

namespace fs = std::filesystem;

std::string NodeLogPath(const std::string& dir, int node, uint64_t segment) {
  const std::string stem = dir + "/node-" + std::to_string(node);
  return segment == 0 ? stem + ".log" : stem + ".from-" + std::to_string(segment) + ".log";
}

namespace {

// N of "node-K.from-N.log" (K = `node`), or 0 when `name` is no such file.
uint64_t SegmentOfName(const std::string& name, int node) {
  const std::string prefix = "node-" + std::to_string(node) + ".from-";
  if (name.rfind(prefix, 0) != 0 || !name.ends_with(".log")) return 0;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 4);
  if (digits.empty() || digits.size() > 19 || digits[0] == '0') return 0;
  uint64_t n = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

std::string List(const std::vector<uint64_t>& values) {
  std::string s;
  for (const uint64_t v : values) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

}  // namespace

std::vector<SegmentFile> NodeSegments(const std::string& dir, const ManifestInfo& manifest,
                                      int node, uint64_t from) {
  std::vector<uint64_t> starts = manifest.segments;
  if (starts.empty()) starts.push_back(0);
  std::error_code ec;
  std::vector<uint64_t> later;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const uint64_t n = SegmentOfName(entry.path().filename().string(), node);
    if (n > starts.back()) later.push_back(n);
  }
  std::sort(later.begin(), later.end());
  starts.insert(starts.end(), later.begin(), later.end());
  auto first = starts.begin();
  if (from != kFirstHeldSegment) {
    first = std::find(starts.begin(), starts.end(), from);
    if (first == starts.end())
      throw TraceError(dir + ": no segment of node " + std::to_string(node) +
                       "'s log starts after operator " + std::to_string(from) +
                       " (segments held: after operators " + List(starts) + ")");
  }
  std::vector<SegmentFile> files;
  for (auto it = first; it != starts.end(); ++it)
    files.push_back({*it, NodeLogPath(dir, node, *it)});
  return files;
}

uint64_t FirstHeldOperator(const ManifestInfo& manifest) {
  return manifest.segments.empty() ? 0 : manifest.segments.front();
}

std::string HeldNote(const std::string& dir, const ManifestInfo& manifest) {
  const uint64_t first = FirstHeldOperator(manifest);
  if (first == 0) return "";
  return dir + " holds the run after operator " + std::to_string(first) +
         " only: its earlier segments were deleted with their checkpoints (--checkpoint-keep); "
         "replay it from checkpoint " +
         std::to_string(first) + " (strads replay --from-checkpoint " + std::to_string(first) +
         " " + dir + " -- ...)";
}

}  // namespace strads
