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
//                 thread's acquire count and digest must match.
//   inputs        the bytes a node reads must have the recorded size and FNV-1a 64.
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
#include <string>
#include <vector>

#include "strads/known_grants.h"
#include "strads/ordering.h"
#include "strads/trace/event.h"

namespace strads {

class Runtime;

class ReplayOrderingPolicy : public OrderingPolicy {
 public:
  // Reads DIR/manifest and DIR/node-K.log. Throws DivergenceError (collective) when the run's
  // node or thread count differs from the recording's, UsageError when the trace is unreadable.
  ReplayOrderingPolicy(Runtime& rt, const std::string& dir);
  ~ReplayOrderingPolicy() override;

  const char* mode() const override { return "replay"; }
  void Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) override;
  void Release(SeamLock& lock, uint64_t lock_id, int thread) override;
  int NextSource(Tag tag) override;
  void Delivered(const Message& message) override;
  uint64_t Choose(ChoicePoint point, uint64_t live_value) override;
  void Input(const std::string& path, uint64_t offset, std::span<const std::byte> bytes) override;
  void OperatorBegin(const OperatorSite& site) override;
  void OperatorEnd(const OperatorSite& site) override;
  void Finish(bool ok) override;
  GrantState* grant_state(int thread) override { return &threads_[thread].state; }
  // Reports a divergence: the recording ordered this grant after the lock's last one.
  void UnorderedGrant(SeamLock& lock, uint64_t lock_id, int thread, int64_t task,
                      uint64_t last) override;

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
  struct alignas(64) ThreadState {
    // next_logged: the acquire number of the next logged grant (grants[next].acquire; 0: none).
    GrantState state;
    std::deque<Grant> grants;  // no reallocation while a large trace loads
    size_t next = 0;           // next entry of `grants`
    uint64_t checked = 0;      // acquires() at the last digest check
    uint64_t acquires() const { return SeamLock::NumberOf(state.grant); }
  };
  struct DriverEvent {
    Event event;
    uint64_t index;  // in node-K.log
  };

  // A logged grant: waits until the lock's last grant is the recorded one.
  void AcquireLogged(SeamLock& lock, uint64_t lock_id, int thread, int64_t task);
  // Takes `lock` for `thread` once it is free and `ready(word)` holds for its word, leaving the
  // last grant in it; returns that word. Bounded, ends on divergence; `waiting_for()` describes
  // the awaited grant for a report.
  template <class Ready, class What>
  uint64_t TakeWhen(SeamLock& lock, int thread, const Ready& ready, const What& waiting_for);
  std::string RequestText(uint64_t lock_id, int thread, int64_t task) const;
  // The next driver event, which must be of `kind`; `actual` says what the program asked for.
  const DriverEvent& ExpectDriver(EventKind kind, const std::string& actual);
  [[noreturn]] void Diverge(int thread, const std::string& expected, const std::string& actual);
  [[noreturn]] void ThrowFailure();

  Runtime& rt_;
  int node_;
  std::string log_path_;
  double timeout_seconds_;
  std::string incomplete_;  // why the trace is incomplete, "" if complete
  std::map<uint32_t, TraceSite> sites_;
  std::unique_ptr<ThreadState[]> threads_;
  int thread_count_;
  KnownGrants known_;
  std::vector<DriverEvent> driver_;
  size_t driver_next_ = 0;
  const DriverEvent* pending_delivery_ = nullptr;
  std::string operator_;  // "in AsyncFor/locks at f.cc:12 (invocation 3)", for reports

  std::atomic<bool> failed_{false};
  std::mutex failure_mu_;
  std::string failure_;
};

}  // namespace strads
