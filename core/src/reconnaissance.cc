#include "reconnaissance.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "access_check.h"
#include "accumulators.h"
#include "cache_line.h"
#include "memory_headroom.h"
#include "node_context.h"
#include "strads/errors.h"
#include "strads/internal/body_failure.h"
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
// or that complete after the first pass, apart. On lines of its own (cache_line.h): the threads'
// runs are one array, and each thread writes its delayed adds at every pair body.
struct alignas(kCacheLineBytes) ChunkRun {
  std::vector<int64_t> pending, retry;
  std::vector<PackedTouch> late;                                    // touches of late bodies
  std::vector<uint8_t> late_stream;                                 // or, binned, their bytes
  std::vector<std::tuple<int64_t, uint64_t, uint64_t>> late_where;  // (body, begin, count)
  int64_t failed_at = INT64_MAX;  // the first body that threw, and what it threw
  std::exception_ptr failure;
  internal::BodyFailure failed_body;  // its note (body_failure.h), for the driver's thread
  // Pair sums: per shape of the chunk, once its pair is decided, whether its bodies are pair
  // bodies (-1: not looked at yet) and at which of their touches the pair's two writes are.
  struct PairShape {
    int8_t pair = -1;
    uint32_t at[2] = {0, 0};
  };
  std::vector<PairShape> pair_shapes;
  // Pair sums: each pair body's add to its table entry waits kDelayedAdds bodies, its cache line
  // prefetched meanwhile. The table (4 MB a chunk at 16 blocks) is read at random, and at 19 M
  // ratings an add made at once stalled on its cache miss: 81 % of the reconnaissance loop's
  // own time (perf, 2 threads). A sum does not depend on the order of its adds.
  static constexpr size_t kDelayedAdds = 16;
  struct DelayedAdd {
    uint32_t entry, part;
  };
  DelayedAdd delayed[kDelayedAdds];
  size_t delayed_count = 0;  // adds delayed since the last Flush
  // Adds `part` to sums[entry] kDelayedAdds adds from now (or at Flush).
  void AddLater(std::vector<uint32_t>& sums, uint32_t entry, uint32_t part) {
    __builtin_prefetch(&sums[entry], 1);
    DelayedAdd& slot = delayed[delayed_count++ % kDelayedAdds];
    if (delayed_count > kDelayedAdds) sums[slot.entry] += slot.part;
    slot = {entry, part};
  }
  // Makes every delayed add.
  void FlushAdds(std::vector<uint32_t>& sums) {
    for (size_t i = delayed_count > kDelayedAdds ? delayed_count - kDelayedAdds : 0;
         i < delayed_count; ++i)
      sums[delayed[i % kDelayedAdds].entry] += delayed[i % kDelayedAdds].part;
    delayed_count = 0;
  }
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
  Release(run.late);
  Release(run.late_where);
}

// Appends bodies to a chunk in the binned layout (ReconResult): per body its shape's number
// (LEB128), then the payload. Shapes are numbered per chunk; a loop's bodies have few, and
// neighbours mostly share one. On lines of its own, with the buffers it writes at every body
// (cache_line.h): the threads' encoders are one array, made by the driver.
class alignas(kCacheLineBytes) BinnedEncoder {
 public:
  BinnedEncoder(Runtime& rt, const std::vector<int64_t>& fine_bins) : counts_(fine_bins.size()) {
    for (uint32_t d = 0; d < fine_bins.size(); ++d)
      fine_.emplace_back(rt.context().dds(d).size(), fine_bins[d]);
  }

  // Adds this encoder's counts by fine bin to `total` (per DDS; ReconResult::fine_counts).
  void AddCounts(std::vector<std::vector<int64_t>>& total) const {
    for (size_t d = 0; d < counts_.size(); ++d) {
      if (counts_[d].empty()) continue;
      if (total[d].empty()) total[d].assign(counts_[d].size(), 0);
      for (size_t f = 0; f < counts_[d].size(); ++f) total[d][f] += counts_[d][f];
    }
  }

