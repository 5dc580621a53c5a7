// The loop engines' side of accumulators (strads/accumulator.h): which mode their Add calls are
// in, and the exchange of buffered deltas at the end of an AsyncFor call.
#pragma once

#include <vector>

#include "strads/accumulator.h"
#include "strads/runtime.h"

namespace strads {

// This node's accumulators, in creation order (identical on every node).
const std::vector<internal::AccumulatorBase*>& Accumulators(Runtime& rt);

// While alive, Add calls on this node's accumulators do nothing (reconnaissance runs bodies
// whose effects are discarded); then they are as before (SyncFor reconnoitres inside its call).
class DiscardAccumulatorAdds {
 public:
  explicit DiscardAccumulatorAdds(Runtime& rt);
  ~DiscardAccumulatorAdds();
  DiscardAccumulatorAdds(const DiscardAccumulatorAdds&) = delete;
  DiscardAccumulatorAdds& operator=(const DiscardAccumulatorAdds&) = delete;

 private:
  Runtime& rt_;
  std::vector<internal::AccumulatorBase::Mode> before_;
};

// An AsyncFor or SyncFor call's execution: Add calls are buffered from the constructor on; Flush
// (collective) adds every node's deltas and makes Add direct again.
class AccumulatorCall {
 public:
  explicit AccumulatorCall(Runtime& rt);
  ~AccumulatorCall();  // Add is direct again (after an error, unflushed deltas stay buffered)
  AccumulatorCall(const AccumulatorCall&) = delete;
  AccumulatorCall& operator=(const AccumulatorCall&) = delete;
  void Flush();

 private:
  Runtime& rt_;
};

}  // namespace strads
