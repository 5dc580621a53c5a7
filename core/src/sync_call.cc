#include "sync_call.h"

#include "node_context.h"
#include "strads/internal/even_split.h"
#include "sync_plan.h"

namespace strads {
namespace internal {

SyncCall::SyncCall(Runtime& rt, SyncEngine& engine, int64_t local_count, int64_t minibatch,
                   FunctionRef<void(int64_t, int64_t, SyncWorkerId)> body, SyncOption option)
    : rt(rt),
      engine(engine),
      local_count(local_count),
      minibatch(minibatch),
      body(body),
      option(option),
      threads(rt.threads()),
      nodes(rt.nodes()),
      me(rt.node()) {
  for (uint32_t d = 0; d < engine.params.size(); ++d)
    if (engine.params[d].declared) ids.push_back(d);
  touched.assign(ids.size(), false);
  const SyncTopology topology = rt.context().sync_topology();
  if (topology != SyncTopology{nodes, threads}) {
    serial = true;
    nodes = topology.nodes;
    threads = topology.threads;
    const EvenSplit split(local_count, nodes);
    for (int p = 0; p < nodes; ++p) serial_begin.push_back(split.begin(p));
    serial_begin.push_back(local_count);
    engine.EnsureWorkers(threads, rt.context().dds_count());
  }
  for (int p = 0; p < nodes; ++p) node_order.push_back(p);
  if (!serial && rt.context().inject_bug() == internal::InjectedBug::kAggregationOrder)
    std::reverse(node_order.begin(), node_order.end());
}

int64_t SyncCall::ActiveWorkers(int64_t c) const {
  int64_t w = 0;
  for (int p = 0; p < nodes; ++p) w += Active(p, c);
  return w;
}

int64_t SyncCall::ActiveNodes(int64_t c) const {
  int64_t n = 0;
  for (int p = 0; p < nodes; ++p) n += Active(p, c) > 0;
  return n;
}

int64_t SyncCall::Clocks() const {
  int64_t clocks = 0;
  for (int p = 0; p < nodes; ++p) clocks = std::max(clocks, (Batches(p) + threads - 1) / threads);
  return clocks;
}

std::pair<int64_t, int64_t> SyncCall::MiniBatch(int p, int64_t m) const {
  const int64_t base = serial ? serial_begin[p] : 0;
  const int64_t end = serial ? serial_begin[p + 1] : local_count;
  return {base + m * minibatch, std::min(end, base + (m + 1) * minibatch)};
}

void SyncCall::Play(int p) {
  me = p;
  for (size_t k = 0; k < ids.size(); ++k) {
    engine.take[ids[k]] = plan ? &plan->need[k][p] : nullptr;
    engine.allowed[ids[k]] = plan ? &plan->mine[p][k] : nullptr;
  }
}

}  // namespace internal
}  // namespace strads
