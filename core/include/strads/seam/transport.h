// Transport: the one virtual seam between the runtime and the wire (after ps-lite's Van).
// Two implementations: MpiTransport (one node per MPI rank) and InProcessTransport (P logical
// nodes as threads of one process, `--nodes P`). Everything above this seam is identical in
// both, so the partitioning, the schedule and the message flow do not depend on which is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strads/seam/wait_bound.h"

namespace strads {

// Message kinds. Each kind is received only by code that expects it, in program order, so
// the pair (source, kind) identifies a FIFO stream (MPI's non-overtaking rule).
enum class Tag : int {
  kCollective = 1,  // collectives.h
  kExchange = 2,    // block hand-over between rounds of AsyncFor
  kDelta = 3,       // delta pushes to owners, delivered in arrival order (through the seam)
  kSyncFor = 4,     // data-parallel engine
  kWaitNotice = 5,  // "I wait for your message here" (collectives.h), outside every order
  kUser = 16,       // first tag free for extensions
};

struct Message {
  int source = -1;
  Tag tag = Tag::kCollective;
  uint64_t seq = 0;  // per (source, destination, tag) sequence number, from 0
  std::vector<std::byte> payload;
};

inline constexpr int kAnySource = -1;

// The TimeoutError text of a Receive that waited too long.
inline std::string ReceiveTimeoutMessage(int node, double seconds, Tag tag, int source) {
  return "node " + std::to_string(node) + " waited " + WaitText(seconds) + " for a message (tag " +
         std::to_string(static_cast<int>(tag)) + ") from " +
         (source == kAnySource ? std::string("any node") : "node " + std::to_string(source));
}

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int node() const = 0;
  virtual int nodes() const = 0;

  // Queues `payload` for `dest` and returns without waiting for the receiver.
  virtual void Send(int dest, Tag tag, std::vector<std::byte> payload) = 0;

  // Blocks until a message with `tag` from `source` arrives (kAnySource: whichever arrives
  // first; only the ordering seam may ask for that). Waits at most `timeout_seconds`, then
  // throws TimeoutError naming what it waited for; throws AbortedError if another node failed.
  virtual Message Receive(int source, Tag tag, double timeout_seconds) = 0;

  // True if a `tag` message from `source` (kAnySource: any) has arrived, so that Receive would
  // return at once. Never blocks. Asked by the ordering seam's live choices and by a
  // collective's long wait (collectives.h), whose answers change only which error is raised.
  virtual bool Poll(int source, Tag tag) = 0;

  // Tells the other nodes that this node failed, so that they stop waiting for it. A transport
  // that ends the whole job (MPI) makes `exit_code` the job's exit status.
  virtual void Abort(const char* why, int exit_code) noexcept = 0;
};

}  // namespace strads
