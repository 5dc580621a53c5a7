#include "sync_plan.h"

#include <memory>
#include <stdexcept>

#include "accumulators.h"
#include "node_context.h"
#include "recon_hook.h"
#include "strads/internal/bytes.h"

namespace strads {
namespace internal {

namespace {

std::vector<int64_t> ListOf(const std::vector<uint8_t>& marks) {
  std::vector<int64_t> list;
  for (size_t i = 0; i < marks.size(); ++i)
    if (marks[i]) list.push_back(static_cast<int64_t>(i));
  return list;
}

// Runs node p's mini-batches with parameter accesses recorded: a bitmap per parameter.
std::vector<std::vector<uint8_t>> Reconnoitre(const SyncCall& call, int p) {
  Runtime& rt = call.rt;
  std::vector<std::vector<uint8_t>> marks(call.ids.size());
  std::vector<std::vector<uint8_t>*> marks_of(rt.context().dds_count(), nullptr);  // by DDS id
  for (size_t k = 0; k < call.ids.size(); ++k) {
    marks[k].assign(static_cast<size_t>(rt.context().dds(call.ids[k]).size()), 0);
    marks_of[call.ids[k]] = &marks[k];
  }
  ReconHook record(rt, ReconHook::Values::kCurrent);
  ParamAccessScope scope(rt, call.ids, record);
  DiscardAccumulatorAdds discard(rt);
  for (int64_t m = 0; m < call.Batches(p); ++m) {
    record.BeginBody();
    const auto [begin, end] = call.MiniBatch(p, m);
    call.body(begin, end, call.Worker(p, static_cast<int>(m % call.threads)));
    for (const Touch& t : record.touches()) (*marks_of[t.dds])[static_cast<size_t>(t.index)] = 1;
  }
  return marks;
}

}  // namespace

SitePlan& SitePlan::At(Runtime& rt, const std::string& where, const DdsBase& data) {
  const std::string key = "SyncFor-RE@" + where + "#" + std::to_string(data.id());
  auto* plan = dynamic_cast<SitePlan*>(rt.context().loop_state(key));
  if (plan == nullptr) {
    auto fresh = std::make_unique<SitePlan>();
    plan = fresh.get();
    rt.context().set_loop_state(key, std::move(fresh));
  }
  return *plan;
}

bool SitePlan::Fits(const SyncCall& call) const {
  return valid && ids == call.ids && local_count == call.local_count &&
         minibatch == call.minibatch && topology == SyncTopology{call.nodes, call.threads};
}

void SitePlan::Make(const SyncCall& call) {
  Runtime& rt = call.rt;
  const int nodes = call.nodes;
  const std::vector<uint32_t>& ids_now = call.ids;
  valid = false;
  need.assign(ids_now.size(), std::vector<std::vector<int64_t>>(nodes));
  mine.assign(nodes, {});
  if (call.serial) {
    for (int p = 0; p < nodes; ++p) {
      mine[p] = Reconnoitre(call, p);
      for (size_t k = 0; k < ids_now.size(); ++k) need[k][p] = ListOf(mine[p][k]);
    }
  } else {
    mine[call.me] = Reconnoitre(call, call.me);
    ByteWriter w;
    for (size_t k = 0; k < ids_now.size(); ++k) w.PutVector(ListOf(mine[call.me][k]));
    const auto gathered = rt.context().collectives().AllGather(w.Take());
    for (int p = 0; p < nodes; ++p) {
      ByteReader r(gathered[p]);
      for (size_t k = 0; k < ids_now.size(); ++k) {
        need[k][p] = r.GetVector<int64_t>();
        for (int64_t i : need[k][p])
          if (i < 0 || i >= rt.context().dds(ids_now[k]).size())
            throw std::runtime_error("SyncFor: bad element index in a reconnaissance message");
      }
    }
  }
  all.assign(ids_now.size(), {});
  for (size_t k = 0; k < ids_now.size(); ++k) {
    std::vector<uint8_t> any(static_cast<size_t>(rt.context().dds(ids_now[k]).size()), 0);
    for (int p = 0; p < nodes; ++p)
      for (int64_t i : need[k][p]) any[static_cast<size_t>(i)] = 1;
    all[k] = ListOf(any);
  }
  ids = ids_now;
  local_count = call.local_count;
  minibatch = call.minibatch;
  topology = {nodes, call.threads};
  valid = true;
}

}  // namespace internal
}  // namespace strads
