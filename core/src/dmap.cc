#include "strads/dmap.h"

#include <algorithm>

#include "memory_headroom.h"
#include "node_context.h"

namespace strads {

void MapBase::CheckDriver(const char* what) const {
  if (std::this_thread::get_id() != driver_)
    throw UsageError(std::string("map '") + name_ + "': " + what +
                     " is a collective driver access; it cannot be used inside loop bodies");
}

namespace internal {

void CheckPairsFitInMemory(Runtime& rt, const char* kind, const std::string& name, int64_t pairs,
                           size_t pair_bytes) {
  EnsureNodesHeadroom(rt.options(),
                      "node " + std::to_string(rt.node()) + ": " + kind + " '" + name + "'", pairs,
                      "pairs", pair_bytes);
}

MapRegistry& MapRegistry::Of(Runtime& rt) {
  static const std::string key = "strads.maps";
  if (auto* registry = dynamic_cast<MapRegistry*>(rt.context().loop_state(key))) return *registry;
  auto fresh = std::make_unique<MapRegistry>();
  MapRegistry& ref = *fresh;
  rt.context().set_loop_state(key, std::move(fresh));
  return ref;
}

}  // namespace internal
}  // namespace strads
