// Where a debugger stops a replay (gdb-plugin/, `strads gdb`): empty functions that gdb puts
// breakpoints on, called by the Replay policy, and the variables gdb writes to choose the event
// to stop before. Stopping at event N therefore costs one compare per event, not single-stepping
// (rr's `run N`). The names are extern "C" so that gdb commands can spell them.
#pragma once

#include <cstdint>

extern "C" {
// The node and the index (in its node-K.log) of the event to stop before; -1 / ~0: none.
extern int strads_debugger_break_node;
extern uint64_t strads_debugger_break_event;

// Called before node `node` takes its event `index`, when that is the one gdb asked for.
void strads_debugger_event_reached(int node, uint64_t index);
// Called when an operator invocation starts on `node` (`site` is the trace's site id).
void strads_debugger_operator_begin(int node, uint64_t site, uint64_t invocation, const char* kind,
                                    const char* file, uint32_t line);
// Called with the divergence report before it is thrown, in the frame of the policy call that
// diverged: stopped here, gdb's `bt` shows the program's line.
void strads_debugger_divergence(int node, const char* report);
}

namespace strads {

inline void BeforeReplayEvent(int node, uint64_t index) {
  if (index == strads_debugger_break_event && node == strads_debugger_break_node) [[unlikely]]
    strads_debugger_event_reached(node, index);
}

}  // namespace strads
