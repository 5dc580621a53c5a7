// The data-parallel engine behind SyncFor (sync_for.h, docs/sync_for.md): declaring and
// replicating parameters, and one call from start to end. Its parts: parameters, copies and
// access hooks (sync_params.h); the call's workers and mini-batches (sync_call.h); the
// reconnaissance plan (sync_plan.h); what a clock's end sends and applies (sync_update.h);
// the clock drivers of BSP, SSP, Hybrid and the serial emulation (sync_clocks.h).
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "accumulators.h"
#include "checkpoint.h"
#include "collectives.h"
#include "loop_body_scope.h"
#include "node_context.h"
#include "strads/errors.h"
#include "strads/internal/bytes.h"
#include "strads/operators.h"
#include "strads/sync_for.h"
#include "sync_call.h"
#include "sync_clocks.h"
#include "sync_params.h"
#include "sync_plan.h"

namespace strads {
namespace internal {

namespace {

// Collective, before the clocks: the nodes agree on their mini-batch counts, make current
// every parameter whose contents changed on some node since all last agreed, and make the
// site's plan (if any) again if anything it depends on changed on any node.
void Prepare(SyncCall& call, SitePlan* plan, SyncSite site) {
  Runtime& rt = call.rt;
  const std::vector<uint32_t>& ids = call.ids;
  std::vector<uint8_t> stale(ids.size(), 0);
  for (size_t k = 0; k < ids.size(); ++k) {
    const SyncParam& p = call.engine.params[ids[k]];
    stale[k] = p.synced_version != rt.context().dds(ids[k]).version();
  }
  const bool replan = plan != nullptr && !plan->Fits(call);
  ByteWriter w;
  w.PutVector(stale);
  w.Put<int64_t>((call.local_count + call.minibatch - 1) / call.minibatch);
  w.Put<uint8_t>(replan ? 1 : 0);
  std::vector<uint8_t> any(ids.size(), 0);
  bool any_replan = false;
  for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
    ByteReader r(bytes);
    const auto theirs = r.GetVector<uint8_t>();
    if (theirs.size() != ids.size())
      throw UsageError("SyncFor at " + std::string(site.file) + ":" + std::to_string(site.line) +
                       ": the nodes declared different SyncFor parameters");
    for (size_t k = 0; k < any.size(); ++k) any[k] |= theirs[k];
    call.batches.push_back(r.Get<int64_t>());
    any_replan |= r.Get<uint8_t>() != 0;
  }
  if (call.serial) {
    call.batches.clear();
    for (int p = 0; p < call.nodes; ++p)
      call.batches.push_back(
          (call.serial_begin[p + 1] - call.serial_begin[p] + call.minibatch - 1) / call.minibatch);
  }
  for (size_t k = 0; k < ids.size(); ++k)
    if (any[k]) ReplicateRaw(rt, rt.context().dds(ids[k]));
  if (plan != nullptr) {
    if (any_replan) plan->Make(call);
    call.plan = plan;
  }
}

// Test mode runs SSP and Hybrid as BSP (noted once per site on node 0): their results
// depend on timing, so no serial execution is equivalent to them.
SyncOption ModeToRun(Runtime& rt, SyncEngine& engine, SyncOption option, const std::string& where) {
  if (rt.options().test_mode && option.mode != SyncOption::Mode::kBsp) {
    if (rt.leader() && engine.noted_test_mode.insert(where).second)
      std::fprintf(stderr, "strads: test mode: SyncFor at %s runs %s as BSP\n", where.c_str(),
                   option.mode == SyncOption::Mode::kSsp
                       ? ("SSP(" + std::to_string(option.staleness) + ")").c_str()
                       : "Hybrid");
    option = BSP();
  }
  return option;
}

// Throws on a call that cannot run: a topology this run cannot aggregate for, an input that is
// a parameter, a bad mini-batch size or staleness, a Hybrid call being recorded or replayed.
void CheckCall(Runtime& rt, const SyncEngine& engine, const DdsBase& data, int64_t minibatch,
               SyncOption option, const std::string& where) {
  if (const SyncTopology topology = rt.context().sync_topology();
      topology != SyncTopology{rt.nodes(), rt.threads()} && (rt.nodes() != 1 || rt.threads() != 1))
    throw CollectiveUsageError(
        "SyncFor at " + where + ": this run has " + std::to_string(rt.nodes()) + " node(s) of " +
        std::to_string(rt.threads()) + " thread(s), but " + rt.options().dual_in +
        " was written for " + std::to_string(topology.nodes) + "x" +
        std::to_string(topology.threads) + " workers: run with --nodes " +
        std::to_string(topology.nodes) + " --threads " + std::to_string(topology.threads) +
        ", or on one node of one thread");
  if (engine.params.at(data.id()).declared)
    throw UsageError("SyncFor at " + where + ": the input '" + data.name() +
                     "' is also a SyncFor parameter");
  if (minibatch < 1)
    throw UsageError("SyncFor at " + where + ": mini-batch size " + std::to_string(minibatch) +
                     " must be at least 1");
  if (option.mode == SyncOption::Mode::kSsp && option.staleness < 0)
    throw UsageError("SyncFor at " + where + ": SSP staleness " + std::to_string(option.staleness) +
                     " must be >= 0");
  // Hybrid's lock-free updates are data races: no log of ordering decisions can reproduce them.
  if (option.mode == SyncOption::Mode::kHybrid &&
      std::string(rt.context().ordering().mode()) != "live")
    throw CollectiveUsageError("SyncFor at " + where + ": Hybrid cannot be " +
                               rt.context().ordering().mode() +
                               "ed: its lock-free updates inside a node are data races that no "
                               "ordering log captures; use BSP or SSP(s) for a recorded run");
}

// After the clocks: the parameters the call changed have a new version, at which all nodes agree.
void MarkSynced(const SyncCall& call) {
  for (size_t k = 0; k < call.ids.size(); ++k) {
    DdsBase& dds = call.rt.context().dds(call.ids[k]);
    if (call.touched[k]) dds.bump_version();
    call.engine.params[call.ids[k]].synced_version = dds.version();
  }
}

}  // namespace

void DeclareSyncParameter(Runtime& rt, DdsBase& v, ScalarKind kind, RawAggregation custom) {
  SyncEngine& engine = EngineOf(rt);
  SyncParam& p = engine.params.at(v.id());
  if (!p.declared) {
    p.declared = true;
    p.synced_version = ~uint64_t{0};
  }
  p.kind = kind;
  if (custom) p.custom = std::move(custom);
}

void ReplicateRaw(Runtime& rt, DdsBase& v) {
  std::vector<std::byte> mine(v.raw_element(v.owned_begin()), v.raw_element(v.owned_end()));
  const auto all = rt.context().collectives().AllGather(std::move(mine));
  for (int p = 0; p < rt.nodes(); ++p) {
    if (p == rt.node()) continue;
    const int64_t b = v.owners().begin(p), e = v.owners().end(p);
    const size_t bytes = static_cast<size_t>(e - b) * v.element_bytes();
    if (all[p].size() != bytes) throw std::runtime_error("Replicate: message of the wrong size");
    if (bytes != 0) std::memcpy(v.raw_element(b), all[p].data(), bytes);
  }
  SyncEngine& engine = EngineOf(rt);
  if (v.id() < engine.params.size() && engine.params[v.id()].declared)
    engine.params[v.id()].synced_version = v.version();
}

void ReplicateDeclaredParameters(Runtime& rt) {
  SyncEngine& engine = EngineOf(rt);
  for (uint32_t d = 0; d < engine.params.size(); ++d)
    if (engine.params[d].declared) ReplicateRaw(rt, rt.context().dds(d));
}

void RunSyncFor(Runtime& rt, DdsBase& data, int64_t local_count, int64_t minibatch,
                FunctionRef<void(int64_t, int64_t, SyncWorkerId)> run, SyncOption option,
                bool reconnaissance, SyncSite site) {
  if (rt.context().checkpoints().SkipOperator("SyncFor", site.file, site.line)) return;
  const std::string where = std::string(site.file) + ":" + std::to_string(site.line);
  SyncEngine& engine = EngineOf(rt);
  option = ModeToRun(rt, engine, option, where);
  CheckCall(rt, engine, data, minibatch, option, where);
  // Nodes in another SyncFor, or in this one with another mini-batch, mode or data, stop at its
  // first message (the data's length per node may differ; its name may not).
  std::string name;
  if (rt.nodes() > 1) {
    const char* modes[] = {"BSP", "SSP", "Hybrid"};
    std::string arguments = data.name().empty() ? "over dvector " + std::to_string(data.id())
                                                : "over '" + data.name() + "'";
    arguments.append(", mini-batch ").append(std::to_string(minibatch));
    arguments.append(", ").append(modes[static_cast<int>(option.mode)]);
    if (option.mode == SyncOption::Mode::kSsp)
      arguments.append(" ").append(std::to_string(option.staleness));
    if (reconnaissance) arguments.append(", reconnaissance");
    name = OperatorName("SyncFor", site.file, site.line, arguments);
  }
  const Collectives::OperatorScope scope(rt.context().collectives(), std::move(name));
  const LoopBodyScope bodies("SyncFor", site.file, site.line);
  uint64_t& invocation = engine.invocations[where];
  const OperatorSite op{"SyncFor", site.file, site.line, invocation};
  rt.context().BeginOperator(op);
  AccumulatorCall accumulators(rt);
  SyncCall call(rt, engine, local_count, minibatch, run, option);
  bodies.Run([&] {  // the bodies run in these
    Prepare(call, reconnaissance ? &SitePlan::At(rt, where, data) : nullptr, site);
    RunClocks(call);
  });
  MarkSynced(call);
  accumulators.Flush();
  ++invocation;
  std::vector<uint32_t> declared;  // the parameters: what a SyncFor writes
  for (uint32_t d = 0; d < engine.params.size(); ++d)
    if (engine.params[d].declared) declared.push_back(d);
  rt.context().EndOperator(op, declared);
  if (DualTrace* dual = rt.context().dual()) {
    std::vector<DdsBase*> params;
    for (uint32_t d : declared) params.push_back(&rt.context().dds(d));
    params.insert(params.end(), Accumulators(rt).begin(), Accumulators(rt).end());
    const uint64_t state = Checksum(rt, params);  // collective
    dual->RecordSyncFor(where, state);
  }
}

}  // namespace internal
}  // namespace strads
