// Trace events: what the Record policy appends and what a TraceReader returns (design.md
// section 5). The byte layout on disk is described in recorder/FORMAT.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace strads {

// The trace format version this library writes and the only one it reads. Equal to
// FormatVersion.Current in recorder/trace.fbs (checked at compile time).
inline constexpr uint32_t kTraceFormatVersion = 1;

enum class EventKind : uint8_t {
  // A thread was granted a lock. a = lock id, b = task (loop index), c = per-lock grant sequence
  // number (0, 1, 2, ... for each lock id separately), d = 0.
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
};

// One ordering event of one node. `thread` is the node-local thread index. Fields not used by a
// kind should be 0 (they are recorded exactly anyway; 0 costs nothing after compression).
struct Event {
  EventKind kind = EventKind::kLockGrant;
  uint32_t thread = 0;
  uint64_t a = 0, b = 0, c = 0, d = 0;

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

// A trace (or a file in it) cannot be written or read. The message names the file, the byte
// offset when there is one, and what was wrong.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace strads
