#include "strads/policy_registry.h"

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

std::unique_ptr<OrderingPolicy> MakeOrderingPolicy(Runtime& rt) {
  const char* record = std::getenv("STRADS_RECORD");
  const char* replay = std::getenv("STRADS_REPLAY");
  if (record && *record && replay && *replay)
    throw CollectiveUsageError("STRADS_RECORD and STRADS_REPLAY are both set");
  const char* dir = record && *record ? record : replay && *replay ? replay : nullptr;
  if (dir == nullptr) return std::make_unique<LiveOrderingPolicy>();
  const std::string mode = record && *record ? "record" : "replay";
  OrderingPolicyFactory factory = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    auto it = Registry().find(mode);
    if (it != Registry().end()) factory = it->second;
  }
  if (factory == nullptr)
    throw CollectiveUsageError("STRADS_" + std::string(mode == "record" ? "RECORD" : "REPLAY") +
                               " is set, but this program was built without the strads " + mode +
                               "er: link it with strads::strads");
  return factory(rt, dir);
}

}  // namespace strads
