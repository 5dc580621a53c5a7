// The clocks of one SyncFor call, one driver per mode. Every clock runs the node's
// mini-batches of that clock on its workers, then ends as the mode says:
//   BSP     every node's update goes to every node; all apply all of them alike (ApplyBsp);
//   Hybrid  the same, the threads of a node sharing one copy of each parameter (Hogwild);
//   SSP     the node applies its own update and broadcasts it; the others' updates are
//           applied as they arrive, within the staleness bound;
//   serial  BSP of the emulated topology: every emulated node's clock in turn on this thread,
//           then the same ApplyBsp (test mode runs only BSP, so the serial driver is BSP's).
#pragma once

#include "sync_call.h"

namespace strads {
namespace internal {

// Collective: runs every clock of `call` with the driver of its mode; parameters whose values
// changed are marked in call.touched.
void RunClocks(SyncCall& call);

}  // namespace internal
}  // namespace strads
