// What the API's templates (operators, dmap, relational) need from the node behind a Runtime:
// the DDS registry and collectives over bytes. Not for programs: use the operators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strads/internal/bytes.h"
#include "strads/internal/dds.h"
#include "strads/runtime.h"

namespace strads::internal {

// A per-call-site cache of an engine (its plan: schedule, prefetch lists), or another per-node
// registry, kept by the node under a key (NodeContext::loop_state).
class LoopState {
 public:
  virtual ~LoopState() = default;
  // Heap bytes it holds (--memory-report); 0 for states that do not say.
  virtual size_t HeldBytes() const { return 0; }
};

// DDS ids are creation order, identical on every node.
uint32_t NextDdsId(Runtime& rt);
// Registers `dds` (made with NextDdsId) with the node, which owns it from then on.
void AdoptDds(Runtime& rt, std::unique_ptr<DdsBase> dds);

template <class D, class... Args>
D& CreateDds(Runtime& rt, const std::string& name, Args&&... args) {
  auto dds =
      std::make_unique<D>(NextDdsId(rt), name, std::forward<Args>(args)..., rt.node(), rt.nodes());
  D& ref = *dds;
  AdoptDds(rt, std::move(dds));
  return ref;
}

// Collectives: every node calls them in the same order; results never depend on timing.
// result[p] is node p's contribution. `what` names the call (an operator and its data) in the
// stamp that lets the nodes check that they are in the same call (core/src/collectives.h).
std::vector<std::vector<std::byte>> AllGather(Runtime& rt, std::vector<std::byte> mine,
                                              std::string what = {});
// outgoing[p] goes to node p; result[p] came from node p.
std::vector<std::vector<std::byte>> AllToAll(Runtime& rt,
                                             std::vector<std::vector<std::byte>> outgoing);
// Node `root`'s `data`, on every node (the argument is ignored elsewhere).
std::vector<std::byte> Broadcast(Runtime& rt, int root, std::vector<std::byte> data);
// The sum over nodes, in node order.
int64_t SumOverNodes(Runtime& rt, int64_t mine);

// Reductions under checkpoints (docs/checkpoints.md): while a restarted run skips the operators
// its checkpoint covers, ReplayedReduction writes the result the reduction had in the
// checkpointed run to `out` and returns true; otherwise every result goes to NoteReduction.
bool ReplayedReduction(Runtime& rt, void* out, size_t bytes);
void NoteReduction(Runtime& rt, const void* result, size_t bytes);

template <class T>
std::vector<T> AllGatherValue(Runtime& rt, const T& mine) {
  ByteWriter w;
  w.Put(mine);
  std::vector<T> all;
  for (const auto& bytes : AllGather(rt, w.Take())) all.push_back(ByteReader(bytes).Get<T>());
  return all;
}

}  // namespace strads::internal
