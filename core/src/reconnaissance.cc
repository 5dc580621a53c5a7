#include "reconnaissance.h"

#include <numeric>

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
  res.where.resize(res.share_count);
  const size_t dds_count = rt.context().dds_count();
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
        if (hook.missed()) {
          retry.push_back(k);
          continue;
        }
        if (res.touches.empty())  // bodies touch alike: size for all from the first one
          res.touches.reserve(static_cast<size_t>(res.share_count) * hook.touches().size() + 64);
        res.where[k] = {res.touches.size(), static_cast<uint32_t>(hook.touches().size())};
        res.touches.insert(res.touches.end(), hook.touches().begin(), hook.touches().end());
      }
      if (!rt.context().collectives().AnyTrue(!retry.empty())) break;
      if (pass + 1 == kMaxReconPasses)
        throw UsageError("AsyncFor at " + site +
                         ": reconnaissance still finds new remote reads after " +
                         std::to_string(kMaxReconPasses) + " passes");
      hook.FetchMisses();
      pending = std::move(retry);
    }
  }
  res.flags.assign(dds_count, 0);
  for (const Touch& t : res.touches) res.flags[t.dds] |= t.write ? 3 : 1;
  ByteWriter w;
  w.PutVector(res.flags);
  for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
    ByteReader r(bytes);
    auto theirs = r.GetVector<uint8_t>();
    for (size_t d = 0; d < dds_count && d < theirs.size(); ++d) res.flags[d] |= theirs[d];
  }
  for (uint32_t d = 0; d < dds_count; ++d) {
    if (res.flags[d] & 2)
      res.written.push_back(d);
    else if (res.flags[d] & 1)
      res.read_only.push_back(d);
  }
  return res;
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
