// How the recorder, the replayer and third-party policies plug an OrderingPolicy into the core
// without the core including their headers: they register a factory under a mode name at
// static-initialisation time, and the runtime picks the mode from the environment when a node
// starts:
//   STRADS_RECORD=DIR  -> mode "record" (recorder/)
//   STRADS_REPLAY=DIR  -> mode "replay" (replayer/)
// (`strads record` / `strads replay` set these for the program they run.) Neither set: Live.
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
};

using OrderingPolicyFactory = std::unique_ptr<OrderingPolicy> (*)(const PolicyNode& node,
                                                                  const std::string& dir);

// Returns true, so that it can initialise a static bool in the registering library.
bool RegisterOrderingPolicy(const std::string& mode, OrderingPolicyFactory factory);

// The policy registered as `mode`, made for `node` and `dir`; CollectiveUsageError when no
// library registered it.
std::unique_ptr<OrderingPolicy> MakeRegisteredPolicy(const std::string& mode,
                                                     const PolicyNode& node,
                                                     const std::string& dir);

// The policy the environment asks for: Live when no mode is set; CollectiveUsageError when a
// mode is set whose library is not linked into the program, or when both are set.
std::unique_ptr<OrderingPolicy> MakeOrderingPolicy(const PolicyNode& node);

}  // namespace strads
