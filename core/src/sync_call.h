// SyncCall: one SyncFor invocation as the engine's parts see it: its workers (node, thread),
// their mini-batches and clocks, its parameters and (with reconnaissance) its plan.
//
// Normally this node runs its own workers on its thread pool. When the run's SyncFor topology
// (Runtime::sync_topology) is not the run's own, the call is *serial*: this one node of one
// thread plays every (node, thread) worker of that topology in turn, on the driver thread
// (the serial equivalent of BSP, docs/sync_for.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "node_context.h"
#include "strads/internal/function_ref.h"
#include "strads/runtime.h"
#include "strads/sync_for.h"
#include "sync_params.h"

namespace strads {
namespace internal {

class SitePlan;

struct SyncCall {
  SyncCall(Runtime& rt, SyncEngine& engine, int64_t local_count, int64_t minibatch,
           FunctionRef<void(int64_t, int64_t, SyncWorkerId)> body, SyncOption option);

  bool hybrid() const { return option.mode == SyncOption::Mode::kHybrid; }
  // Node p's mini-batches, and its workers active at clock c.
  int64_t Batches(int p) const { return batches[p]; }
  int64_t Active(int p, int64_t c) const {
    return std::clamp<int64_t>(Batches(p) - c * threads, 0, threads);
  }
  int64_t ActiveWorkers(int64_t c) const;
  int64_t ActiveNodes(int64_t c) const;
  // Clocks every node runs: the most any node needs.
  int64_t Clocks() const;
  // Node p's mini-batch m as a range of data.local() (p == me unless serial).
  std::pair<int64_t, int64_t> MiniBatch(int p, int64_t m) const;
  // Bytes of parameter d.
  size_t Bytes(uint32_t d) const {
    return static_cast<size_t>(rt.context().dds(d).size()) * rt.context().dds(d).element_bytes();
  }
  // Thread t of node p, as the body sees it.
  SyncWorkerId Worker(int p, int t) const { return {p, t, p * threads + t, nodes * threads}; }
  // Makes node p the one whose workers run and whose update is built (p == me unless serial).
  void Play(int p);

  Runtime& rt;
  SyncEngine& engine;
  const int64_t local_count, minibatch;
  const FunctionRef<void(int64_t, int64_t, SyncWorkerId)> body;
  const SyncOption option;
  int threads, nodes, me;  // serial: the emulated ones; me the node being played
  bool serial = false;
  std::vector<int64_t> serial_begin;  // serial: node p's data is [begin[p], begin[p + 1])
  // The order BSP sums node updates in: 0, 1, ... (STRADS_INJECT_BUG=aggregation-order
  // reverses it on a real multi-node run, a bug dual testing must catch).
  std::vector<int> node_order;
  std::vector<uint32_t> ids;       // declared parameters, by id
  std::vector<bool> touched;       // per ids entry: updated by some node during this call
  std::vector<int64_t> batches;    // per node, agreed before the clocks
  const SitePlan* plan = nullptr;  // the site's plan once valid for this call (reconnaissance)
};

}  // namespace internal
}  // namespace strads
