// Checkpoints and fast re-execution (docs/checkpoints.md; design.md section 3).
//
// With --checkpoint DIR, every node counts operator invocations (AsyncFor, SyncFor) and, at the
// end of every --checkpoint-every N-th one (or of the first one after --checkpoint-seconds S),
// writes its owned part of every DDS and map (a DDS unchanged since the last checkpoint, by
// version and digest, as a reference to the older node file that holds it), plus what the
// driver cannot recompute (the runtime's random state, the results of the reductions so far), to
// DIR/ckpt-OPS/node-K.ckpt;
// node 0 then writes DIR/ckpt-OPS/MANIFEST, which makes the checkpoint complete, and deletes
// the checkpoints beyond --checkpoint-keep (keeping, as data only, those a kept one refers to).
//
// With --restart DIR or DIR/ckpt-OPS, the driver runs again from the top: the first OPS
// operators are skipped (their bodies never run), reductions return the results they had, and
// at the end of operator OPS every DDS and map is restored from the checkpoint; the run then
// goes on normally.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strads/runtime.h"

namespace strads::internal {

class NodeContext;

// For the message of a failed run: "; last complete checkpoint: DIR/ckpt-N" (or "none") with
// --checkpoint on, else "". Found on disk, so that any node can say it.
std::string LastCheckpointNote(const RuntimeOptions& options);

// What a restart restores, read from one node's checkpoint file (validated).
struct RestoredNode;

class Checkpointer {
 public:
  // Reads and validates the checkpoint to restart from (collective: the nodes agree on
  // errors), or, for a fresh run with --checkpoint, removes the old checkpoints of DIR.
  Checkpointer(Runtime& rt, NodeContext& context);
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Whether any of this is on: when not, every hook below returns at once.
  bool active() const { return active_; }

  // Called where an operator would start, before it does anything. True: a restarted run is
  // still before its checkpoint and the operator must not run (the call counts it, and at the
  // checkpoint's operator restores every DDS and map).
  bool SkipOperator(const char* kind, const char* file, uint32_t line);
  // Whether a driver read of a DDS element should be told about: a restarted run is before its
  // restore point, and no read has been told about yet. (Maps need no note: only driver code
  // and creation operators, which both run again, make or change them.)
  bool NeedsAccessNote() const { return restore_ != nullptr && !access_noted_; }
  // Driver code read `what` ("'beta' element 17") before the restore point, where the DDS hold
  // this run's values, not the checkpointed run's: whatever the driver computes from it can
  // differ from the first run (docs/checkpoints.md, the rule for the driver). Says so on
  // stderr, on node 0 (every node makes the same accesses), once a run.
  void NoteAccessBeforeRestore(const std::string& what);
  // Called at every operator's end (after the ordering policy's OperatorEnd). Collective: may
  // write a checkpoint.
  void OperatorEnded(const char* kind, const char* file, uint32_t line);

  // Reductions (node_services.h): while skipping, a reduction returns the result it had in the
  // checkpointed run; otherwise its result is noted for the next checkpoint.
  bool ReplayedReduction(void* out, size_t bytes);
  void NoteReduction(const void* result, size_t bytes);

  // When the driver returned: a restart that never reached its checkpoint is an error.
  void DriverReturned();

 private:
  void Write();
  void Restore();
  // Returns the complete checkpoints kept (operator counts, ascending).
  std::vector<uint64_t> DeleteBeyondKeep();

  Runtime& rt_;
  NodeContext& context_;
  bool active_ = false;
  bool writes_ = false;     // --checkpoint, not under replay
  uint64_t operators_ = 0;  // operator invocations ended (or skipped) so far on this node
  std::string last_site_;   // kind file:line of the last one
  std::vector<std::vector<std::byte>> reductions_;  // every reduction's result, in order
  size_t replayed_ = 0;                             // reductions_ returned while skipping
  bool access_noted_ = false;                       // NoteAccessBeforeRestore told
  std::chrono::steady_clock::time_point last_write_;
  std::unique_ptr<RestoredNode> restore_;  // null once restored (or not restarting)
  // Per DDS id, where its bytes were last stored and what they were: a checkpoint refers to
  // them instead of writing the DDS again while its version and digest stay the same.
  struct HeldPart {
    bool valid = false;
    uint64_t version = 0, digest = 0, length = 0;
    uint64_t holder = 0, offset = 0;  // the checkpoint whose node file has them, and where
  };
  std::vector<HeldPart> held_;
  // Node 0's account of the checkpoints written (STRADS_CHECKPOINT_STATS): count, the time from
  // the start of its write to its manifest, the bytes of all nodes' files.
  uint64_t written_ = 0, written_bytes_ = 0, first_bytes_ = 0, referenced_bytes_ = 0;
  double written_seconds_ = 0;
};

}  // namespace strads::internal
