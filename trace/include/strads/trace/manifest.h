// The manifest of a trace directory (DIR/manifest): what was run, on how many nodes, and whether
// the run ended normally. Format: trace/FORMAT.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strads/trace/event.h"

namespace strads {

// Name and FNV-1a 64 of one input file of the run.
struct InputChecksum {
  std::string path;
  uint64_t fnv1a64 = 0;
  uint64_t size = 0;

  friend bool operator==(const InputChecksum&, const InputChecksum&) = default;
};

// The contents of DIR/manifest.
struct ManifestInfo {
  uint32_t format_version = kTraceFormatVersion;
  std::string program;
  std::string build_id;
  std::vector<std::string> arguments;
  uint32_t node_count = 1;
  uint32_t threads_per_node = 1;
  std::vector<InputChecksum> inputs;
  uint64_t start_time_ns = 0;
  bool clean_close = false;
  // Chosen at random when the recording starts; every chunk of every node log carries it.
  uint64_t run_id = 0;
  // A recording with checkpoints (docs/checkpoints.md) cuts each node log into segments at
  // them: `segments` lists the segments the trace holds by the operator count they start after
  // (0: node-K.log, N: node-K.from-N.log), ascending; empty for a log that was never cut.
  // `checkpoints` lists the complete checkpoints of `checkpoint_dir` (absolute) among them.
  std::string checkpoint_dir;
  std::vector<uint64_t> segments;
  std::vector<uint64_t> checkpoints;

  friend bool operator==(const ManifestInfo&, const ManifestInfo&) = default;
};

// Writes DIR/manifest atomically (DIR/manifest.tmp, fsync, rename).
class ManifestWriter {
 public:
  ManifestWriter(std::string dir, ManifestInfo info);
  // Writes the manifest with clean_close = false. Call when the run starts.
  void WriteStart();
  // Rewrites it with clean_close = true. Call when the run ended normally.
  void WriteCleanClose();
  // Rewrites it with the segments and checkpoints the trace holds now (ManifestInfo).
  void WriteSegments(std::string checkpoint_dir, std::vector<uint64_t> segments,
                     std::vector<uint64_t> checkpoints);
  const ManifestInfo& info() const { return info_; }

  // Writes `info` as given (tests use it to write other versions or flags).
  static void Write(const std::string& dir, const ManifestInfo& info);
  // "size=<bytes>;mtime_ns=<ns>" of /proc/self/exe: cheap, changes on every relink.
  static std::string BuildIdOfSelf();
  static std::string ProgramOfSelf();                          // readlink(/proc/self/exe)
  static InputChecksum ChecksumFile(const std::string& path);  // throws TraceError
  static uint64_t NowNs();                                     // ns since the Unix epoch
  static uint64_t NewRunId();  // 64 random bits (getrandom), never 0

 private:
  std::string dir_;
  ManifestInfo info_;
};

}  // namespace strads
