#include "strads/internal/dds.h"

#include <string>

#include "strads/errors.h"

namespace strads {

void DdsBase::OutOfRange(int64_t index) const {
  throw UsageError("index " + std::to_string(index) + " out of range for DDS '" + name_ +
                   "' of size " + std::to_string(size_));
}

void DdsBase::SaveOwned(ByteWriter&) const {
  throw UsageError("DDS '" + name_ + "' cannot be checkpointed: its kind has no SaveOwned");
}

void DdsBase::RestoreOwned(ByteReader&) {
  throw UsageError("DDS '" + name_ + "' cannot be restored: its kind has no RestoreOwned");
}

}  // namespace strads