  // Body of loop index `own` made `touches`: its bytes go to `into` at `end`, which moves past
  // them, and its accesses are counted by fine bin. Returns its shape's number. `into` is
  // grown ahead kStepBytes at a time (zeros past `end`), its size set to `end` by the caller
  // once the pass is done: a resize per body, with its test of room and zero fill, and a second
  // pass over the items to write the payload were about a quarter of the encoder's
  // instructions (callgrind, sgdmf).
  static constexpr size_t kStepBytes = size_t{1} << 16;
  uint32_t Encode(int64_t own, std::span<const Touch> touches, ReconResult::Chunk& chunk,
                  std::vector<uint8_t>& into, size_t& end) {
    const size_t count = touches.size();
    if (count > bins_.size()) {
      bins_.resize(count);
      items_.resize(count);
    }
    count_ = count;
    int64_t* const bins = bins_.data();
    uint32_t* const items = items_.data();
    // Room for the most a body of `count` accesses can take: its shape's number, then 5 bytes
    // an access.
    const size_t at = end;
    if (const size_t need = at + 5 + 5 * count; need > into.size()) [[unlikely]]
      // A step, but not past the capacity reserved unless the body needs it: a step past it
      // near the end of the pass made the vector move to twice the chunk's stream (28 MB more
      // at planning's peak at 19 M ratings).
      into.resize(std::max(need, std::min(into.size() + kStepBytes, into.capacity())));
    // The payload is written as the items are made, after a shape number as long as the last
    // body's; it moves in the rare case that the body's shape has a number of another length.
    uint8_t* const payload = into.data() + at + number_bytes_;
    uint8_t* out = payload;
    // Neighbouring bodies mostly share a shape: the items are compared with the last body's
    // shape as they are made, and the shape is looked up only when they differ.
    const std::vector<uint32_t>* last =
        last_ < chunk.shapes.size() ? &chunk.shapes[last_].items : nullptr;
    bool same = last != nullptr && last->size() == count;
    for (size_t i = 0; i < count; ++i) {
      const Touch& t = touches[i];
      int64_t* counts = counts_[t.dds].data();
      if (counts == nullptr) [[unlikely]]
        counts = StartCounts(t.dds);
      const int64_t bin = fine_[t.dds].part_of(t.index);
      bins[i] = bin;
      ++counts[bin];
      uint32_t kind;
      if (t.write) {
        kind = ReconResult::kWriteBin;
        *out++ = static_cast<uint8_t>(bin);
        *out++ = static_cast<uint8_t>(bin >> 8);
      } else if (t.index == own) {
        kind = ReconResult::kOwnRead;
      } else {
        kind = ReconResult::kRead;
        for (int b = 0; b < 5; ++b) *out++ = static_cast<uint8_t>(t.index >> (8 * b));
      }
      items[i] = t.dds << 2 | kind;
      same = same && (*last)[i] == items[i];
    }
    const auto payload_bytes = static_cast<size_t>(out - payload);
    if (!same) {
      const size_t before = number_bytes_;
      NewShape(chunk);
      if (number_bytes_ != before)
        std::memmove(into.data() + at + number_bytes_, payload, payload_bytes);
    }
    uint8_t* const number = into.data() + at;
    if (number_bytes_ == 1) [[likely]]
      number[0] = number_[0];
    else
      std::memcpy(number, number_, number_bytes_);
    end = at + number_bytes_ + payload_bytes;
    return static_cast<uint32_t>(last_);
  }
  // The fine bins of the touches of the last body encoded, in order.
  std::span<const int64_t> bins() const { return {bins_.data(), count_}; }

 private:
  // The counts of DDS d's fine bins, made at its first access.
  int64_t* StartCounts(uint32_t d) {
    counts_[d].assign(static_cast<size_t>(fine_[d].parts()), 0);
    return counts_[d].data();
  }
  // The last body's items are not the last shape's: finds or adds their shape.
  void NewShape(ReconResult::Chunk& chunk) {
    key_.assign(items_.begin(), items_.begin() + static_cast<long>(count_));
    auto [it, inserted] = ids_.try_emplace(key_, static_cast<uint32_t>(chunk.shapes.size()));
    if (inserted) {
      ReconResult::Shape& shape = chunk.shapes.emplace_back();
      shape.items.assign(key_.begin(), key_.end());
      for (uint32_t item : shape.items)
        shape.bytes += ReconResult::ItemBytes(static_cast<ReconResult::ShapeItem>(item & 3));
    }
    last_ = it->second;
    // The shape's number in LEB128, made once per change of shape rather than per body.
    number_bytes_ = 0;
    for (uint32_t id = static_cast<uint32_t>(last_);; id >>= 7) {
      number_[number_bytes_++] = static_cast<uint8_t>((id & 0x7f) | (id >= 0x80 ? 0x80 : 0));
      if (id < 0x80) break;
    }
  }

