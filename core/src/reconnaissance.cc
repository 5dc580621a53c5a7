#include "reconnaissance.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "access_check.h"
#include "accumulators.h"
#include "node_context.h"
#include "strads/errors.h"
#include "strads/internal/dds.h"

namespace strads {

namespace {
constexpr int kMaxReconPasses = 8;
}

HookGuard::~HookGuard() {
  for (uint32_t d = 0; d < rt_.context().dds_count(); ++d)
    rt_.context().dds(d).set_hook(rt_.context().driver_hook());
}

ReconResult Reconnoitre(Runtime& rt, const std::string& site, int64_t first, int64_t last,
                        FunctionRef<void(int64_t)> body) {
  ReconResult res;
  const EvenSplit share(last - first + 1, rt.nodes());
  res.share_begin = share.begin(rt.node());
  res.share_count = share.end(rt.node()) - res.share_begin;
  res.offsets.assign(static_cast<size_t>(res.share_count) + 1, 0);
  const bool digests = rt.options().access_check != AccessCheck::kOff;
  if (digests) res.digests.assign(static_cast<size_t>(res.share_count), 0);
  const size_t dds_count = rt.context().dds_count();
  if (dds_count > PackedTouch::kMaxDds)
    throw UsageError("AsyncFor at " + site + ": more than " + std::to_string(PackedTouch::kMaxDds) +
                     " DDSs");
  // Bodies that complete after the first pass (they missed a read), apart: (body, begin, count).
  std::vector<PackedTouch> late;
  std::vector<std::tuple<int64_t, uint64_t, uint64_t>> late_where;
  ReconHook hook(rt, ReconHook::Values::kFetchMisses);
  {
    DiscardAccumulatorAdds discard(rt);
    HookGuard guard(rt);
    for (uint32_t d = 0; d < dds_count; ++d) rt.context().dds(d).set_hook(&hook);
    std::vector<int64_t> pending(res.share_count);
    std::iota(pending.begin(), pending.end(), 0);
    for (int pass = 0;; ++pass) {
      std::vector<int64_t> retry;
      for (int64_t k : pending) {
        hook.BeginBody();
        body(first + res.share_begin + k);
        if (pass == 0) res.offsets[k] = res.touches.size();
        if (hook.missed()) {
          retry.push_back(k);
          continue;
        }
        const auto& touches = hook.touches();
        if (digests) res.digests[k] = AccessDigest(touches);
        if (res.touches.empty() && pass == 0)  // bodies touch alike: size for all from the first
          res.touches.reserve(static_cast<size_t>(res.share_count - k) * touches.size() + 64);
        std::vector<PackedTouch>& into = pass == 0 ? res.touches : late;
        if (pass > 0) late_where.emplace_back(k, late.size(), touches.size());
        for (const Touch& t : touches) into.emplace_back(t);
      }
      if (pass == 0) res.offsets.back() = res.touches.size();
      if (!rt.context().collectives().AnyTrue(!retry.empty())) break;
      if (pass + 1 == kMaxReconPasses)
        throw UsageError("AsyncFor at " + site +
                         ": reconnaissance still finds new remote reads after " +
                         std::to_string(kMaxReconPasses) + " passes");
      hook.FetchMisses();
      pending = std::move(retry);
    }
  }
  if (!late_where.empty()) {  // merge the late bodies' touches in, in body order
    std::sort(late_where.begin(), late_where.end());
    std::vector<PackedTouch> merged;
    merged.reserve(res.touches.size() + late.size());
    std::vector<uint64_t> offsets(res.offsets.size(), 0);
    size_t next_late = 0;
    for (int64_t k = 0; k < res.share_count; ++k) {
      offsets[k] = merged.size();
      merged.insert(merged.end(), res.touches.begin() + static_cast<long>(res.offsets[k]),
                    res.touches.begin() + static_cast<long>(res.offsets[k + 1]));
      if (next_late < late_where.size() && std::get<0>(late_where[next_late]) == k) {
        const auto [body_k, begin, count] = late_where[next_late++];
        merged.insert(merged.end(), late.begin() + static_cast<long>(begin),
                      late.begin() + static_cast<long>(begin + count));
      }
    }
    offsets.back() = merged.size();
    res.touches = std::move(merged);
    res.offsets = std::move(offsets);
  }
  res.flags.assign(dds_count, 0);
  for (const PackedTouch& t : res.touches) res.flags[t.dds()] |= t.write() ? 3 : 1;
  ByteWriter w;
  w.PutVector(res.flags);
  for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
    ByteReader r(bytes);
    auto theirs = r.GetVector<uint8_t>();
    for (size_t d = 0; d < dds_count && d < theirs.size(); ++d) res.flags[d] |= theirs[d];
  }
  ListWrittenAndReadOnly(res);
  return res;
}

void ListWrittenAndReadOnly(ReconResult& res) {
  for (uint32_t d = 0; d < res.flags.size(); ++d) {
    if (res.flags[d] & 2)
      res.written.push_back(d);
    else if (res.flags[d] & 1)
      res.read_only.push_back(d);
  }
}

void ServeElements(Runtime& rt, const std::vector<std::vector<ElementRef>>& serve) {
  const int nodes = rt.nodes();
  std::vector<std::vector<std::byte>> out(nodes);
  for (int p = 0; p < nodes; ++p) {
    ByteWriter w;
    for (const ElementRef& e : serve[p]) {
      DdsBase& dds = rt.context().dds(e.dds);
      w.Put(e);
      w.PutRaw(dds.raw_element(e.index), dds.element_bytes());
    }
    out[p] = w.Take();
  }
  for (const auto& bytes : rt.context().collectives().AllToAll(std::move(out))) {
    ByteReader r(bytes);
    while (r.remaining() > 0) {
      const auto e = r.Get<ElementRef>();
      if (e.dds >= rt.context().dds_count() || e.index < 0 ||
          e.index >= rt.context().dds(e.dds).size())
        throw std::runtime_error("strads: bad element reference in an element message");
      DdsBase& dds = rt.context().dds(e.dds);
      r.GetRaw(dds.raw_element(e.index), dds.element_bytes());
    }
  }
}

}  // namespace strads
