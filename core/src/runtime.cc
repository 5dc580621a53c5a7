#include "strads/runtime.h"

#include <cstdio>
#include <cstdlib>

#include "driver_access_hook.h"
#include "record_overhead_meter.h"
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
  sync_topology_ = {nodes_, threads_};
  if (options.sync_workers.nodes > 0 && !(nodes_ == 1 && threads_ == 1) &&
      options.sync_workers != sync_topology_)
    throw CollectiveUsageError(
        "--sync-workers emulates P nodes of T threads serially: run it on one node of one "
        "thread (--nodes 1 --threads 1, no mpiexec)");
  if (!options.dual_in.empty() || !options.dual_out.empty()) {
    dual_ = std::make_unique<DualTrace>(options.dual_in, options.dual_out, leader());
    const std::optional<SyncTopology> followed = dual_->followed_workers();
    if (options.sync_workers.nodes > 0 && followed && *followed != options.sync_workers)
      throw CollectiveUsageError("--sync-workers " + std::to_string(options.sync_workers.nodes) +
                                 "x" + std::to_string(options.sync_workers.threads) +
                                 " contradicts " + options.dual_in + ", written for " +
                                 std::to_string(followed->nodes) + "x" +
                                 std::to_string(followed->threads) + " workers");
    if (followed) sync_topology_ = *followed;
  }
  if (options.sync_workers.nodes > 0) sync_topology_ = options.sync_workers;
  if (dual_) dual_->Start(sync_topology_);
  if (const char* dir = std::getenv("STRADS_RECORD_OVERHEAD"); dir && *dir) {
    if (std::string(ordering_->mode()) != "live" || options.chaos)
      throw CollectiveUsageError(
          "STRADS_RECORD_OVERHEAD compares recorded and live operators: unset STRADS_RECORD and "
          "STRADS_REPLAY, and drop --chaos");
    overhead_ = std::make_unique<RecordOverheadMeter>(MakeRegisteredPolicy("record", *this, dir));
  }
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

void Runtime::BeginOperator(const OperatorSite& site) {
  if (overhead_) overhead_->Begin(site, ordering_);
  ordering_->OperatorBegin(site);
}

void Runtime::EndOperator(const OperatorSite& site) {
  ordering_->OperatorEnd(site);
  if (overhead_) overhead_->End(site, ordering_);
}

void Runtime::FinishOrdering(bool ok) {
  ordering_->Finish(ok);
  if (!overhead_) return;
  overhead_->Finish(ok);
  if (!ok || !leader()) return;
  std::fflush(stdout);
  std::fputs(overhead_->Report().c_str(), stderr);
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
