#include "strads/seam/policy_registry.h"

#include <cstdlib>
#include <map>
#include <mutex>

#include "strads/errors.h"

namespace strads {

namespace {

std::map<std::string, OrderingPolicyFactory>& Registry() {
  static std::map<std::string, OrderingPolicyFactory> registry;
  return registry;
}
std::mutex registry_mu;

}  // namespace

bool RegisterOrderingPolicy(const std::string& mode, OrderingPolicyFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mu);
  Registry()[mode] = factory;
  return true;
}

std::unique_ptr<OrderingPolicy> MakeRegisteredPolicy(const std::string& mode,
                                                     const PolicyNode& node,
                                                     const std::string& dir) {
  OrderingPolicyFactory factory = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    auto it = Registry().find(mode);
    if (it != Registry().end()) factory = it->second;
  }
  if (factory == nullptr)
    throw CollectiveUsageError("mode '" + mode +
                               "' was asked for (STRADS_* environment), but this "
                               "program was built without the strads " +
                               mode + "er: link it with strads::strads");
  return factory(node, dir);
}

std::unique_ptr<OrderingPolicy> MakeOrderingPolicy(const PolicyNode& node) {
  const char* record = std::getenv("STRADS_RECORD");
  const char* replay = std::getenv("STRADS_REPLAY");
  if (record && *record && replay && *replay)
    throw CollectiveUsageError("STRADS_RECORD and STRADS_REPLAY are both set");
  if (record && *record) return MakeRegisteredPolicy("record", node, record);
  if (replay && *replay) return MakeRegisteredPolicy("replay", node, replay);
  return std::make_unique<LiveOrderingPolicy>();
}

}  // namespace strads
