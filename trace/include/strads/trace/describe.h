// Events and sites as text: one wording for `strads trace dump`, the replay's divergence reports
// and whatever else shows a trace to a person (the viewer, the gdb plugin).
#pragma once

#include <cstdint>
#include <string>

#include "strads/trace/event.h"

namespace strads {

// One line, e.g. "lock_grant lock 17 task 5000 (acquire 1 of thread 1, after thread 0 released
// it at count 3)", "choice task_dispatch = 1", "operator_end AsyncFor at sgdmf.cc:120
// (invocation 2)", "wait for lock 17 by thread 1: 52000 ns". Fields that the kind does not use
// are appended when not 0 (" c=7"): only writers other than strads's set them. Operator times
// are left out (EventTimeNs has them), so that two runs' same decisions read the same.
std::string Describe(const Event& event, const TraceSites& sites);

// "AsyncFor at sgdmf.cc:120" (the file's base name), "'data/ratings.txt'" for an input file,
// "(undefined site 7)".
std::string DescribeSite(const TraceSites& sites, uint64_t id);

// 16 lower-case hex digits: how digests and checksums are shown.
std::string Hex16(uint64_t value);

}  // namespace strads
