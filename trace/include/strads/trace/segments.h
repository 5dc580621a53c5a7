// Node logs cut into segments at checkpoints (trace/FORMAT.md, "segments"): which files a
// trace directory holds for a node, in order. A recording without checkpoints has one segment,
// node-K.log; with them, each checkpoint after operator N starts node-K.from-N.log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strads/trace/manifest.h"

namespace strads {

// DIR/node-K.log for segment 0, DIR/node-K.from-N.log for the segment that starts after
// operator N.
std::string NodeLogPath(const std::string& dir, int node, uint64_t segment = 0);

struct SegmentFile {
  uint64_t start = 0;  // the operator count the segment starts after (0: the run's start)
  std::string path;
};

// The segments of node `node`'s log that `dir` holds, in order: the manifest's list, then any
// later node-K.from-N.log on disk (cut by a run that died before its manifest listed it). With
// `from` set, only the segments from the one starting after operator `from` on; a trace
// without that segment is a TraceError naming what it holds.
inline constexpr uint64_t kFirstHeldSegment = ~uint64_t{0};
std::vector<SegmentFile> NodeSegments(const std::string& dir, const ManifestInfo& manifest,
                                      int node, uint64_t from = kFirstHeldSegment);

// The first operator count the trace holds events after: 0 unless its first segments were
// deleted with their checkpoints (--checkpoint-keep).
uint64_t FirstHeldOperator(const ManifestInfo& manifest);

// "" for a trace that holds its run from the start; otherwise a sentence saying what it holds
// and how to replay it (from its oldest checkpoint), for every reader to print.
std::string HeldNote(const std::string& dir, const ManifestInfo& manifest);

}  // namespace strads
