// LockedLoop: the element-lock engine of AsyncFor (`--async-engine locks`): the OpenMP-with-
// locks strategy of Figure 2(b), across nodes. Nondeterministic by design; the recorder logs
// its orderings so that a run can be replayed.
//
// Each node runs its contiguous share of the indices (the share it reconnoitred), split into
// contiguous chunks over its threads. Before a body runs, its thread takes the locks of every
// written element the body touches (from reconnaissance), in (DDS, index) order, through the
// ordering seam; it releases them in reverse order afterwards. A node works on its own copy of
// the written elements it touches, fetched from their owners when the call starts; when it ends,
// each node sends the final values of the elements it does not own to their owners, which
// merge every node's change (its own first, then the others' in the order their messages are
// delivered, through the ordering seam): averaged for arithmetic elements (delta.h). One thread
// on one node runs the bodies in index order: the serial program. Checked executions
// (access_check.h) verify every body's accesses against its reconnaissance.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "element_ref.h"
#include "node_context.h"
#include "reconnaissance.h"
#include "strads/internal/async_engine.h"
#include "strads/runtime.h"
#include "strads/seam/ordered_locks.h"
#include "strads/seam/ordering.h"

namespace strads {

class LockedLoop : public internal::LoopState {
 public:
  using Body = internal::LoopBody;

  // The loop state of this call site: planned again when the bounds change and on every call
  // of a dynamic site; the site's invocations count on across plans.
  static LockedLoop& At(Runtime& rt, internal::LoopSite site, int64_t first, int64_t last);
  // Reconnaissance and planning, on the first call only.
  void Prepare(Runtime& rt, Body body);
  // Collective. Planning from a reconnaissance of first..last made elsewhere (AsyncForEach's
  // cache, index_set_loop.h): Prepare without running the bodies.
  void Plan(Runtime& rt, ReconResult recon);
  // One invocation.
  void Execute(Runtime& rt, Body body);
  size_t HeldBytes() const override;

 private:
  // Bodies begin..end of one thread, each between take(lock, lock id, task) for each of its locks
  // and give(lock, lock id) for each in reverse order, then gave(). The id goes by reference, so
  // that a take that needs it only off its fast path (the ordered protocol's) does not load it
  // per lock.
  template <class Take, class Give, class Gave = void (*)()>
  void RunLocked(
      int64_t begin, int64_t end, Body body, const Take& take, const Give& give,
      const Gave& gave = [] {});
  void PushDeltas(Runtime& rt);
  // The lock engine's lock ids (FORMAT.md): the DDS id above the element index.
  static uint64_t LockId(const ElementRef& e) { return (uint64_t{e.dds} << 40) | e.index; }

  std::string file_;
  uint32_t line_ = 0;
  int64_t first_ = 0, last_ = -1;
  bool prepared_ = false;
  uint64_t invocations_ = 0;  // calls at this site
  uint64_t executions_ = 0;   // calls that ran this plan (access checking samples by it)

  int64_t share_begin_ = 0, share_count_ = 0;
  // A lock as the loop takes it: its address and its id, so that a grant costs no lookup.
  struct LockRef {
    SeamLock* lock;
    uint64_t id;  // LockId
  };
  // Body k's locks: [body_bounds_[k], body_bounds_[k + 1]) in body_locks_, sorted by id.
  std::vector<LockRef> body_locks_;
  std::vector<const LockRef*> body_bounds_;
  // Per DDS id: one lock per element (written DDSs only).
  std::vector<std::unique_ptr<SeamLock[]>> locks_;
  std::vector<size_t> lock_counts_;  // per DDS id, the length of locks_[id]
  std::vector<uint32_t> written_dds_, read_only_dds_;
  // Written elements this node touches but does not own.
  std::vector<ElementRef> replica_;
  // Written elements this node owns that some node touches (sorted), whether this node touches
  // each, and their values at the call's start.
  std::vector<ElementRef> owned_touched_;
  std::vector<char> touched_here_;
  std::vector<std::byte> owned_start_;
  // serve_written_[p]: written elements this node owns that node p touches (every call);
  // serve_read_[p]: the same for read-only elements (again only when they change).
  std::vector<std::vector<ElementRef>> serve_written_, serve_read_;
  std::vector<uint64_t> read_versions_;
  bool read_served_ = false;
  // Body k's AccessDigest from reconnaissance, when --access-check is not off.
  std::vector<uint32_t> digests_;
  // Per worker thread, the acquires of its bodies under the ordered protocol folded ahead (its
  // share of the plan is the same at every call), made by the thread at its first such call.
  struct ThreadRun {
    bool made = false;
    AcquireRun run;
  };
  std::vector<ThreadRun> thread_runs_;
};

}  // namespace strads