  std::vector<EvenSplit> fine_;  // per DDS
  template <class T>
  using Lines = std::vector<T, CacheLineAllocator<T>>;
  std::vector<Lines<int64_t>> counts_;  // per DDS, per fine bin: accesses (when touched)
  // The last body's touches' fine bins and shape items (ReconResult::Shape): the first count_
  // of each (they only grow).
  Lines<int64_t> bins_;
  Lines<uint32_t> items_;
  size_t count_ = 0;
  std::u32string key_;
  std::unordered_map<std::u32string, uint32_t> ids_;
  size_t last_ = SIZE_MAX;
  uint8_t number_[5] = {};  // last_ in LEB128
  size_t number_bytes_ = 0;
};

// The bytes of the body that starts at `at` in a binned chunk.
size_t BinnedBodyBytes(const ReconResult::Chunk& chunk, const uint8_t* at) {
  const uint8_t* payload = at;
  const uint32_t shape = ReconResult::ReadShape(payload);
  return static_cast<size_t>(payload - at) + chunk.shapes.at(shape).bytes;
}

// MergeLate for the binned layout: the late bodies' bytes go where pass 0 left them out.
void MergeLateBinned(ReconResult::Chunk& chunk, ChunkRun& run, int64_t chunk_begin,
                     int64_t chunk_bodies) {
  if (run.late_where.empty()) return;
  std::sort(run.late_where.begin(), run.late_where.end());
  std::vector<uint8_t> merged;
  merged.reserve(chunk.stream.size() + run.late_stream.size());
  size_t next_late = 0, at = 0;
  for (int64_t j = 0; j < chunk_bodies; ++j) {
    if (next_late < run.late_where.size() &&
        std::get<0>(run.late_where[next_late]) == chunk_begin + j) {
      const auto [body_k, begin, count] = run.late_where[next_late++];
      merged.insert(merged.end(), run.late_stream.begin() + static_cast<long>(begin),
                    run.late_stream.begin() + static_cast<long>(begin + count));
      continue;
    }
    const size_t bytes = BinnedBodyBytes(chunk, chunk.stream.data() + at);
    merged.insert(merged.end(), chunk.stream.begin() + static_cast<long>(at),
                  chunk.stream.begin() + static_cast<long>(at + bytes));
    at += bytes;
  }
  chunk.stream = std::move(merged);
  Release(run.late_stream);
  Release(run.late_where);
}

