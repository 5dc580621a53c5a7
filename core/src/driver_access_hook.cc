#include "driver_access_hook.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "checkpoint.h"
#include "node_context.h"
#include "strads/runtime.h"

namespace strads {

DriverAccessHook::Held& DriverAccessHook::CurrentBlocks(const DdsBase& dds) {
  if (dds.id() >= held_.size()) held_.resize(dds.id() + 1);
  Held& held = held_[dds.id()];
  const uint64_t calls = rt_.context().collectives().calls();
  if (held.generation != generation_ || held.calls != calls || held.version != dds.version()) {
    held.firsts.clear();
    held.generation = generation_;
    held.calls = calls;
    held.version = dds.version();
  }
  return held;
}

std::byte* DriverAccessHook::Access(DdsBase& dds, int64_t index, bool write) {
  // A read before a restart's restore point gets this run's value (only a const access is
  // surely a read: a non-const one may only write, which the restore overwrites anyway).
  if (internal::Checkpointer& c = rt_.context().checkpoints(); !write && c.NeedsAccessNote())
      [[unlikely]]
    c.NoteAccessBeforeRestore("'" + dds.name() + "' element " + std::to_string(index));
  std::byte* element = dds.raw_element(index);
  if (rt_.nodes() == 1) {
    // The caller may write through the reference: cached copies of this DDS become stale.
    if (write) dds.bump_version();
    return element;
  }
  Held& held = CurrentBlocks(dds);
  const int owner = dds.owner(index);
  const int64_t owned_begin = dds.owners().begin(owner), owned_end = dds.owners().end(owner);
  const int64_t per_block =
      std::max<int64_t>(1, kBlockBytes / static_cast<int64_t>(dds.element_bytes()));
  const int64_t first = owned_begin + (index - owned_begin) / per_block * per_block;
  if (held.firsts.insert(first).second) {
    const size_t bytes =
        static_cast<size_t>(std::min(first + per_block, owned_end) - first) * dds.element_bytes();
    std::byte* block = dds.raw_element(first);
    std::vector<std::byte> value;
    if (owner == rt_.node()) value.assign(block, block + bytes);
    const std::string what =
        "'" + dds.name() + "' [" + std::to_string(first) + ", " +
        std::to_string(first + static_cast<int64_t>(bytes / dds.element_bytes())) + ")";
    value = rt_.context().collectives().DriverRead(owner, std::move(value), what);
    if (value.size() != bytes)
      throw std::runtime_error("strads: a driver read fetched a block of the wrong size");
    if (owner != rt_.node()) std::memcpy(block, value.data(), bytes);
    held.calls = rt_.context().collectives().calls();
  }
  if (write) {
    // Every node writes its copy alike, so the blocks stay current; other cached copies of this
    // DDS (a loop's) become stale.
    dds.bump_version();
    held.version = dds.version();
  }
  return element;
}

}  // namespace strads
