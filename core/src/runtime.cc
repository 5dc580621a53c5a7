#include "strads/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <utility>

#include "accumulators.h"
#include "chaos_ordering_policy.h"
#include "checkpoint.h"
#include "driver_access_hook.h"
#include "in_process_transport.h"
#include "loop_body_scope.h"
#include "node_context.h"
#include "outcome_digest.h"
#include "record_overhead_meter.h"
#include "strads/errors.h"
#include "strads/internal/body_failure.h"
#include "strads/internal/bytes.h"
#include "strads/internal/dds_array.h"
#include "strads/seam/policy_registry.h"

namespace strads {

namespace {
thread_local Runtime* current_runtime = nullptr;
thread_local const internal::LoopBodyScope* running_loop = nullptr;
thread_local internal::BodyFailure body_failure;
// The exception a body threw, and the loop and body it left (LoopBodyScope::NoteFailure).
struct LoopFailure {
  std::exception_ptr exception;
  std::string note;
};
thread_local LoopFailure loop_failure;
}  // namespace

namespace internal {

LoopBodyScope::LoopBodyScope(const char* kind, const char* file, uint32_t line)
    : kind_(kind), file_(file), line_(line), outer_(running_loop) {
  running_loop = this;
}

LoopBodyScope::~LoopBodyScope() { running_loop = outer_; }

const LoopBodyScope* LoopBodyScope::Running() { return running_loop; }

std::string LoopBodyScope::Describe() const {
  std::string d = kind_;
  if (file_[0] != '\0') d += std::string(" at ") + file_ + ":" + std::to_string(line_);
  return d;
}

void LoopBodyScope::NoteFailure() const {
  std::exception_ptr thrown = std::current_exception();
  if (!thrown || body_failure.exception != thrown) return;  // the engine's own error
  const std::string_view kind = kind_;
  const char* body = kind == "SyncFor"       ? "the mini-batch from index "
                     : kind == "ParallelFor" ? "piece "
                                             : "the body of index ";
  loop_failure = {std::move(thrown),
                  " (in " + Describe() + ", " + body + std::to_string(body_failure.index) + ")"};
}

std::string LoopBodyScope::FailureNote() {
  const std::exception_ptr thrown = std::current_exception();
  return thrown && loop_failure.exception == thrown ? loop_failure.note : "";
}

void NoteBodyFailure(int64_t index) {
  std::exception_ptr thrown = std::current_exception();
  if (body_failure.exception != thrown) body_failure = {std::move(thrown), index};
}

BodyFailure TakeBodyFailure() { return std::exchange(body_failure, {}); }

void AdoptBodyFailure(BodyFailure failure) {
  if (failure.exception) body_failure = std::move(failure);
}

}  // namespace internal

Runtime::Runtime(const internal::NodeSetup& setup)
    : options_(setup.options),
      node_(setup.transport->node()),
      nodes_(setup.transport->nodes()),
      threads_(setup.options.threads < 1 ? 1 : setup.options.threads),
      rng_(setup.options.seed),
      context_(std::make_unique<internal::NodeContext>(*this, setup)) {
  context_->Start();
  current_runtime = this;
}

Runtime::~Runtime() {
  if (current_runtime == this) current_runtime = nullptr;
}

Runtime& Runtime::Current() {
  if (current_runtime == nullptr)
    throw UsageError("strads: no runtime on this thread: call operators from the driver");
  if (const internal::LoopBodyScope* loop = internal::LoopBodyScope::Running())
    throw UsageError("strads: an operator called from inside a body of " + loop->Describe() +
                     ": loops and the other operators are calls of the driver, made on every "
                     "node alike; call it before or after the loop");
  return *current_runtime;
}

const std::vector<int64_t>& Runtime::last_serial_order() const {
  static const std::vector<int64_t> none;
  if (!last_serial_order_ && last_serial_order_source_)
    last_serial_order_ = std::make_shared<const std::vector<int64_t>>(last_serial_order_source_());
  return last_serial_order_ ? *last_serial_order_ : none;
}

namespace internal {

NodeContext::NodeContext(Runtime& rt, const NodeSetup& setup)
    : rt_(rt),
      transport_(*setup.transport),
      inject_bug_(setup.inject_bug),
      shared_files_(setup.shared_files),
      shared_plans_(setup.shared_plans),
      collectives_(transport_, setup.options.timeout),
      pool_(rt.threads()),
      driver_hook_(std::make_unique<DriverAccessHook>(rt)),
      sync_topology_{rt.nodes(), rt.threads()} {}

NodeContext::~NodeContext() = default;

PolicyNode NodeContext::policy_node() {
  return {rt_.node(),
          rt_.nodes(),
          rt_.threads(),
          rt_.options().timeout,
          [this] { collectives_.Barrier(); },
          [this](uint64_t value) {
            ByteWriter w;
            w.Put(value);
            return ByteReader(collectives_.Broadcast(0, w.Take())).Get<uint64_t>();
          }};
}

void NodeContext::Start() {
  const RuntimeOptions& options = rt_.options();
  ordering_ = MakeOrderingPolicy(policy_node());
  if (options.sync_workers.nodes > 0 && !(rt_.nodes() == 1 && rt_.threads() == 1) &&
      options.sync_workers != sync_topology_)
    throw CollectiveUsageError(
        "--sync-workers emulates P nodes of T threads serially: run it on one node of one "
        "thread (--nodes 1 --threads 1, no mpiexec)");
  if (!options.dual_in.empty() || !options.dual_out.empty()) {
    dual_ = std::make_unique<DualTrace>(options.dual_in, options.dual_out, rt_.leader());
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
    overhead_ =
        std::make_unique<RecordOverheadMeter>(MakeRegisteredPolicy("record", policy_node(), dir));
  }
  if (options.chaos)
    ordering_ = std::make_unique<ChaosOrderingPolicy>(std::move(ordering_), *options.chaos,
                                                      rt_.node(), rt_.threads());
  // The observer calls through ordering_ each time: the overhead meter swaps the policy per
  // operator.
  collectives_.set_wait_observer([this](int source, uint64_t begin_ns, uint64_t duration_ns) {
    ordering_->Waited(WaitKind::kCollective, source, begin_ns, duration_ns);
  });
  if (options.nodes > 1) collectives_.set_mismatch_hint(SharedGlobalsHint());
  checkpoints_ = std::make_unique<Checkpointer>(rt_, *this);
}

void NodeContext::BeginOperator(const OperatorSite& site) {
  driver_hook_->Forget();
  if (overhead_) overhead_->Begin(site, ordering_);
  ordering_->OperatorBegin(site);
}

void NodeContext::EndOperator(const OperatorSite& site, std::span<const uint32_t> written) {
  driver_hook_->Forget();
  ordering_->OperatorEnd(site);
  ordering_->OperatorOutcome(site, [&] {
    // Four lanes of FNV-1a over 64-bit words a block (outcome_digest.h, FORMAT.md), for a pass
    // over every written element of the node after every operator.
    Fnv1a hash;
    const auto hash_owned = [&hash](DdsBase& v) {
      const std::byte* p = v.raw_element(v.owned_begin());
      FoldOutcomeBytes(hash, p, static_cast<size_t>(v.raw_element(v.owned_end()) - p));
    };
    for (uint32_t d : written) hash_owned(*dds_.at(d));
    // Accumulator adds are no DDS writes (they never conflict), so `written` never lists them;
    // a loop that changed only an accumulator's values must still show in its outcome.
    for (DdsBase* a : Accumulators(rt_)) hash_owned(*a);
    const uint64_t h = hash.digest();
    return (h ^ (h >> 32)) & 0xffffffffu;
  });

  if (overhead_) overhead_->End(site, ordering_);
  checkpoints_->OperatorEnded(site.kind, site.file, site.line);
}

size_t NodeContext::LoopStateBytes() const {
  size_t bytes = 0;
  for (const auto& [key, state] : loop_states_) bytes += state->HeldBytes();
  return bytes;
}

void NodeContext::FinishOrdering(bool ok) {
  ordering_->Finish(ok);
  if (!overhead_) return;
  overhead_->Finish(ok);
  if (!ok || !rt_.leader()) return;
  std::fflush(stdout);
  std::fputs(overhead_->Report().c_str(), stderr);
}

void NodeContext::AdoptDds(std::unique_ptr<DdsBase> dds) {
  // Making a DDS is collective: a length that differs between nodes (a node sizing it by its
  // own share of a file, say) would give each node other owners for the same elements, and
  // reductions and loops silently wrong results. A stamped barrier stops it here, naming both.
  if (transport_.nodes() > 1) {
    const Collectives::OperatorScope scope(
        collectives_, "making the DDS '" + dds->name() + "' (" + std::to_string(dds->size()) +
                          " elements of " + std::to_string(dds->element_bytes()) + " bytes)");
    collectives_.Barrier();
  }
  dds->set_hook(driver_hook_.get());
  // Before the operators write the owned range: a page is huge only if it is faulted in after
  // the advice.
  if (internal::DdsArray* array = dds->array())
    array->AdviseHugePages(static_cast<size_t>(dds->owned_begin()) * dds->element_bytes(),
                           static_cast<size_t>(dds->owned_end()) * dds->element_bytes());
  dds_.push_back(std::move(dds));
}

LoopState* NodeContext::loop_state(const std::string& key) {
  auto it = loop_states_.find(key);
  return it == loop_states_.end() ? nullptr : it->second.get();
}

void NodeContext::set_loop_state(const std::string& key, std::unique_ptr<LoopState> state) {
  loop_states_[key] = std::move(state);
}

// node_services.h: what the API's templates reach through a Runtime.
uint32_t NextDdsId(Runtime& rt) { return rt.context().next_dds_id(); }
void AdoptDds(Runtime& rt, std::unique_ptr<DdsBase> dds) { rt.context().AdoptDds(std::move(dds)); }
std::vector<std::vector<std::byte>> AllGather(Runtime& rt, std::vector<std::byte> mine,
                                              std::string what) {
  return rt.context().collectives().AllGather(std::move(mine), std::move(what));
}
std::vector<std::vector<std::byte>> AllToAll(Runtime& rt,
                                             std::vector<std::vector<std::byte>> outgoing) {
  return rt.context().collectives().AllToAll(std::move(outgoing));
}
std::vector<std::byte> Broadcast(Runtime& rt, int root, std::vector<std::byte> data) {
  return rt.context().collectives().Broadcast(root, std::move(data));
}
int64_t SumOverNodes(Runtime& rt, int64_t mine) { return rt.context().collectives().Sum(mine); }
bool ReplayedReduction(Runtime& rt, void* out, size_t bytes) {
  return rt.context().checkpoints().ReplayedReduction(out, bytes);
}
void NoteReduction(Runtime& rt, const void* result, size_t bytes) {
  rt.context().checkpoints().NoteReduction(result, bytes);
}

}  // namespace internal
}  // namespace strads