// Pair sums: keeps the digest of body j of `chunk` (loop index `index`, of shape `shape`, its
// touches in fine bins `bins`) in the chunk's PairSums if it is a pair body, else per body. The
// chunk's pair of DDSs is decided at its first body with two written DDSs.
void KeepDigest(ReconResult::Chunk& chunk, ChunkRun& run, int64_t chunk_bodies,
                const std::vector<int64_t>& fine_bins, uint32_t shape,
                std::span<const int64_t> bins, int64_t j, int64_t index, uint32_t digest) {
  ReconResult::PairSums& pairs = chunk.pairs;
  const std::vector<uint32_t>& items = chunk.shapes[shape].items;
  if (!pairs.decided) {
    uint32_t written[2];
    int writes = 0;
    for (uint32_t item : items)
      if ((item & 3) == ReconResult::kWriteBin && writes++ < 2) written[writes - 1] = item >> 2;
    if (writes == 2 && written[0] != written[1]) {
      pairs.decided = true;
      pairs.dds[0] = std::min(written[0], written[1]);
      pairs.dds[1] = std::max(written[0], written[1]);
      pairs.bins[0] = fine_bins[pairs.dds[0]];
      pairs.bins[1] = fine_bins[pairs.dds[1]];
      // A table of at most a byte per body of the chunk, or none: digests per body then.
      if (pairs.bins[0] * pairs.bins[1] * ReconResult::PairSums::kPairBodiesPerEntry <=
          chunk_bodies)
        pairs.sums.assign(static_cast<size_t>(pairs.bins[0] * pairs.bins[1]), 0);
    }
  }
  if (pairs.active()) {
    // Looked at once per shape: a body is a pair body by its shape alone.
    if (run.pair_shapes.size() <= shape) run.pair_shapes.resize(shape + 1);
    ChunkRun::PairShape& ps = run.pair_shapes[shape];
    if (ps.pair < 0) {
      ps.pair = pairs.Holds(chunk.shapes[shape]) ? 1 : 0;
      for (size_t i = 0; i < items.size(); ++i)
        if ((items[i] & 3) == ReconResult::kWriteBin)
          ps.at[(items[i] >> 2) == pairs.dds[1]] = static_cast<uint32_t>(i);
    }
    if (ps.pair) {
      run.AddLater(pairs.sums,
                   static_cast<uint32_t>(bins[ps.at[0]] * pairs.bins[1] + bins[ps.at[1]]),
                   BodyDigestPart(index, digest));
      return;
    }
  }
  if (chunk.body_digests.empty()) chunk.body_digests.assign(static_cast<size_t>(chunk_bodies), 0);
  chunk.body_digests[static_cast<size_t>(j)] = digest;
}

// Before a thread sizes its records from its first body (`body_bytes`, which bodies share):
// every thread of every node of the process records about as much for its part of the share.
// Refused beyond the memory the process can still use, where it reached the OOM killer.
void EnsureReconHeadroom(Runtime& rt, const std::string& site, int64_t share_count,
                         size_t body_bytes) {
  EnsureNodesHeadroom(
      rt.options(), "node " + std::to_string(rt.node()) + ": reconnaissance of AsyncFor at " + site,
      share_count, "bodies", body_bytes + 4);  // and its digest
}

}  // namespace

bool ReconResult::PairSums::Holds(const Shape& shape) const {
  int writes = 0;
  bool seen[2] = {false, false};
  for (uint32_t item : shape.items) {
    if ((item & 3) != kWriteBin) continue;
    const uint32_t d = item >> 2;
    if (++writes > 2 || (d != dds[0] && d != dds[1])) return false;
    seen[d == dds[1]] = true;
  }
  return writes == 2 && seen[0] && seen[1];
}

bool ReconResult::PairSumsHold() const {
  for (const Chunk& chunk : of_chunk) {
    if (!chunk.pairs.active()) continue;
    for (const Shape& shape : chunk.shapes) {
      if (!chunk.pairs.Holds(shape)) continue;
      for (uint32_t item : shape.items)
        if ((item & 3) != kWriteBin && (flags.at(item >> 2) & 2)) return false;
    }
  }
  return true;
}

