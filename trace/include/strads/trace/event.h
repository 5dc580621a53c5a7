// Trace events: what the Record policy appends and what a TraceReader returns (design.md
// section 5). The byte layout on disk is described in trace/FORMAT.md.
#pragma once

#include <cstdint>
#include <string>

#include "strads/trace/error.h"

namespace strads {

// The trace format version this library writes and the only one it reads. Equal to
// FormatVersion.Current in trace/trace.fbs (checked at compile time).
inline constexpr uint32_t kTraceFormatVersion = 5;

enum class EventKind : uint8_t {
  // A thread was granted a lock last released by another thread, and no earlier logged grant
  // of this thread already orders it after that release (FORMAT.md, "which lock grants are
  // logged"). a = lock id, b = task (loop index), c = thread e's acquire count at that release,
  // d = this grant's acquire number (1 for the thread's first grant on this node; every grant
  // counts, logged or not), e = the releasing thread. Grants without an event are implied, and
  // the kThreadDigest events check them.
  kLockGrant = 1,
  // This node handled a message. a = source node, b = the source's sequence number for the
  // message, c = tag, d = 0.
  kDelivery = 2,
  // Any other runtime choice. a = choice point (strads::ChoicePoint), b = chosen value, c = d = 0.
  kChoice = 3,
  // An operator call started / finished. a = site id (see DefineSite), b = invocation number
  // (how many times the site ran before), c = d = 0.
  kOperatorBegin = 4,
  kOperatorEnd = 5,
  // Written just before an kOperatorEnd for each thread that acquired locks since its previous
  // digest: `thread` = that worker thread, a = its acquire count so far, b = a digest of every
  // (lock id, task) it acquired so far (FORMAT.md, "thread digest"), c = d = 0.
  kThreadDigest = 6,
  // This node read part of an input file. a = site id of the path (a site of kind "input", line
  // 0), b = byte offset, c = byte count, d = FNV-1a 64 of the bytes.
  kInput = 7,
};

// One ordering event of one node. `thread` is the node-local thread index. Fields not used by a
// kind should be 0 (they are recorded exactly anyway; 0 costs nothing after compression); `e` is
// used by lock grants only and is at most 32 bits.
struct Event {
  EventKind kind = EventKind::kLockGrant;
  uint32_t thread = 0;
  uint64_t a = 0, b = 0, c = 0, d = 0, e = 0;

  friend bool operator==(const Event&, const Event&) = default;
};

// An operator call site, named by the id that kOperatorBegin/kOperatorEnd events carry.
struct TraceSite {
  uint32_t id = 0;
  std::string kind;  // "AsyncFor", "SyncFor", ...
  std::string file;
  uint32_t line = 0;

  friend bool operator==(const TraceSite&, const TraceSite&) = default;
};

// Short lower-case name of a kind ("lock_grant", ...); "unknown" for values outside the enum.
const char* EventKindName(EventKind kind);

}  // namespace strads
