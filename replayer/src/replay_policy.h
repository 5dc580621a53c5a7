// ReplayOrderingPolicy: makes a node take every ordering decision the way the recording did
// (design.md section 6). Registered as mode "replay": STRADS_REPLAY=DIR makes every node of a
// program linked with strads::strads replay DIR/node-K.log.
//
//   lock grants   a logged grant (thread t, lock L, after acquire c of thread u) waits until L's
//                 last grant is u's acquire c, and then takes L; an unlogged one takes L when
//                 it is free, and L's last grant must be one that t has already been ordered
//                 after (by its earlier logged grants or the operator start).
//   deliveries    NextSource names the recorded source; Delivered checks its sequence number.
//   choices       Choose returns the recorded value.
//   operators     begin/end must match the recorded site and invocation; at each end every
//                 thread's acquire count and digest must match, and then the digest of what
//                 the operator wrote on this node (its outcome).
//   inputs        the bytes a node reads must have the recorded size and FNV-1a 64 (under
//                 another path they are the same input: a note).
//
// Anything else is a divergence: DivergenceError with a report naming the node, the thread, the
// event index in node-K.log, the expected and the actual event and the operator. Every wait is
// bounded by the runtime's --timeout, and a divergence in one thread ends the waits of the
// others, so a replay never hangs.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "strads/seam/ordered_locks.h"
#include "strads/seam/ordering.h"
#include "strads/seam/policy_registry.h"
#include "strads/trace/event.h"
#include "strads/trace/reader.h"

namespace strads {

class ReplayOrderingPolicy : public OrderingPolicy, private OrderedLocks::Policy {
 public:
  // Reads DIR/manifest and DIR/node-K.log. Throws DivergenceError (collective) when the run's
  // node or thread count differs from the recording's, UsageError when the trace is unreadable.
  ReplayOrderingPolicy(const PolicyNode& node, const std::string& dir);
  ~ReplayOrderingPolicy() override;

  const char* mode() const override { return "replay"; }
  InlineLocks inline_locks() override { return {InlineLocks::kOrdered, &locks_}; }
  int NextSource(Tag tag) override;
  void Delivered(const Message& message) override;
  uint64_t Choose(ChoicePoint point, uint64_t live_value) override;
  void Input(const std::string& path, uint64_t offset, std::span<const std::byte> bytes) override;
  void OperatorBegin(const OperatorSite& site) override;
  void OperatorEnd(const OperatorSite& site) override;
  void OperatorOutcome(const OperatorSite& site, FunctionRef<uint64_t()> digest) override;
  void Restored(uint64_t operators) override;
  void Finish(bool ok) override;

  // STRADS_REPLAY_FROM_CHECKPOINT=N (strads replay --from-checkpoint): the program restarts
  // from checkpoint N (STRADS_RESTART) and the replay follows the trace's segments from N on.
  // Until the restart restored the checkpoint, the program's calls are not replayed (its
  // inputs were read before the checkpoint, in segments that may be gone); after it, per-site
  // invocation numbers and per-source message numbers are matched by their offset at their
  // first use (the restarted run counts them from 0), everything else exactly.
  static constexpr const char* kFromCheckpointVariable = "STRADS_REPLAY_FROM_CHECKPOINT";

 private:
  // A logged lock grant of one thread.
  struct Grant {
    uint64_t acquire;  // the thread's acquire number
    uint64_t lock_id;
    uint64_t task;
    uint16_t from;         // the thread that released the lock last before it
    uint64_t from_number;  // and that thread's acquire count then
    uint64_t index;        // the event's index in node-K.log
  };
  // A thread's logged grants; OrderedLocks keeps its GrantState, whose next_logged is
  // grants[next].acquire (0: none left).
  struct ThreadGrants {
    std::deque<Grant> grants;        // no reallocation while a large trace loads
    size_t next = 0;                 // next entry of `grants`
    const Grant* awaited = nullptr;  // the logged grant TakeLogged waits for, for reports
  };
  struct DriverEvent {
    Event event;
    uint64_t index;  // in node-K.log
  };

  // OrderedLocks::Policy. A logged grant: waits until the lock's last release is the
  // recorded one. An unordered one is a divergence: the recording had it logged. A wait that
  // lasts the timeout, or outlives another thread's divergence, ends the replay.
  void TakeLogged(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) override;
  void UnorderedGrant(SeamLock& lock, uint64_t lock_id, int thread, int64_t task,
                      uint64_t last) override;
  void Waiting(int thread, uint64_t lock_id, int64_t task, double seconds) override;
  std::string LoggedText(int thread, const Grant& g) const;
  std::string RequestText(uint64_t lock_id, int thread, int64_t task) const;
  // The next driver event, which must be of `kind`; `actual` says what the program asked for.
  const DriverEvent& ExpectDriver(EventKind kind, const std::string& actual);
  // The next driver event, which must be an operator boundary of `kind` at `site`; `what` names
  // the kind in reports.
  OperatorEvent ExpectOperator(EventKind kind, const char* what, const OperatorSite& site);
  // The recorded invocation number `site.invocation` stands for at recorded site `id`: the same
  // number, or from a checkpoint the offset learnt at the site's first operator.
  uint64_t RecordedInvocation(uint64_t id, uint64_t recorded, uint64_t now);
  // Takes each segment's leading thread digests (its threads' lock state at the cut) out of
  // driver_; from a checkpoint, the first segment's start the threads.
  void TakeSegmentStates(const NodeTrace& trace);
  [[noreturn]] void Diverge(int thread, const std::string& expected, const std::string& actual);
  [[noreturn]] void ThrowFailure();
  // For --tag-output: the index of the next event taken by worker `thread` (-1: none) and, if
  // `driver`, by the driver (OutputTagger::NextEvent).
  std::optional<uint64_t> NextEventOf(int thread, bool driver) const;

  int node_;
  int nodes_;
  std::string log_path_;
  double timeout_seconds_;
  std::string incomplete_;  // why the trace is incomplete, "" if complete
  std::map<uint32_t, TraceSite> sites_;
  int thread_count_;
  std::unique_ptr<ThreadGrants[]> threads_;
  OrderedLocks locks_;
  std::vector<DriverEvent> driver_;
  size_t driver_next_ = 0;
  size_t last_operator_end_ = 0;  // 1 + the position in driver_ of the last operator end, or 0
  // Whether the trace has an operator end at or after position `position` of driver_.
  bool ended_operator_after(size_t position) const { return last_operator_end_ > position; }
  // Replay from a checkpoint (kFromCheckpointVariable): its operator count, whether the restart
  // reached it, and the offsets learnt since (see above).
  std::optional<uint64_t> from_checkpoint_;
  bool restored_ = false;
  std::map<uint64_t, uint64_t> invocation_offset_;                // by recorded site id
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> seq_offset_;  // by (source, tag)
  // driver_[driver_next_].index, or kNoEvent past the end: read by other threads (--tag-output).
  static constexpr uint64_t kNoEvent = ~uint64_t{0};
  std::atomic<uint64_t> driver_next_index_{kNoEvent};
  bool tag_output_ = false;  // OutputTagger enrolled: worker threads name themselves
  const DriverEvent* pending_delivery_ = nullptr;
  std::string operator_;  // "in AsyncFor/locks at f.cc:12 (invocation 3)", for reports
  std::set<std::string> renamed_inputs_;  // "recorded\0now" paths already noted

  std::atomic<bool> failed_{false};
  std::mutex failure_mu_;
  std::string failure_;
};

}  // namespace strads
