#include "sync_params.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "node_context.h"
#include "strads/errors.h"

namespace strads {
namespace internal {

namespace {
thread_local SyncWorker* current_worker = nullptr;
}  // namespace

void ParamCopy::Take(DdsBase& dds, uint64_t now, const std::vector<int64_t>* list) {
  const size_t want = static_cast<size_t>(dds.size()) * dds.element_bytes();
  if (list == nullptr && fresh == now && bytes == want && storage) {
    stamp = now;
    return;
  }
  if (bytes != want || !storage) {
    storage =
        std::make_unique_for_overwrite<double[]>((want + sizeof(double) - 1) / sizeof(double));
    bytes = want;
  }
  if (list == nullptr) {
    if (want != 0) std::memcpy(data(), dds.raw(), want);
  } else {
    const size_t eb = dds.element_bytes();
    for (int64_t i : *list)
      std::memcpy(data() + static_cast<size_t>(i) * eb, dds.raw_element(i), eb);
  }
  stamp = now;
}

WorkerScope::WorkerScope(SyncWorker* worker) {
  current_worker = worker;
  direct_bases = {worker->direct.data(), static_cast<uint32_t>(worker->direct.size())};
}
WorkerScope::~WorkerScope() {
  current_worker = nullptr;
  direct_bases = {};
}

void SyncEngine::BeginClock() {
  ++stamp;
  for (SyncWorker& w : workers) std::fill(w.direct.begin(), w.direct.end(), nullptr);
}

std::vector<std::byte*> SyncEngine::CopiesThisClock(uint32_t d, int64_t active, bool hybrid) {
  std::vector<std::byte*> copies;
  if (hybrid) {
    SharedCopy* s = shared[d].get();
    if (active > 0 && s != nullptr && s->stamp.load() == stamp) copies.assign(1, s->copy.data());
    return copies;
  }
  bool any = false;
  copies.assign(static_cast<size_t>(active), nullptr);
  for (int64_t t = 0; t < active; ++t) {
    ParamCopy& copy = workers[static_cast<size_t>(t)].copies[d];
    if (copy.stamp == stamp) copies[static_cast<size_t>(t)] = copy.data(), any = true;
  }
  if (!any) copies.clear();
  return copies;
}

void SyncEngine::EnsureWorkers(int threads, size_t dds_count) {
  // Never shrinks: an emulating call may have grown it to the emulated threads.
  if (workers.size() < static_cast<size_t>(threads)) workers.resize(static_cast<size_t>(threads));
  for (SyncWorker& w : workers) {
    if (w.copies.size() < dds_count) w.copies.resize(dds_count);
    if (w.direct.size() < dds_count) w.direct.resize(dds_count, nullptr);
  }
}

SyncEngine& EngineOf(Runtime& rt) {
  static const std::string key = "SyncFor#engine";
  auto* engine = dynamic_cast<SyncEngine*>(rt.context().loop_state(key));
  if (engine == nullptr) {
    auto fresh = std::make_unique<SyncEngine>();
    engine = fresh.get();
    rt.context().set_loop_state(key, std::move(fresh));
  }
  const size_t n = rt.context().dds_count();
  if (engine->params.size() < n) engine->params.resize(n);
  if (engine->shared.size() < n) engine->shared.resize(n);
  if (engine->take.size() < n) engine->take.resize(n, nullptr);
  if (engine->allowed.size() < n) engine->allowed.resize(n, nullptr);
  engine->EnsureWorkers(rt.threads(), n);
  return *engine;
}

std::byte* ParamHook::Access(DdsBase& dds, int64_t index, bool) {
  const uint32_t id = dds.id();
  if (engine_.allowed[id] != nullptr || hybrid_) return AccessCheckedOrShared(dds, index);
  // The common path (BSP or SSP, nothing checked per access) comes here once per worker,
  // parameter and clock: later accesses index the copy directly (DirectBases in dds.h).
  SyncWorker* w = current_worker;
  if (w == nullptr) OutsideWorkers(dds);
  ++w->hooked_accesses;
  ParamCopy& c = w->copies[id];
  if (c.stamp != engine_.stamp) c.Take(dds, engine_.stamp, engine_.take[id]);
  w->direct[id] = c.data();
  return c.data() + static_cast<size_t>(index) * dds.element_bytes();
}

void ParamHook::OutsideWorkers(DdsBase& dds) {
  throw UsageError("SyncFor parameter '" + dds.name() +
                   "' accessed outside the loop's worker threads");
}

std::byte* ParamHook::AccessCheckedOrShared(DdsBase& dds, int64_t index) {
  const size_t offset = static_cast<size_t>(index) * dds.element_bytes();
  const uint64_t now = engine_.stamp;
  const uint32_t id = dds.id();
  if (const std::vector<uint8_t>* allowed = engine_.allowed[id];
      allowed != nullptr && (*allowed)[static_cast<size_t>(index)] == 0) [[unlikely]]
    throw UsageError("SyncFor parameter '" + dds.name() + "' element " + std::to_string(index) +
                     " accessed, but no body of this node accessed it during reconnaissance: "
                     "the loop's control flow is not static");
  if (hybrid_) {
    SharedCopy& s = *engine_.shared[id];
    if (s.stamp.load(std::memory_order_acquire) != now) {
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.stamp.load(std::memory_order_relaxed) != now) {
        s.copy.Take(dds, now, engine_.take[id]);
        s.stamp.store(now, std::memory_order_release);
      }
    }
    return s.copy.data() + offset;
  }
  SyncWorker* w = current_worker;
  if (w == nullptr) OutsideWorkers(dds);
  ParamCopy& c = w->copies[id];
  if (c.stamp != now) c.Take(dds, now, engine_.take[id]);
  return c.data() + offset;  // never indexed directly: every access is checked
}

std::byte* NotAParameterHook::Access(DdsBase& dds, int64_t index, bool) {
  throw UsageError("DDS '" + dds.name() + "' element " + std::to_string(index) +
                   " accessed in a SyncFor body, but it is not a SyncFor parameter: declare "
                   "parameters with strads::Replicate(rt, v) before the loop, and read the "
                   "input through the batch span");
}

ParamAccessScope::ParamAccessScope(Runtime& rt, const std::vector<uint32_t>& ids,
                                   AccessHook& param_hook)
    : guard_(rt) {
  for (uint32_t d = 0; d < rt.context().dds_count(); ++d)
    rt.context().dds(d).set_hook(&not_a_parameter_);
  for (uint32_t d : ids) rt.context().dds(d).set_hook(&param_hook);
}

}  // namespace internal
}  // namespace strads
