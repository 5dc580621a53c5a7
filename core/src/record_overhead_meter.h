// RecordOverheadMeter: what recording costs, measured in one run (STRADS_RECORD_OVERHEAD=DIR).
//
// Every operator call site alternates: invocation 0 runs live (it includes reconnaissance and
// planning, and is not counted), odd invocations run under the Record policy (writing into DIR),
// even ones live again. Each invocation is timed from just before the policy's OperatorBegin to
// just after its OperatorEnd; a recorded one also until the writer thread has encoded its events
// (OrderingPolicy::Drain), so the time the writer takes from the workers (with no spare core, all
// of it) is charged to it. Periodic writes to the file (one a second) fall on either half.
// Both halves run in the same process on the same data and memory, in alternation, so a noisy
// machine shifts both alike. At the end node 0 prints, per site, the median time of each half and
// their ratio, in wall time and in the process's CPU time (all threads, the writer's included):
// on a machine loaded past its cores a worker's time descheduled inflates the wall time of
// whichever half it falls on, and not the CPU time (spinning on a lock whose holder is
// descheduled still counts). DIR then holds a trace of the odd invocations only: it cannot be
// replayed.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "strads/seam/ordering.h"

namespace strads {

class RecordOverheadMeter {
 public:
  explicit RecordOverheadMeter(std::unique_ptr<OrderingPolicy> record);

  // Around one operator invocation: Begin may swap `current` (the runtime's policy) with the
  // Record policy, End swaps it back.
  void Begin(const OperatorSite& site, std::unique_ptr<OrderingPolicy>& current);
  void End(const OperatorSite& site, std::unique_ptr<OrderingPolicy>& current);
  // Finishes the Record policy (the runtime finishes its own).
  void Finish(bool ok);
  // "record overhead at sgdmf.cc:59 (AsyncFor/locks): live 52.1 ms, recorded 54.0 ms (medians
  // of 10 and 10 invocations): 1.036x; CPU time live 104.2 ms, recorded 107.5 ms: 1.032x", one
  // line per site that ran both ways.
  std::string Report() const;

 private:
  struct Times {
    std::vector<double> live, recorded;          // seconds per invocation
    std::vector<double> live_cpu, recorded_cpu;  // the process's CPU seconds per invocation
  };

  std::unique_ptr<OrderingPolicy> parked_;  // the policy not in use
  std::chrono::steady_clock::time_point start_;
  double cpu_start_ = 0;  // the process's CPU seconds at Begin
  std::map<std::string, Times> by_site_;
};

}  // namespace strads
