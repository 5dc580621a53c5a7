// DriverAccessHook: DDS element access from driver code. Every node makes the same accesses
// in the same order (control replication), so an access is a broadcast from the owner: each
// node then holds the owner's value in its array and the returned reference is to it.
#pragma once

#include "strads/internal/dds.h"

namespace strads {

class Runtime;

class DriverAccessHook : public AccessHook {
 public:
  explicit DriverAccessHook(Runtime& rt) : rt_(rt) {}
  std::byte* Access(DdsBase& dds, int64_t index, bool write) override;

 private:
  Runtime& rt_;
};

}  // namespace strads
