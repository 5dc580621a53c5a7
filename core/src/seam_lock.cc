#include "strads/seam/seam_lock.h"

namespace strads {

uint64_t SeamLock::TakeWhenReleased() {
  return TakeWhenReleased(kAnyRelease, [] {});
}

}  // namespace strads
