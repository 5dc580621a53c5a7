// How the recorder, the replayer and third-party policies plug an OrderingPolicy into the core
// without the core including their headers: they register a factory under a mode name at
// static-initialisation time, and the runtime picks the mode from the environment when a node
// starts:
//   STRADS_RECORD=DIR         -> mode "record", argument DIR (recorder/)
//   STRADS_REPLAY=DIR         -> mode "replay", argument DIR (replayer/)
//   STRADS_POLICY=MODE[:ARG]  -> any registered mode (a third-party policy), argument ARG
// (`strads record` / `strads replay` set the first two for the program they run.) None set:
// Live. A policy is linked into the program like the recorder: its registering object file
// must be linked whole (a static initialiser of an unreferenced archive member never runs).
// STRADS_RECORD_OVERHEAD=DIR also makes a "record" policy, for some operators only.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "strads/seam/ordering.h"

namespace strads {

// The node a policy orders, as its factory learns it.
struct PolicyNode {
  int node = 0;
  int nodes = 1;
  int threads = 1;       // worker threads of the node (lock grants name thread 0 .. threads-1)
  double timeout = 120;  // seconds any wait for another node may last (--timeout)
  // Collective: returns once every node of the run called it (bounded by `timeout`).
  std::function<void()> barrier;
  // Collective: every node gets node 0's `value` (the others' are ignored), e.g. a run id.
  std::function<uint64_t(uint64_t value)> agree;
};

// Makes the policy for one node; `argument` is what the environment gave (a trace directory).
using OrderingPolicyFactory = std::unique_ptr<OrderingPolicy> (*)(const PolicyNode& node,
                                                                  const std::string& argument);

// Returns true, so that it can initialise a static bool in the registering library.
bool RegisterOrderingPolicy(const std::string& mode, OrderingPolicyFactory factory);

// The policy registered as `mode`, made for `node` and `argument`; CollectiveUsageError when no
// library registered it.
std::unique_ptr<OrderingPolicy> MakeRegisteredPolicy(const std::string& mode,
                                                     const PolicyNode& node,
                                                     const std::string& argument);

// The policy the environment asks for: Live when none; CollectiveUsageError when a mode is asked
// for whose library is not linked into the program, or when more than one is.
std::unique_ptr<OrderingPolicy> MakeOrderingPolicy(const PolicyNode& node);

}  // namespace strads
