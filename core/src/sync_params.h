// SyncFor parameters on one node: what was declared about them, the copies the workers take
// of them during a clock, and the access hooks that send a body's `v[i]` to those copies.
// A copy is taken on a worker's first access in a clock, from the value at the start of the
// clock; the engine recognises this clock's copies by their stamp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "node_context.h"
#include "reconnaissance.h"  // HookGuard
#include "strads/internal/dds.h"
#include "strads/runtime.h"
#include "strads/sync_for.h"

namespace strads {
namespace internal {

// A copy of one parameter: a worker's (BSP, SSP) or a node's (Hybrid).
struct ParamCopy {
  std::unique_ptr<double[]> storage;  // double: aligned for every supported element type
  size_t bytes = 0;
  uint64_t stamp = 0;  // the clock stamp it was taken at; == current stamp: accessed this clock
  // The stamp of a clock whose starting values the copy already holds (EndClockOnOneNode wrote
  // them at the end of the clock before), so that taking it then copies nothing.
  uint64_t fresh = 0;
  std::byte* data() { return reinterpret_cast<std::byte*>(storage.get()); }
  // Copies the whole parameter, or only the elements of `list` (reconnaissance), unless the
  // whole copy is fresh for clock `now`.
  void Take(DdsBase& dds, uint64_t now, const std::vector<int64_t>* list);
};

// Hybrid: the node's one copy, taken by whichever of its threads accesses it first.
struct SharedCopy {
  ParamCopy copy;
  std::atomic<uint64_t> stamp{0};
  std::mutex mu;
};

struct SyncParam {
  bool declared = false;
  ScalarKind kind = ScalarKind::kFloat;
  RawAggregation custom;
  uint64_t synced_version = ~uint64_t{0};  // the version at which all nodes last agreed
};

struct SyncWorker {
  std::vector<ParamCopy> copies;  // by DDS id
  // By DDS id: copies[id].data() once the copy is taken in this clock on the hook's common path
  // (BSP or SSP, no reconnaissance check), else null. The thread running the worker indexes it
  // directly (DirectBases in dds.h); cleared when a clock begins.
  std::vector<std::byte*> direct;
  uint64_t hooked_accesses = 0;  // the common path's calls of ParamHook::Access (tests)
};

// Makes `worker` the one whose copies the calling thread's parameter accesses use, directly
// (its `direct` table) or through ParamHook; the thread has no worker again when it ends.
class WorkerScope {
 public:
  explicit WorkerScope(SyncWorker* worker);
  ~WorkerScope();
  WorkerScope(const WorkerScope&) = delete;
  WorkerScope& operator=(const WorkerScope&) = delete;
};

// The per-runtime state of the engine: parameters, copies, invocation counts.
class SyncEngine : public internal::LoopState {
 public:
  // Starts a clock: every copy taken before is stale from now on, and no longer indexed directly.
  void BeginClock();
  // Parameter `d`'s copies taken in this clock by the first `active` workers, in thread order
  // (null: that worker did not access d), or Hybrid's shared copy; empty: nobody accessed d.
  std::vector<std::byte*> CopiesThisClock(uint32_t d, int64_t active, bool hybrid);
  // Makes room for `threads` workers (an emulating call may play more than the run has).
  void EnsureWorkers(int threads, size_t dds_count);

  std::vector<SyncParam> params;  // by DDS id
  std::vector<SyncWorker> workers;
  std::vector<std::unique_ptr<SharedCopy>> shared;  // by DDS id (Hybrid)
  std::map<std::string, uint64_t> invocations;
  std::set<std::string> noted_test_mode;  // sites whose mode test mode changed (noted once)
  uint64_t stamp = 0;                     // bumped every clock
  std::vector<std::byte> update;          // this node's update of the current clock
  std::unique_ptr<double[]> sum;          // the sum of the node updates
  size_t sum_bytes = 0;
  // During a call with reconnaissance, by DDS id: the elements the bodies of the node being
  // run access (null: the whole parameter) and the same as a bitmap.
  std::vector<const std::vector<int64_t>*> take;
  std::vector<const std::vector<uint8_t>*> allowed;
};

// The engine of `rt`, sized for its current DDSs and threads.
SyncEngine& EngineOf(Runtime& rt);

// Collective: makes every declared parameter whole on every node from its owners' parts, as
// after a BSP clock (a restart restores only the owned parts: checkpoint.h).
void ReplicateDeclaredParameters(Runtime& rt);

// A body's access to a parameter: the calling worker's copy (BSP, SSP) or the node's shared
// copy (Hybrid), taken on first access in the clock. On BSP and SSP without reconnaissance the
// first access of a worker in a clock also lets its thread index the copy directly from then on.
class ParamHook : public AccessHook {
 public:
  ParamHook(SyncEngine& engine, bool hybrid) : engine_(engine), hybrid_(hybrid) {}
  std::byte* Access(DdsBase& dds, int64_t index, bool write) override;

 private:
  // A call with reconnaissance (every access checked against what the node's bodies accessed)
  // or Hybrid (the node's shared copy): never indexed directly.
  std::byte* AccessCheckedOrShared(DdsBase& dds, int64_t index);
  [[noreturn]] static void OutsideWorkers(DdsBase& dds);

  SyncEngine& engine_;
  bool hybrid_;
};

// A body's access to any DDS that is not a parameter (the input included): a UsageError.
class NotAParameterHook : public AccessHook {
 public:
  std::byte* Access(DdsBase& dds, int64_t index, bool write) override;
};

// While it lives, a SyncFor body reaches parameters `ids` through `param_hook` and no other
// DDS; the driver hook is back on every DDS when it ends, normally or not.
class ParamAccessScope {
 public:
  ParamAccessScope(Runtime& rt, const std::vector<uint32_t>& ids, AccessHook& param_hook);
  ParamAccessScope(const ParamAccessScope&) = delete;
  ParamAccessScope& operator=(const ParamAccessScope&) = delete;

 private:
  NotAParameterHook not_a_parameter_;
  HookGuard guard_;  // destroyed first: no DDS points at not_a_parameter_ once it is gone
};

}  // namespace internal
}  // namespace strads
