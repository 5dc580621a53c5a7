#include "strads/seam/policy_registry.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

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
                                                     const std::string& argument) {
  OrderingPolicyFactory factory = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    auto it = Registry().find(mode);
    if (it != Registry().end()) factory = it->second;
  }
  if (factory == nullptr)
    throw CollectiveUsageError(
        "mode '" + mode +
        "' was asked for (STRADS_RECORD, STRADS_REPLAY or STRADS_POLICY), but this "
        "program was built without the strads " +
        mode + "er: link it with strads::strads");
  return factory(node, argument);
}

std::unique_ptr<OrderingPolicy> MakeOrderingPolicy(const PolicyNode& node) {
  struct Asked {  // a policy the environment asks for
    const char* variable;
    std::string mode, argument;
  };
  std::vector<Asked> asked;
  if (const char* dir = std::getenv("STRADS_RECORD"); dir && *dir)
    asked.push_back({"STRADS_RECORD", "record", dir});
  if (const char* dir = std::getenv("STRADS_REPLAY"); dir && *dir)
    asked.push_back({"STRADS_REPLAY", "replay", dir});
  if (const char* policy = std::getenv("STRADS_POLICY"); policy && *policy) {
    const std::string text = policy;
    const size_t colon = text.find(':');
    asked.push_back({"STRADS_POLICY", text.substr(0, colon),
                     colon == std::string::npos ? "" : text.substr(colon + 1)});
  }
  if (asked.size() > 1)
    throw CollectiveUsageError(std::string(asked[0].variable) + " and " + asked[1].variable +
                               " are both set: a run has one ordering policy");
  if (asked.empty()) return std::make_unique<LiveOrderingPolicy>();
  return MakeRegisteredPolicy(asked[0].mode, node, asked[0].argument);
}

}  // namespace strads
