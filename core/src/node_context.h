// NodeContext: the engines' side of one node, behind the user's Runtime (Runtime::context()).
// It owns what a program author never touches: the transport, the collectives, the worker
// threads, the ordering seam's policy, the DDS registry, the engines' per-site plans and the
// dual-test file. Made by the Runtime it belongs to; lives as long as it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives.h"
#include "driver_access_hook.h"
#include "dual_trace.h"
#include "strads/internal/dds.h"
#include "strads/internal/node_services.h"
#include "strads/runtime.h"
#include "strads/seam/ordering.h"
#include "strads/seam/policy_registry.h"
#include "thread_pool.h"

namespace strads {

class RecordOverheadMeter;
class SharedArrayFiles;
class SharedPlans;

namespace internal {

class Checkpointer;

// A deliberate bug, for the tests that show dual testing catches bugs (STRADS_INJECT_BUG).
enum class InjectedBug {
  kNone,
  kConflictingRound,  // "conflicting-round": AsyncFor runs two conflicting groups in one round
  kAggregationOrder,  // "aggregation-order": SyncFor BSP sums node updates in reverse node order
};

// What strads::Run hands to the Runtime of a node.
struct NodeSetup {
  RuntimeOptions options;
  Transport* transport = nullptr;
  // Under --nodes P: the memory files the process's nodes share DDS pages through; else null.
  SharedArrayFiles* shared_files = nullptr;
  // Under --nodes P: the AsyncFor tables and schedules the process's nodes share; else null.
  SharedPlans* shared_plans = nullptr;
  InjectedBug inject_bug = InjectedBug::kNone;
};

class NodeContext {
 public:
  NodeContext(Runtime& rt, const NodeSetup& setup);
  ~NodeContext();
  NodeContext(const NodeContext&) = delete;
  NodeContext& operator=(const NodeContext&) = delete;

  // Second construction step, once rt.context() works: the ordering policy (which the
  // recorder's and replayer's factories make), the dual-test file, the overhead meter.
  void Start();

  Runtime& runtime() { return rt_; }
  Transport& transport() { return transport_; }
  Collectives& collectives() { return collectives_; }
  ThreadPool& pool() { return pool_; }
  OrderingPolicy& ordering() { return *ordering_; }
  InjectedBug inject_bug() const { return inject_bug_; }

  // Operators call these instead of ordering().OperatorBegin/End, so that the runtime can
  // measure recording against live runs (STRADS_RECORD_OVERHEAD, record_overhead_meter.h).
  void BeginOperator(const OperatorSite& site);
  // `written`: the DDSs the operator wrote, whose share on this node is its outcome.
  void EndOperator(const OperatorSite& site, std::span<const uint32_t> written);
  // Once, when the driver returned (ok) or failed: ordering().Finish, and the overhead report.
  void FinishOrdering(bool ok);

  // The DDS registry: ids are creation order, identical on every node.
  uint32_t next_dds_id() const { return static_cast<uint32_t>(dds_.size()); }
  void AdoptDds(std::unique_ptr<DdsBase> dds);
  DdsBase& dds(uint32_t id) { return *dds_.at(id); }
  size_t dds_count() const { return dds_.size(); }
  // Under --nodes P, the memory files through which the process's nodes share the pages of DDS
  // values they only read (shared_array_files.h); null elsewhere, and the same on every node.
  SharedArrayFiles* shared_files() const { return shared_files_; }
  // Under --nodes P (and with shared_files), the cells' tables and schedules of AsyncFor
  // planning, made by the leader and read by the others (shared_plans.h); null elsewhere.
  SharedPlans* shared_plans() const { return shared_plans_; }
  // The hook DDS accesses use outside loop engines (collective driver access).
  AccessHook* driver_hook() { return driver_hook_.get(); }

  // The engines' per-call-site state, keyed by a site string.
  internal::LoopState* loop_state(const std::string& key);
  void set_loop_state(const std::string& key, std::unique_ptr<LoopState> state);
  // The sum of every loop state's HeldBytes (--memory-report).
  size_t LoopStateBytes() const;
  // Numbers AsyncFor call sites in the order they first run (for --order-out file names).
  size_t NextAsyncSiteIndex() { return async_sites_++; }
  // What Runtime::last_serial_order() reports, made by `source` when asked for (null: none).
  void set_last_serial_order(std::function<std::vector<int64_t>()> source) {
    rt_.last_serial_order_source_ = std::move(source);
    rt_.last_serial_order_.reset();
  }

  // The dual-test file this run follows or writes (--dual-in, --dual-out), or null.
  DualTrace* dual() { return dual_.get(); }
  // The shape SyncFor BSP aggregates for: this run's nodes x threads, or in test mode on one
  // node of one thread what --sync-workers or the followed dual-test file says.
  SyncTopology sync_topology() const { return sync_topology_; }

  // Checkpoints and restart (checkpoint.h).
  Checkpointer& checkpoints() { return *checkpoints_; }

  // What an ordering policy's factory learns of this node (policy_registry.h).
  PolicyNode policy_node();

 private:
  Runtime& rt_;
  Transport& transport_;
  InjectedBug inject_bug_;
  SharedArrayFiles* shared_files_;
  SharedPlans* shared_plans_;
  Collectives collectives_;
  ThreadPool pool_;
  std::unique_ptr<OrderingPolicy> ordering_;
  std::unique_ptr<RecordOverheadMeter> overhead_;  // STRADS_RECORD_OVERHEAD only
  std::vector<std::unique_ptr<DdsBase>> dds_;
  std::unique_ptr<DriverAccessHook> driver_hook_;
  std::map<std::string, std::unique_ptr<LoopState>> loop_states_;
  size_t async_sites_ = 0;
  std::unique_ptr<DualTrace> dual_;
  SyncTopology sync_topology_;
  std::unique_ptr<Checkpointer> checkpoints_;
};

}  // namespace internal
}  // namespace strads
