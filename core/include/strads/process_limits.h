// Bounds of one process's runtime flags, shared by the runtime (core/src/run.cc) and `strads
// replay --single-process`, which must refuse a trace the program would refuse, by the trace's
// name rather than by a flag the user never passed.
#pragma once

namespace strads {

inline constexpr int kMaxLocalNodes = 256;       // --nodes: logical nodes in one process
inline constexpr int kMaxThreadsPerNode = 1024;  // --threads

}  // namespace strads
