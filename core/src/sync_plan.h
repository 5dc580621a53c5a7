// SitePlan: the reconnaissance plan of one SyncFor call site: which elements of each parameter
// the bodies of each node access. Under static control flow these are the same in every call,
// so the plan is made once (by running the bodies with their accesses recorded) and made again
// only when something it depends on changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dual_trace.h"  // SyncTopology
#include "node_context.h"
#include "strads/runtime.h"
#include "sync_call.h"

namespace strads {
namespace internal {

class SitePlan : public internal::LoopState {
 public:
  // The plan of the call site `where` over input `data` (empty, not valid, the first time).
  static SitePlan& At(Runtime& rt, const std::string& where, const DdsBase& data);

  // Whether this plan was made for a call of the same parameters, input and workers.
  bool Fits(const SyncCall& call) const;
  // Collective (unless `call` is serial): runs every mini-batch of this node (serial: of
  // every emulated node) with parameter accesses recorded and writes discarded, and gathers
  // what every node's bodies access.
  void Make(const SyncCall& call);

  bool valid = false;
  std::vector<uint32_t> ids;  // the parameters at planning time
  int64_t local_count = -1, minibatch = -1;
  std::vector<std::vector<std::vector<int64_t>>> need;  // [parameter k][node p]: sorted
  std::vector<std::vector<int64_t>> all;                // [k]: union over nodes, sorted
  // [p][k]: need[k][p] as a bitmap, for this node only (others empty); for every emulated
  // node when the call is serial.
  std::vector<std::vector<std::vector<uint8_t>>> mine;
  SyncTopology topology;  // the topology at planning time
};

}  // namespace internal
}  // namespace strads
