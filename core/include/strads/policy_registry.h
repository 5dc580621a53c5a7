// How the recorder and the replayer plug their OrderingPolicy into the core without the core
// including their headers: they register a factory under a mode name at static-initialisation
// time, and the runtime picks the mode from the environment when a node starts:
//   STRADS_RECORD=DIR  -> mode "record" (recorder/)
//   STRADS_REPLAY=DIR  -> mode "replay" (replayer/)
// (`strads record` / `strads replay` set these for the program they run.) Neither set: Live.
// STRADS_RECORD_OVERHEAD=DIR (runtime.cc) also makes a "record" policy, for some operators only.
#pragma once

#include <memory>
#include <string>

#include "strads/ordering.h"

namespace strads {

class Runtime;

using OrderingPolicyFactory = std::unique_ptr<OrderingPolicy> (*)(Runtime& rt,
                                                                  const std::string& dir);

// Returns true, so that it can initialise a static bool in the registering library.
bool RegisterOrderingPolicy(const std::string& mode, OrderingPolicyFactory factory);

// The policy registered as `mode`, made for `rt` and `dir`; UsageError when no library registered
// it.
std::unique_ptr<OrderingPolicy> MakeRegisteredPolicy(const std::string& mode, Runtime& rt,
                                                     const std::string& dir);

// The policy the environment asks for: Live when no mode is set; UsageError when a mode is set
// whose library is not linked into the program, or when both are set.
std::unique_ptr<OrderingPolicy> MakeOrderingPolicy(Runtime& rt);

}  // namespace strads
