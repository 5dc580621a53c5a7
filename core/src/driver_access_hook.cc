#include "driver_access_hook.h"

#include <cstring>

#include "node_context.h"
#include "strads/runtime.h"

namespace strads {

std::byte* DriverAccessHook::Access(DdsBase& dds, int64_t index, bool write) {
  std::byte* element = dds.raw_element(index);
  // The caller may write through the reference: cached copies of this DDS become stale.
  if (write) dds.bump_version();
  if (rt_.nodes() == 1) return element;
  const int owner = dds.owner(index);
  std::vector<std::byte> value;
  if (owner == rt_.node()) value.assign(element, element + dds.element_bytes());
  value = rt_.context().collectives().Broadcast(owner, std::move(value));
  if (value.size() != dds.element_bytes())
    throw std::runtime_error("strads: element broadcast of the wrong size");
  std::memcpy(element, value.data(), value.size());
  return element;
}

}  // namespace strads
