#include "strads/runtime.h"

#include "driver_access_hook.h"
#include "strads/chaos_ordering_policy.h"
#include "strads/dds.h"
#include "strads/errors.h"
#include "strads/policy_registry.h"

namespace strads {

namespace {
thread_local Runtime* current_runtime = nullptr;
}

Runtime::Runtime(const RuntimeOptions& options, Transport& transport)
    : options_(options),
      transport_(transport),
      node_(transport.node()),
      nodes_(transport.nodes()),
      threads_(options.threads < 1 ? 1 : options.threads),
      collectives_(transport, options.timeout),
      pool_(threads_),
      rng_(options.seed),
      driver_hook_(std::make_unique<DriverAccessHook>(*this)) {
  ordering_ = MakeOrderingPolicy(*this);
  if (options.chaos)
    ordering_ = std::make_unique<ChaosOrderingPolicy>(std::move(ordering_), *options.chaos, node_,
                                                      threads_);
  current_runtime = this;
}

Runtime::~Runtime() {
  if (current_runtime == this) current_runtime = nullptr;
}

Runtime& Runtime::Current() {
  if (current_runtime == nullptr)
    throw UsageError("strads: no runtime on this thread: call operators from the driver");
  return *current_runtime;
}

void Runtime::SetOrderingPolicy(std::unique_ptr<OrderingPolicy> policy) {
  ordering_ = std::move(policy);
}

void Runtime::AdoptDds(std::unique_ptr<DdsBase> dds) {
  dds->set_hook(driver_hook_.get());
  dds_.push_back(std::move(dds));
}

LoopState* Runtime::loop_state(const std::string& key) {
  auto it = loop_states_.find(key);
  return it == loop_states_.end() ? nullptr : it->second.get();
}

void Runtime::set_loop_state(const std::string& key, std::unique_ptr<LoopState> state) {
  loop_states_[key] = std::move(state);
}

}  // namespace strads