ReconResult Reconnoitre(Runtime& rt, const std::string& site, int64_t first, int64_t last,
                        FunctionRef<void(int64_t)> body, bool with_digests, int64_t most_bins,
                        bool pair_sums) {
  ReconResult res;
  res.first = first;
  const EvenSplit share(last - first + 1, rt.nodes());
  res.share_begin = share.begin(rt.node());
  res.share_count = share.end(rt.node()) - res.share_begin;
  const int threads = rt.threads();
  res.chunks = EvenSplit(res.share_count, threads);
  res.of_chunk.resize(static_cast<size_t>(threads));
  const size_t dds_count = rt.context().dds_count();
  if (dds_count > PackedTouch::kMaxDds)
    throw UsageError("AsyncFor at " + site + ": more than " + std::to_string(PackedTouch::kMaxDds) +
                     " DDSs");
  const bool binned = most_bins > 0 && most_bins <= ReconResult::kMaxFineBins;
  if (binned)
    for (uint32_t d = 0; d < dds_count; ++d)
      res.fine_bins.push_back(
          std::max<int64_t>(1, std::min(rt.context().dds(d).size(), most_bins)));
  const bool digests = (with_digests || binned) && rt.options().access_check != AccessCheck::kOff;
  res.pair_sums = digests && binned && pair_sums;
  if (digests && !res.pair_sums) res.digests.assign(static_cast<size_t>(res.share_count), 0);
  std::vector<BinnedEncoder> encoders;
  if (binned)
    for (int t = 0; t < threads; ++t) encoders.emplace_back(rt, res.fine_bins);
  // One hook per thread; they share what was fetched for missed reads.
  auto fetched = std::make_shared<std::unordered_set<uint64_t>>();
  std::vector<std::unique_ptr<ReconHook>> hooks;
  for (int t = 0; t < threads; ++t)
    hooks.push_back(std::make_unique<ReconHook>(rt, ReconHook::Values::kFetchMisses, fetched));
  ThreadRoutedHook routed;
  std::vector<ChunkRun> runs(static_cast<size_t>(threads));
  // Pass 0 runs each chunk whole (no list of its bodies: 8 bytes per body).
  if (!binned)
    for (int t = 0; t < threads; ++t)
      res.of_chunk[t].offsets.assign(
          static_cast<size_t>(res.chunks.end(t) - res.chunks.begin(t)) + 1, 0);
  {
    DiscardAccumulatorAdds discard(rt);
    HookGuard guard(rt);
    for (uint32_t d = 0; d < dds_count; ++d) rt.context().dds(d).set_hook(&routed);
    for (int pass = 0;; ++pass) {
      rt.context().pool().RunOnAll([&](int t) {
        ReconHook& hook = *hooks[t];
        ReconResult::Chunk& chunk = res.of_chunk[t];
        ChunkRun& run = runs[t];
        const int64_t chunk_begin = res.chunks.begin(t), chunk_end = res.chunks.end(t);
        ThreadRoutedHook::Bind(&hook);
        // What every body of the pass uses, in locals: the captures are reached through the
        // closure, and the stores to the stream and tables between made each use load them
        // again (callgrind, sgdmf: about 40 instructions a body).
        const int64_t index_of_k = first + res.share_begin;  // body k runs index_of_k + k
        const bool digest_each = digests && !res.pair_sums, pair_sums_on = res.pair_sums;
        uint32_t* const digest_of_k = digest_each ? res.digests.data() : nullptr;
        BinnedEncoder* const encoder = binned ? &encoders[t] : nullptr;
        std::vector<uint8_t>& binned_into = pass == 0 ? chunk.stream : run.late_stream;
        size_t binned_end = binned_into.size();  // the bytes written (Encode)
        const int64_t bodies =
            pass == 0 ? chunk_end - chunk_begin : static_cast<int64_t>(run.pending.size());
        int64_t k = -1;
        try {
          for (int64_t p = 0; p < bodies; ++p) {
            k = pass == 0 ? chunk_begin + p : run.pending[static_cast<size_t>(p)];
            hook.BeginBody();
            body(index_of_k + k);
            const auto j = static_cast<size_t>(k - chunk_begin);
            if (pass == 0 && !binned)
              chunk.offsets[j] = static_cast<uint32_t>(chunk.touches.size());
            if (hook.missed()) {
              run.retry.push_back(k);
              continue;
            }
            const auto& touches = hook.touches();
            const uint32_t digest = !digests               ? 0
                                    : hook.TouchesAreSet() ? AccessSetDigest(touches)
                                                           : AccessDigest(touches);
            if (digest_each) digest_of_k[k] = digest;
            if (binned) {
              const size_t before = binned_end;
              const uint32_t shape =
                  encoder->Encode(index_of_k + k, touches, chunk, binned_into, binned_end);
              if (pair_sums_on)
                KeepDigest(chunk, run, chunk_end - chunk_begin, res.fine_bins, shape,
                           encoder->bins(), k - chunk_begin, index_of_k + k, digest);
              if (pass > 0) run.late_where.emplace_back(k, before, binned_end - before);
              // Bodies touch alike: size the chunk's stream from its first body (its capacity:
              // Encode fills it a step at a time, so that a first body larger than the rest
              // does not make pages resident that the stream never uses).
              if (before == 0 && pass == 0) {
                EnsureReconHeadroom(rt, site, res.share_count, binned_end);
                chunk.stream.reserve(static_cast<size_t>(chunk_end - k) * binned_end + 64);
              }
              continue;
            }
            // Bodies touch alike: size the chunk's array from its first body.
            if (chunk.touches.empty() && pass == 0) {
              EnsureReconHeadroom(rt, site, res.share_count, touches.size() * sizeof(PackedTouch));
              chunk.touches.reserve(static_cast<size_t>(chunk_end - k) * touches.size() + 64);
            }
            std::vector<PackedTouch>& into = pass == 0 ? chunk.touches : run.late;
            if (pass > 0) run.late_where.emplace_back(k, run.late.size(), touches.size());
            for (const Touch& touch : touches) into.emplace_back(touch);
            if (chunk.touches.size() + run.late.size() > ReconResult::kMaxChunkTouches)
              throw UsageError("AsyncFor at " + site + ": more than " +
                               std::to_string(ReconResult::kMaxChunkTouches) +
                               " accesses in one thread's share of the bodies (use more threads "
                               "or nodes)");
          }
          if (pass == 0 && !binned)
            chunk.offsets.back() = static_cast<uint32_t>(chunk.touches.size());
          if (binned) binned_into.resize(binned_end);
          if (chunk.pairs.active()) run.FlushAdds(chunk.pairs.sums);
        } catch (...) {
          run.failed_at = k;
          run.failure = std::current_exception();
          run.failed_body = internal::TakeBodyFailure();
        }
        ThreadRoutedHook::Bind(nullptr);
      });
      // What a run in index order would have thrown: the lowest failing body's exception.
      const ChunkRun* failed = nullptr;
      for (const ChunkRun& run : runs)
        if (run.failure && (failed == nullptr || run.failed_at < failed->failed_at)) failed = &run;
      if (failed != nullptr) {
        internal::AdoptBodyFailure(std::move(failed->failed_body));
        std::rethrow_exception(failed->failure);
      }
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
  for (int t = 0; t < threads; ++t) {
    ReconResult::Chunk& chunk = res.of_chunk[t];
    if (binned) {
      MergeLateBinned(chunk, runs[t], res.chunks.begin(t), res.chunks.end(t) - res.chunks.begin(t));
      if (t == 0) res.fine_counts.resize(dds_count);
      encoders[t].AddCounts(res.fine_counts);
      if (chunk.stream.capacity() > chunk.stream.size() + chunk.stream.size() / 8)
        chunk.stream.shrink_to_fit();
    } else {
      MergeLate(chunk, runs[t], res.chunks.begin(t));
    }
  }
  // No chunk kept a pair table (too large for the chunk, or no pair bodies): every digest is
  // per body, so they go back to res.digests, and the plan checks (and names) body by body.
  if (res.pair_sums && std::none_of(res.of_chunk.begin(), res.of_chunk.end(),
                                    [](const auto& c) { return c.pairs.active(); })) {
    res.pair_sums = false;
    res.digests.reserve(static_cast<size_t>(res.share_count));
    for (int t = 0; t < threads; ++t) {
      std::vector<uint32_t>& kept = res.of_chunk[t].body_digests;
      if (static_cast<int64_t>(kept.size()) != res.chunks.end(t) - res.chunks.begin(t))
        throw std::logic_error("AsyncFor reconnaissance: a chunk's digests are missing");
      res.digests.insert(res.digests.end(), kept.begin(), kept.end());
      Release(kept);
    }
  }
  res.flags.assign(dds_count, 0);
  for (const auto& chunk : res.of_chunk) {
    for (const PackedTouch& t : chunk.touches) res.flags[t.dds()] |= t.write() ? 3 : 1;
    for (const ReconResult::Shape& shape : chunk.shapes)
      for (uint32_t item : shape.items)
        res.flags[item >> 2] |= (item & 3) == ReconResult::kWriteBin ? 3 : 1;
  }
  // Not examined here (a write kept binned has no element): AsyncForEach examines its sets.
  for (uint8_t& f : res.flags)
    if (f & 1) f |= ReconResult::kForeignAccess;
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

std::vector<uint32_t> AccessDigests(Runtime& rt, const ReconResult& res) {
  std::vector<uint32_t> digests(static_cast<size_t>(res.share_count));
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

void ReconResult::ThrowTouchesOmitted() {
  throw std::logic_error("AsyncFor planning: a body's accesses read where they were left out");
}

void ListWrittenAndReadOnly(ReconResult& res) {
  for (uint32_t d = 0; d < res.flags.size(); ++d) {
    if (res.flags[d] & 2)
      res.written.push_back(d);
    else if (res.flags[d] & 1)
      res.read_only.push_back(d);
  }
}

OwnedElement OwnedOffset(const DdsBase& dds, int owner, int64_t index) {
  const int64_t begin = dds.owners().begin(owner), end = dds.owners().end(owner);
  if (end - begin > int64_t{UINT32_MAX})
    throw UsageError("strads: node " + std::to_string(owner) + " owns " +
                     std::to_string(end - begin) + " elements of '" + dds.name() +
                     "'; elements served to other nodes are listed by 32-bit offsets in an owned "
                     "range of at most " +
                     std::to_string(UINT32_MAX) + " (run on more nodes)");
  return {dds.id(), static_cast<uint32_t>(index - begin)};
}

namespace {

// Calls fn(e) for each element of `list`, a vector or an OwnedElementList.
template <class T, class Fn>
void ForEachIn(const std::vector<T>& list, Fn fn) {
  for (const T& e : list) fn(e);
}
template <class Fn>
void ForEachIn(const OwnedElementList& list, Fn fn) {
  list.ForEach(fn);
}

// Sends each serve[p]'s elements to node p as (DDS, offset in this node's owned range, value):
// 8 bytes an element besides its value, where an ElementRef took 16. `owned(e)` gives e as an
// OwnedElement. Stores what the others send.
template <class Element, class Owned>
void ServeOwned(Runtime& rt, const std::vector<Element>& serve, Owned owned) {
  // Under --nodes P an element's page may already hold the bytes sent, mapped from the owner's
  // shared file (ShareOwnersPages): writing them anyway would make the page a private copy.
  const bool shared_pages = rt.context().shared_files() != nullptr;
  // Each message is made at its size as it is sent, and each received one stored and let go
  // (AllToAllMade): made all at once, every node's messages (its share of sgdmf's ratings, 20
  // bytes each) were in memory together under --nodes P, 38 MB at 64 nodes, and the pages
  // malloc kept from them stayed resident through the run.
  const auto make = [&](int p) {
    size_t bytes = 0;
    ForEachIn(serve[p], [&](const auto& e) {
      bytes += sizeof(OwnedElement) + rt.context().dds(owned(e).dds).element_bytes();
    });
    ByteWriter w;
    w.Reserve(bytes);
    ForEachIn(serve[p], [&](const auto& e) {
      const OwnedElement o = owned(e);
      DdsBase& dds = rt.context().dds(o.dds);
      w.Put(o);
      w.PutRaw(dds.raw_element(dds.owned_begin() + o.offset), dds.element_bytes());
    });
    return w.Take();
  };
  const auto store = [&](int from, std::vector<std::byte> bytes) {
    ByteReader r(bytes);
    while (r.remaining() > 0) {
      const auto o = r.Get<OwnedElement>();
      if (o.dds >= rt.context().dds_count())
        throw std::runtime_error("strads: bad element reference in an element message");
      DdsBase& dds = rt.context().dds(o.dds);
      const int64_t index = dds.owners().begin(from) + o.offset;
      if (index >= dds.owners().end(from))
        throw std::runtime_error("strads: bad element reference in an element message");
      const std::byte* value = r.Skip(dds.element_bytes());
      std::byte* element = dds.raw_element(index);
      if (!shared_pages || std::memcmp(element, value, dds.element_bytes()) != 0)
        std::memcpy(element, value, dds.element_bytes());
    }
  };
  rt.context().collectives().AllToAllMade(make, store);
}

}  // namespace

void ServeElements(Runtime& rt, const std::vector<std::vector<ElementRef>>& serve) {
  ServeOwned(rt, serve, [&](const ElementRef& e) {
    const DdsBase& dds = rt.context().dds(e.dds);
    return OwnedElement{e.dds, static_cast<uint32_t>(e.index - dds.owned_begin())};
  });
}

void ServeElements(Runtime& rt, const std::vector<OwnedElementList>& serve) {
  ServeOwned(rt, serve, [](const OwnedElement& e) { return e; });
}

}  // namespace strads
