// Runtime: one node of a strads program (design.md section 3).
//
// A program hands its driver to strads::Run, which starts the nodes and runs the driver once
// per node: one node per MPI rank under mpiexec, or P logical nodes as threads of this process
// with `--nodes P`. Every node runs the same driver (control replication): sequential
// statements run identically on every node, and operators on DDS are collective.
//
//   int main(int argc, char** argv) {
//     CLI::App app{"my trainer"};
//     int epochs = 10;
//     app.add_option("--epochs", epochs);
//     return strads::Run(app, argc, argv, [&](strads::Runtime& rt) { ... });
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "strads/collectives.h"
#include "strads/dual_trace.h"
#include "strads/ordering.h"
#include "strads/thread_pool.h"

namespace CLI {
class App;
}

namespace strads {

class AccessHook;
class DdsBase;
class RecordOverheadMeter;

// How AsyncFor runs its bodies.
enum class AsyncEngine {
  kSchedule,  // conflict-free rounds from reconnaissance: deterministic, serializable
  kLocks,     // element locks only (Figure 2(b) across nodes): nondeterministic
};

// A deliberate bug, for tests that show dual testing catches bugs (STRADS_INJECT_BUG). Never
// set it outside such tests.
enum class InjectedBug {
  kNone,
  kConflictingRound,  // "conflicting-round": AsyncFor runs two conflicting groups in one round
  kAggregationOrder,  // "aggregation-order": SyncFor BSP sums node updates in reverse node order
};

struct RuntimeOptions {
  int threads = 0;    // worker threads per node; 0: the machine's cores / local nodes
  int nodes = 1;      // logical nodes in this process (--nodes); 1 under mpiexec
  uint64_t seed = 1;  // seed of rt.rng(), identical on every node
  int blocks = 16;    // scheduler blocks per written DDS (see schedule.h)
  AsyncEngine async_engine = AsyncEngine::kSchedule;
  double timeout = 120;   // seconds any wait for another node may last
  std::string order_out;  // write each AsyncFor site's serial order here (node 0)
  // Test mode (--test-mode, dual testing): only what has a serial equivalent runs. AsyncFor
  // uses the schedule engine, SyncFor SSP(s) and Hybrid run as BSP.
  bool test_mode = false;
  std::string dual_in, dual_out;    // follow / write a dual-test file (dual_trace.h)
  SyncTopology sync_workers{0, 0};  // --sync-workers PxT; 0: the run's own
  InjectedBug inject_bug = InjectedBug::kNone;
  bool serialize = false;  // one thread of the process at a time (baton.h)
  // Seed of random delays at the ordering points (chaos_ordering_policy.h).
  std::optional<uint64_t> chaos;
};

// A per-loop-site cache of an engine (schedule, prefetch lists). Opaque to the runtime.
class LoopState {
 public:
  virtual ~LoopState() = default;
};

class Runtime {
 public:
  Runtime(const RuntimeOptions& options, Transport& transport);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The runtime of the calling driver thread. Operators without a Runtime argument use it.
  static Runtime& Current();

  int node() const { return node_; }
  int nodes() const { return nodes_; }
  int threads() const { return threads_; }
  bool leader() const { return node_ == 0; }
  uint64_t seed() const { return options_.seed; }
  const RuntimeOptions& options() const { return options_; }
  // Seeded with seed(): the same stream on every node as long as every node draws alike.
  std::mt19937_64& rng() { return rng_; }

  Transport& transport() { return transport_; }
  Collectives& collectives() { return collectives_; }
  ThreadPool& pool() { return pool_; }
  OrderingPolicy& ordering() { return *ordering_; }
  void SetOrderingPolicy(std::unique_ptr<OrderingPolicy> policy);
  // Operators call these instead of ordering().OperatorBegin/End, so that the runtime can
  // measure recording against live runs (STRADS_RECORD_OVERHEAD, record_overhead_meter.h).
  void BeginOperator(const OperatorSite& site);
  void EndOperator(const OperatorSite& site);
  // Once, when the driver returned (ok) or failed: ordering().Finish, and the overhead report.
  void FinishOrdering(bool ok);

  // DDS registry: ids are creation order, identical on every node.
  template <class D, class... Args>
  D& CreateDds(const std::string& name, Args&&... args) {
    auto dds = std::make_unique<D>(next_dds_id(), name, std::forward<Args>(args)..., node_, nodes_);
    D& ref = *dds;
    AdoptDds(std::move(dds));
    return ref;
  }
  DdsBase& dds(uint32_t id) { return *dds_.at(id); }
  // The hook DDS accesses use outside loop engines (collective driver access).
  AccessHook* driver_hook() { return driver_hook_.get(); }
  size_t dds_count() const { return dds_.size(); }

  // The engines' per-call-site state, keyed by a site string.
  LoopState* loop_state(const std::string& key);
  void set_loop_state(const std::string& key, std::unique_ptr<LoopState> state);

  // The dual-test file this run follows or writes (--dual-in, --dual-out), or null.
  DualTrace* dual() { return dual_.get(); }
  // The shape SyncFor BSP aggregates for: this run's nodes x threads, or in test mode on one
  // node of one thread what --sync-workers or the followed dual-test file says.
  SyncTopology sync_topology() const { return sync_topology_; }

  // Numbers AsyncFor call sites in the order they first run (for --order-out file names).
  size_t NextAsyncSiteIndex() { return async_sites_++; }

  // The serial order equivalent to the last AsyncFor run on this node (all nodes agree):
  // running its bodies one by one in this order gives the same result bit for bit.
  const std::vector<int64_t>& last_serial_order() const {
    static const std::vector<int64_t> none;
    return last_serial_order_ ? *last_serial_order_ : none;
  }
  void set_last_serial_order(std::shared_ptr<const std::vector<int64_t>> order) {
    last_serial_order_ = std::move(order);
  }

 private:
  uint32_t next_dds_id() const { return static_cast<uint32_t>(dds_.size()); }
  void AdoptDds(std::unique_ptr<DdsBase> dds);

  RuntimeOptions options_;
  Transport& transport_;
  int node_, nodes_, threads_;
  Collectives collectives_;
  ThreadPool pool_;
  std::unique_ptr<OrderingPolicy> ordering_;
  std::unique_ptr<RecordOverheadMeter> overhead_;  // STRADS_RECORD_OVERHEAD only
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<DdsBase>> dds_;
  std::map<std::string, std::unique_ptr<LoopState>> loop_states_;
  size_t async_sites_ = 0;
  std::shared_ptr<const std::vector<int64_t>> last_serial_order_;
  std::unique_ptr<AccessHook> driver_hook_;
  std::unique_ptr<DualTrace> dual_;
  SyncTopology sync_topology_;
};

using Driver = std::function<void(Runtime&)>;

// Adds the runtime's flags to `app`, parses the command line, starts the nodes, runs `driver`
// on each and returns the process exit code: 0, 1 (a node failed), 2 (bad flags or input) or
// 3 (replay divergence: the program does not do what the recording did).
int Run(CLI::App& app, int argc, char** argv, const Driver& driver);
int Run(int argc, char** argv, const Driver& driver);

}  // namespace strads
