#include "reconnaissance.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <memory>
#include <numeric>
#include <tuple>
#include <unordered_set>

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

namespace {

// One thread's chunk of the share: its bodies (offsets k of the share) that are still to run
// or that complete after the first pass, apart.
struct ChunkRun {
  std::vector<int64_t> pending, retry;
  std::vector<PackedTouch> late;                                    // touches of late bodies
  std::vector<std::tuple<int64_t, uint64_t, uint64_t>> late_where;  // (body, begin, count)
  int64_t failed_at = INT64_MAX;  // the first body that threw, and what it threw
  std::exception_ptr failure;
};

// Merges the late bodies' touches into the chunk's, in body order.
void MergeLate(ReconResult::Chunk& chunk, ChunkRun& run, int64_t chunk_begin) {
  if (run.late_where.empty()) return;
  std::sort(run.late_where.begin(), run.late_where.end());
  std::vector<PackedTouch> merged;
  merged.reserve(chunk.touches.size() + run.late.size());
  std::vector<uint32_t> offsets(chunk.offsets.size(), 0);
  size_t next_late = 0;
  for (size_t j = 0; j + 1 < chunk.offsets.size(); ++j) {
    offsets[j] = static_cast<uint32_t>(merged.size());
    merged.insert(merged.end(), chunk.touches.begin() + static_cast<long>(chunk.offsets[j]),
                  chunk.touches.begin() + static_cast<long>(chunk.offsets[j + 1]));
    if (next_late < run.late_where.size() &&
        std::get<0>(run.late_where[next_late]) == chunk_begin + static_cast<int64_t>(j)) {
      const auto [body_k, begin, count] = run.late_where[next_late++];
      merged.insert(merged.end(), run.late.begin() + static_cast<long>(begin),
                    run.late.begin() + static_cast<long>(begin + count));
    }
  }
  offsets.back() = static_cast<uint32_t>(merged.size());
  chunk.touches = std::move(merged);
  chunk.offsets = std::move(offsets);
  run.late = {};
  run.late_where = {};
}

}  // namespace

ReconResult Reconnoitre(Runtime& rt, const std::string& site, int64_t first, int64_t last,
                        FunctionRef<void(int64_t)> body, bool with_digests) {
  ReconResult res;
  const EvenSplit share(last - first + 1, rt.nodes());
  res.share_begin = share.begin(rt.node());
  res.share_count = share.end(rt.node()) - res.share_begin;
  const int threads = rt.threads();
  res.chunks = EvenSplit(res.share_count, threads);
  res.of_chunk.resize(static_cast<size_t>(threads));
  const bool digests = with_digests && rt.options().access_check != AccessCheck::kOff;
  if (digests) res.digests.assign(static_cast<size_t>(res.share_count), 0);
  const size_t dds_count = rt.context().dds_count();
  if (dds_count > PackedTouch::kMaxDds)
    throw UsageError("AsyncFor at " + site + ": more than " + std::to_string(PackedTouch::kMaxDds) +
                     " DDSs");
  // One hook per thread; they share what was fetched for missed reads.
  auto fetched = std::make_shared<std::unordered_set<uint64_t>>();
  std::vector<std::unique_ptr<ReconHook>> hooks;
  for (int t = 0; t < threads; ++t)
    hooks.push_back(std::make_unique<ReconHook>(rt, ReconHook::Values::kFetchMisses, fetched));
  ThreadRoutedHook routed;
  std::vector<ChunkRun> runs(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    runs[t].pending.resize(static_cast<size_t>(res.chunks.end(t) - res.chunks.begin(t)));
    std::iota(runs[t].pending.begin(), runs[t].pending.end(), res.chunks.begin(t));
    res.of_chunk[t].offsets.assign(runs[t].pending.size() + 1, 0);
  }
  {
    DiscardAccumulatorAdds discard(rt);
    HookGuard guard(rt);
    for (uint32_t d = 0; d < dds_count; ++d) rt.context().dds(d).set_hook(&routed);
    for (int pass = 0;; ++pass) {
      rt.context().pool().RunOnAll([&](int t) {
        ReconHook& hook = *hooks[t];
        ReconResult::Chunk& chunk = res.of_chunk[t];
        ChunkRun& run = runs[t];
        const int64_t chunk_begin = res.chunks.begin(t);
        ThreadRoutedHook::Bind(&hook);
        int64_t k = -1;
        try {
          for (int64_t pending_k : run.pending) {
            k = pending_k;
            hook.BeginBody();
            body(first + res.share_begin + k);
            const auto j = static_cast<size_t>(k - chunk_begin);
            if (pass == 0) chunk.offsets[j] = static_cast<uint32_t>(chunk.touches.size());
            if (hook.missed()) {
              run.retry.push_back(k);
              continue;
            }
            const auto& touches = hook.touches();
            if (digests) res.digests[k] = AccessDigest(touches);
            // Bodies touch alike: size the chunk's array from its first body.
            if (chunk.touches.empty() && pass == 0)
              chunk.touches.reserve((chunk.offsets.size() - 1 - j) * touches.size() + 64);
            std::vector<PackedTouch>& into = pass == 0 ? chunk.touches : run.late;
            if (pass > 0) run.late_where.emplace_back(k, run.late.size(), touches.size());
            for (const Touch& touch : touches) into.emplace_back(touch);
            if (chunk.touches.size() + run.late.size() > ReconResult::kMaxChunkTouches)
              throw UsageError("AsyncFor at " + site + ": more than " +
                               std::to_string(ReconResult::kMaxChunkTouches) +
                               " accesses in one thread's share of the bodies (use more threads "
                               "or nodes)");
          }
          if (pass == 0) chunk.offsets.back() = static_cast<uint32_t>(chunk.touches.size());
        } catch (...) {
          run.failed_at = k;
          run.failure = std::current_exception();
        }
        ThreadRoutedHook::Bind(nullptr);
      });
      // What a run in index order would have thrown: the lowest failing body's exception.
      const ChunkRun* failed = nullptr;
      for (const ChunkRun& run : runs)
        if (run.failure && (failed == nullptr || run.failed_at < failed->failed_at)) failed = &run;
      if (failed != nullptr) std::rethrow_exception(failed->failure);
      bool missed = false;
      for (ChunkRun& run : runs) {
        run.pending = std::move(run.retry);
        run.retry = {};
        missed |= !run.pending.empty();
      }
      if (!rt.context().collectives().AnyTrue(missed)) break;
      if (pass + 1 == kMaxReconPasses)
        throw UsageError("AsyncFor at " + site +
                         ": reconnaissance still finds new remote reads after " +
                         std::to_string(kMaxReconPasses) + " passes");
      for (int t = 1; t < threads; ++t) hooks[0]->TakeMisses(*hooks[t]);
      hooks[0]->FetchMisses();
    }
  }
  for (int t = 0; t < threads; ++t) MergeLate(res.of_chunk[t], runs[t], res.chunks.begin(t));
  res.flags.assign(dds_count, 0);
  for (const auto& chunk : res.of_chunk)
    for (const PackedTouch& t : chunk.touches) res.flags[t.dds()] |= t.write() ? 3 : 1;
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

std::vector<uint64_t> AccessDigests(Runtime& rt, const ReconResult& res) {
  std::vector<uint64_t> digests(static_cast<size_t>(res.share_count));
  rt.context().pool().RunOnAll([&](int t) {
    std::vector<Touch> touches;
    const EvenSplit part(res.share_count, rt.threads());
    for (int64_t k = part.begin(t); k < part.end(t); ++k) {
      touches.clear();
      for (const PackedTouch& p : res.of_body(k))
        touches.push_back({p.dds(), p.write(), p.index()});
      digests[static_cast<size_t>(k)] = AccessDigest(touches);
    }
  });
  return digests;
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
