#include "index_set_loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <span>
#include <string>
#include <utility>

#include "checkpoint.h"
#include "collectives.h"
#include "locked_loop.h"
#include "loop_body_scope.h"
#include "memory_report.h"
#include "node_context.h"
#include "schedule_report.h"
#include "strads/errors.h"
#include "strads/fnv1a.h"
#include "strads/internal/bytes.h"
#include "strads/internal/even_split.h"
#include "strads/parallel_for.h"

namespace strads {

namespace {

// Positions per piece of Accesses' passes over a set, run on the node's threads: a set of one
// piece (the small sets of tests, a lock engine's few) runs on the driver alone; Lasso's rounds
// of 2 000 picks are 8 pieces.
constexpr int64_t kPositionsPerPiece = 256;

int64_t PieceCount(int64_t positions) {
  return (positions + kPositionsPerPiece - 1) / kPositionsPerPiece;
}
// Piece `piece`'s positions [first, end) of `positions`.
std::pair<int64_t, int64_t> PiecePositions(int64_t piece, int64_t positions) {
  return {piece * kPositionsPerPiece, std::min(positions, (piece + 1) * kPositionsPerPiece)};
}

std::string SiteKey(const char* file, uint32_t line) {
  return std::string("AsyncForEach@") + file + ":" + std::to_string(line);
}

[[noreturn]] void ThrowRepeated(const std::string& name, int64_t index) {
  throw CollectiveUsageError("AsyncForEach at " + name + ": index " + std::to_string(index) +
                             " is listed twice (the indices must be distinct)");
}

// Distinct indices: a repeated index would run twice in one call, which no serial loop over a
// set does. Sorting a copy costs O(k log k) in the set's size only. Every node has the same set,
// so every node throws alike.
void CheckDistinct(const std::string& name, const std::vector<int64_t>& indices) {
  std::vector<int64_t> sorted = indices;
  std::sort(sorted.begin(), sorted.end());
  const auto twin = std::adjacent_find(sorted.begin(), sorted.end());
  if (twin != sorted.end()) ThrowRepeated(name, *twin);
}

}  // namespace

IndexSetSite& IndexSetSite::At(Runtime& rt, internal::LoopSite where) {
  const std::string key = SiteKey(where.file, where.line);
  auto* site = dynamic_cast<IndexSetSite*>(rt.context().loop_state(key));
  if (site == nullptr) {
    auto fresh = std::make_unique<IndexSetSite>();
    fresh->where_ = where;
    fresh->name_ = std::string(where.file) + ":" + std::to_string(where.line);
    fresh->async_site_.index = rt.context().NextAsyncSiteIndex();
    site = fresh.get();
    rt.context().set_loop_state(key, std::move(fresh));
  }
  return *site;
}

const IndexSetSite* IndexSetSite::Find(Runtime& rt, const char* file, uint32_t line) {
  return dynamic_cast<const IndexSetSite*>(rt.context().loop_state(SiteKey(file, line)));
}

size_t IndexSetSite::HeldBytes() const {
  size_t signature_bytes = HeapBytes(signatures_);
  for (const auto& [signature, number] : signature_number_)  // a tree node: 4 words and the pair
    signature_bytes += HeapBytes(signature) + 32 + sizeof(signature) + sizeof(number);
  return slots_.HeldBytes() + signature_bytes + HeapBytes(records_) + HeapBytes(offsets_) +
         HeapBytes(touches_) + HeapBytes(summary_touches_) + HeapBytes(set_slots_) +
         HeapBytes(planned_set_) + (plan_ ? plan_->HeldBytes() : 0);
}

void IndexSetSite::Clear() {
  slots_.Clear();
  records_.clear();
  offsets_.assign(1, 0);
  touches_.clear();
  summarized_ = 0;
  summary_touches_.clear();
  signatures_.clear();
  signature_number_.clear();
  whole_from_ = 0;
  ++counters_.cache_clears;
}

void IndexSetSite::Learn(Runtime& rt, const std::vector<int64_t>& unseen, internal::LoopBody body) {
  counters_.reconnoitred += unseen.size();
  const int64_t count = static_cast<int64_t>(unseen.size());
  ReconResult found = Reconnoitre(rt, name_, 0, count - 1,
                                  [&](int64_t q) { body(unseen[static_cast<size_t>(q)]); });
  // Every node caches every index, in node order (its EvenSplit share), so that the cache, and
  // so every later plan, is the same on every node.
  std::vector<uint64_t> found_offsets{0};
  std::vector<PackedTouch> found_touches;
  for (int64_t k = 0; k < found.share_count; ++k) {
    const auto touches = found.of_body(k);
    found_touches.insert(found_touches.end(), touches.begin(), touches.end());
    found_offsets.push_back(found_touches.size());
  }
  ByteWriter w;
  w.PutVector(found_offsets);
  w.PutVector(found_touches);
  w.PutVector(found.digests);
  found = {};
  const EvenSplit share(count, rt.nodes());
  const bool checked = rt.options().access_check != AccessCheck::kOff;
  int node = 0;
  for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
    ByteReader r(bytes);
    const auto offsets = r.GetVector<uint64_t>();
    const auto touches = r.GetVector<PackedTouch>();
    const auto digests = r.GetVector<uint32_t>();
    const int64_t begin = share.begin(node), end = share.end(node);
    if (static_cast<int64_t>(offsets.size()) != end - begin + 1 ||
        offsets.back() != touches.size() || digests.size() != (checked ? offsets.size() - 1 : 0))
      throw std::runtime_error("AsyncForEach at " + name_ + ": node " + std::to_string(node) +
                               " sent a malformed access list");
    for (int64_t k = begin; k < end; ++k) {
      const size_t local = static_cast<size_t>(k - begin);
      const int64_t index = unseen[static_cast<size_t>(k)];
      slots_.Insert(index, static_cast<uint32_t>(records_.size()));
      // Copied and examined in one pass: which DDSs this body accessed beyond its own element.
      // One resize, not a push_back a touch (78 M more instructions in Lasso's first epoch).
      uint8_t foreign = 0;
      const size_t at = touches_.size();
      touches_.resize(at + (offsets[local + 1] - offsets[local]));
      PackedTouch* to = touches_.data() + at;
      for (uint64_t t = offsets[local]; t < offsets[local + 1]; ++t) {
        const PackedTouch touch = touches[t];
        if (touch.index() != index)
          foreign |= static_cast<uint8_t>(1u << std::min(touch.dds(), kForeignBeyond));
        *to++ = touch;
      }
      SlotRecord& record = records_.emplace_back();
      record.foreign = foreign;
      if (checked) record.digest = digests[local];
      offsets_.push_back(touches_.size());
    }
    ++node;
  }
}

void IndexSetSite::DropWholeLists() {
  Summarize();
  whole_from_ = static_cast<uint32_t>(records_.size());
  offsets_.assign(offsets_.size(), 0);
  Release(touches_);
  ++counters_.whole_lists_dropped;
}

void IndexSetSite::Summarize() {
  std::vector<uint64_t> kept;  // the slot's (DDS, block, write) keys so far
  std::vector<BlockKey> signature;
  for (; summarized_ < records_.size(); ++summarized_) {
    const size_t s = summarized_;
    ++counters_.summarized;
    kept.clear();
    signature.clear();
    uint64_t previous = UINT64_MAX;
    uint8_t packed_flags = 0;
    const uint64_t summary_first = summary_touches_.size();
    for (uint64_t t = offsets_[s]; t < offsets_[s + 1]; ++t) {
      const PackedTouch touch = touches_[t];
      const uint32_t d = touch.dds();
      packed_flags = d < 4 && packed_flags != kFlagsUnpacked
                         ? static_cast<uint8_t>(packed_flags | (touch.write() ? 3 : 1) << (2 * d))
                         : kFlagsUnpacked;
      if (d < bounds_.size() && !bounds_[d].empty()) {
        const auto& b = bounds_[d];
        const auto block =
            static_cast<uint64_t>(std::upper_bound(b.begin(), b.end(), touch.index()) - b.begin());
        const uint64_t key = uint64_t{d} << 41 | block << 1 | uint64_t{touch.write()};
        // A column's rows come in order: most touches are in the block of the one before.
        if (key == previous || std::find(kept.begin(), kept.end(), key) != kept.end()) continue;
        kept.push_back(key);
        previous = key;
        signature.push_back(MakeBlockKey(d, static_cast<int64_t>(block) - 1));
      }
      summary_touches_.push_back(touch);
    }
    SlotRecord& record = records_[s];
    record.summary_first = summary_first;
    record.summary_count = static_cast<uint32_t>(summary_touches_.size() - summary_first);
    record.summary_flags = packed_flags;
    std::sort(signature.begin(), signature.end());
    signature.erase(std::unique(signature.begin(), signature.end()), signature.end());
    const auto [it, added] =
        signature_number_.try_emplace(signature, static_cast<uint32_t>(signatures_.size()));
    if (added) signatures_.push_back(signature);
    record.cell = it->second;
  }
}

ReconResult IndexSetSite::Accesses(Runtime& rt, const std::vector<int64_t>& indices,
                                   internal::LoopBody body, bool every_access) {
  // Every node holds the same cache and the same set, so every node finds the same unseen
  // indices and makes the same choice to clear. One look-up an index finds its slot or lists it
  // unseen; the indices must be distinct, so no slot may come twice (stamped per call) and the
  // unseen ones are checked by sorting them, which after the first calls are few or none.
  //
  // Two passes over the set's positions (three when the planner needs the lists) read each
  // index's slot and its record: cache misses, once the cache outgrows the caches (Lasso:
  // 200 000 indices), asked for kPrefetchDistance positions ahead, and shared by the node's
  // threads in pieces of fixed positions (ParallelFor's contract: disjoint writes, results
  // independent of the thread count). A set of one piece runs on the driver alone and wakes no
  // worker.
  constexpr int64_t kAhead = static_cast<int64_t>(internal::kPrefetchDistance);
  const int64_t k = static_cast<int64_t>(indices.size());
  const int64_t pieces = PieceCount(k);
  set_slots_.resize(static_cast<size_t>(k));
  ++stamp_;
  std::vector<uint8_t> unseen_in(static_cast<size_t>(pieces), 0);
  std::vector<uint8_t> repeated_in(static_cast<size_t>(pieces), 0);
  internal::RunParallelFor(rt, pieces, [&](int64_t piece) {
    const auto [begin, end] = PiecePositions(piece, k);
    for (int64_t p = begin; p < end; ++p) {
      if (p + kAhead < end) slots_.Prefetch(indices[static_cast<size_t>(p + kAhead)]);
      set_slots_[static_cast<size_t>(p)] = slots_.Find(indices[static_cast<size_t>(p)]);
    }
    for (int64_t p = begin; p < end; ++p) {
      if (p + kAhead < end) {
        const uint32_t ahead = set_slots_[static_cast<size_t>(p + kAhead)];
        if (ahead != IndexSlots::kNone) __builtin_prefetch(&records_[ahead], 1);
      }
      const uint32_t slot = set_slots_[static_cast<size_t>(p)];
      if (slot == IndexSlots::kNone) {
        unseen_in[static_cast<size_t>(piece)] = 1;
      } else if (std::atomic_ref<uint64_t>(records_[slot].stamp)
                     .exchange(stamp_, std::memory_order_relaxed) == stamp_) {
        repeated_in[static_cast<size_t>(piece)] = 1;
      }
    }
  });
  const auto any = [](const std::vector<uint8_t>& v) {
    return std::find(v.begin(), v.end(), 1) != v.end();
  };
  if (any(repeated_in)) {  // name the first repeated position's index, whatever the threads did
    ++stamp_;
    for (int64_t p = 0; p < k; ++p) {
      const uint32_t slot = set_slots_[static_cast<size_t>(p)];
      if (slot == IndexSlots::kNone) continue;
      if (records_[slot].stamp == stamp_) ThrowRepeated(name_, indices[static_cast<size_t>(p)]);
      records_[slot].stamp = stamp_;
    }
  }
  std::vector<int64_t> unseen;
  if (any(unseen_in))
    for (int64_t p = 0; p < k; ++p)
      if (set_slots_[static_cast<size_t>(p)] == IndexSlots::kNone)
        unseen.push_back(indices[static_cast<size_t>(p)]);
  CheckDistinct(name_, unseen);
  if (!unseen.empty()) {
    if (slots_.size() + unseen.size() > kMaxCachedIndices ||
        summary_touches_.size() > max_cached_accesses_ ||
        (touches_.size() > max_cached_accesses_ && bounds_.empty())) {
      Clear();
      unseen = indices;
    } else if (touches_.size() > max_cached_accesses_) {
      DropWholeLists();
    }
    Learn(rt, unseen, body);
    for (int64_t p = 0; p < k; ++p)
      set_slots_[static_cast<size_t>(p)] = slots_.Find(indices[static_cast<size_t>(p)]);
  }
  // A set that needs whole lists some of its slots no longer have: reconnoitred again, whole.
  const auto relearn = [&] {
    Clear();
    Learn(rt, indices, body);
    return Accesses(rt, indices, body, every_access);
  };
  const auto dropped_in_set = [&] {
    return std::any_of(set_slots_.begin(), set_slots_.end(),
                       [&](uint32_t slot) { return slot < whole_from_; });
  };

  // Flags over the whole set, from the replicated cache: the same on every node with no message,
  // and the same from the summaries as from the whole lists.
  const bool summary = !every_access && !bounds_.empty();
  if (summary) Summarize();
  if (!summary && dropped_in_set()) return relearn();
  ReconResult res;
  const size_t dds_count = rt.context().dds_count();
  const EvenSplit share(k, rt.nodes());
  res.share_begin = share.begin(rt.node());
  res.share_count = share.end(rt.node()) - res.share_begin;
  const bool checked = rt.options().access_check != AccessCheck::kOff;
  if (checked) res.digests.resize(static_cast<size_t>(res.share_count));
  // The share's cells, read with the flags from the same records: dropped below if the flags
  // choose the whole lists.
  std::vector<uint32_t> cell_numbers(summary && cells_ahead_ ? static_cast<size_t>(res.share_count)
                                                             : 0);
  // With the flags, each position's access count from these lists, for the share's offsets.
  std::vector<uint8_t> piece_flags(static_cast<size_t>(pieces) * dds_count, 0);
  std::vector<uint8_t> piece_foreign(static_cast<size_t>(pieces), 0);
  std::vector<uint32_t> counts(static_cast<size_t>(k));
  internal::RunParallelFor(rt, pieces, [&](int64_t piece) {
    uint8_t* flags = piece_flags.data() + static_cast<size_t>(piece) * dds_count;
    uint8_t foreign = 0;
    const auto [begin, end] = PiecePositions(piece, k);
    for (int64_t p = begin; p < end; ++p) {
      if (p + kAhead < end)
        __builtin_prefetch(&records_[set_slots_[static_cast<size_t>(p + kAhead)]]);
      const uint32_t slot = set_slots_[static_cast<size_t>(p)];
      const SlotRecord& record = records_[slot];
      foreign |= record.foreign;
      const int64_t q = p - res.share_begin;
      if (q >= 0 && q < res.share_count) {
        if (checked) res.digests[static_cast<size_t>(q)] = record.digest;
        if (!cell_numbers.empty()) cell_numbers[static_cast<size_t>(q)] = record.cell;
      }
      // The record's summary, or the slot's whole list (another array, read only then).
      const PackedTouch* touches = summary_touches_.data() + record.summary_first;
      uint64_t count = record.summary_count;
      if (!summary) {
        touches = touches_.data() + offsets_[slot];
        count = offsets_[slot + 1] - offsets_[slot];
      }
      counts[static_cast<size_t>(p)] = static_cast<uint32_t>(count);
      if (summary && record.summary_flags != kFlagsUnpacked) {
        for (size_t d = 0; d < std::min<size_t>(dds_count, 4); ++d)
          flags[d] |= (record.summary_flags >> (2 * d)) & 3;
        continue;
      }
      for (uint64_t t = 0; t < count; ++t) flags[touches[t].dds()] |= touches[t].write() ? 3 : 1;
    }
    piece_foreign[static_cast<size_t>(piece)] = foreign;
  });
  res.flags.assign(dds_count, 0);
  for (size_t f = 0; f < piece_flags.size(); ++f) res.flags[f % dds_count] |= piece_flags[f];
  uint8_t foreign = 0;
  for (const uint8_t bits : piece_foreign) foreign |= bits;
  for (uint32_t d = 0; d < dds_count; ++d)
    if ((res.flags[d] & 1) && (foreign >> std::min(d, kForeignBeyond) & 1))
      res.flags[d] |= ReconResult::kForeignAccess;
  // The summaries give the cells of the site's bounds, which the plan uses only if this set
  // writes every DDS they cut and no other (else it chooses bounds, or serves read-only elements,
  // from the whole lists).
  bool whole = !summary;
  for (uint32_t d = 0; d < dds_count; ++d) {
    const bool bounded = d < bounds_.size() && !bounds_[d].empty();
    if ((res.flags[d] & 1) && bounded != ((res.flags[d] & 2) != 0)) whole = true;
  }
  if (whole && dropped_in_set()) return relearn();
  if (whole && summary)  // the flags chose the whole lists: count those
    for (int64_t p = 0; p < k; ++p) {
      const uint32_t slot = set_slots_[static_cast<size_t>(p)];
      counts[static_cast<size_t>(p)] = static_cast<uint32_t>(offsets_[slot + 1] - offsets_[slot]);
    }

  // One chunk: the cache already holds the accesses contiguously.
  res.chunks = EvenSplit(res.share_count, 1);
  // The offsets first, then each list copied to its place: inserted list by list (4 or 5
  // accesses each from summaries), the vector's growth checks and copies cost more than the data.
  ReconResult::Chunk& chunk = res.of_chunk.emplace_back();
  chunk.offsets.assign(static_cast<size_t>(res.share_count) + 1, 0);
  const std::span<const uint32_t> share_slots(set_slots_.data() + res.share_begin,
                                              static_cast<size_t>(res.share_count));
  const bool cells = cells_ahead_ && !whole;
  ListWrittenAndReadOnly(res);
  res.touches_omitted = cells && res.read_only.empty();
  if (!res.touches_omitted) {
    for (size_t q = 0; q < share_slots.size(); ++q)
      chunk.offsets[q + 1] = chunk.offsets[q] + counts[static_cast<size_t>(res.share_begin) + q];
    chunk.touches.resize(chunk.offsets.back());
    internal::RunParallelFor(rt, PieceCount(res.share_count), [&](int64_t piece) {
      const auto [begin, end] = PiecePositions(piece, res.share_count);
      for (auto q = static_cast<size_t>(begin); q < static_cast<size_t>(end); ++q) {
        const uint32_t slot = share_slots[q];
        const PackedTouch* from = whole ? touches_.data() + offsets_[slot]
                                        : summary_touches_.data() + records_[slot].summary_first;
        std::copy(from, from + (chunk.offsets[q + 1] - chunk.offsets[q]),
                  chunk.touches.begin() + static_cast<long>(chunk.offsets[q]));
      }
    });
  }
  for (const uint32_t count : counts) counters_.planned_accesses += count;
  // Planned from the summaries, with the site's bounds: the share's cells from the slots',
  // numbered in order of first appearance as AsyncLoop numbers the cells it computes.
  if (cells) {
    std::vector<int32_t> local(signatures_.size(), -1);
    res.cell_of_body.reserve(cell_numbers.size());
    for (const uint32_t number : cell_numbers) {
      if (local[number] < 0) {
        local[number] = static_cast<int32_t>(res.cell_signatures.size());
        res.cell_signatures.push_back(signatures_[number]);
      }
      res.cell_of_body.push_back(local[number]);
    }
    ++counters_.given_cells;
    if (res.touches_omitted) ++counters_.touches_omitted;
  }
  return res;
}

void IndexSetSite::Run(Runtime& rt, const std::vector<int64_t>& indices, internal::LoopBody body,
                       internal::GroupRunner run_group) {
  if (indices.empty()) return;  // no operator invocation, as AsyncFor over an empty range
  const bool locks = rt.options().async_engine == AsyncEngine::kLocks;
  if (rt.context().checkpoints().SkipOperator(locks ? "AsyncFor/locks" : "AsyncFor", where_.file,
                                              where_.line))
    return;
  ++counters_.calls;  // the indices are checked distinct by Accesses, or were when planned_set_
  const int64_t last = static_cast<int64_t>(indices.size()) - 1;
  const auto position_body = [&](int64_t p) { body(indices[static_cast<size_t>(p)]); };
  if (locks) {
    LockedLoop& locked = LockedLoop::At(rt, {where_.file, where_.line, /*dynamic=*/true}, 0, last);
    locked.Plan(rt, Accesses(rt, indices, body, /*every_access=*/true));
    ++counters_.plans;
    locked.Execute(rt, position_body);
    return;
  }
  // Under --dual-in every call follows the order the dual-test file lists for it (positions).
  const auto followed = AsyncLoop::FollowedOrder(rt, where_.file, where_.line, 0, last);
  if (followed || !plan_ || planned_set_ != indices) {
    plan_.reset();  // frees the last plan before the next one is made
    plan_ = AsyncLoop::Make(where_, &async_site_, 0, last, followed.get());
    plan_->set_blocks(blocks_);
    plan_->set_bounds(bounds_);
    const auto start = std::chrono::steady_clock::now();
    ReconResult accesses = Accesses(rt, indices, body, /*every_access=*/false);
    const auto planning = std::chrono::steady_clock::now();
    plan_->Plan(rt, std::move(accesses));
    ReportPlanTime(rt, name_, 0, last, start, planning);
    blocks_ = plan_->blocks();
    if (bounds_.empty()) bounds_ = plan_->bounds();
    // Access checking samples the site's calls as AsyncFor samples a plan's executions: the
    // first two calls whole, then a round of call c when (round + c) % kAccessSampleRounds == 0.
    plan_->set_executions(counters_.calls - 1);
    planned_set_ = indices;
    ++counters_.plans;
  }
  plan_->Execute(rt, run_group);
  // The plan's serial order lists positions: report the indices. Only the leader keeps every
  // group's body list (AsyncLoop::Execute reports no order elsewhere).
  if (!rt.leader()) return;
  rt.context().set_last_serial_order(
      [schedule = std::shared_ptr<const Schedule>(plan_->schedule_ptr()), set = indices] {
        std::vector<int64_t> order = schedule->SerialOrder();
        for (int64_t& p : order) p = set[static_cast<size_t>(p)];
        return order;
      });
}

namespace internal {

void RunAsyncForEach(Runtime& rt, LoopSite site, const std::vector<int64_t>& indices, LoopBody body,
                     GroupRunner run_group) {
  // Nodes that pass another index set, or are in another loop, stop at its first message.
  std::string name;
  if (rt.nodes() > 1) {
    Fnv1a h;
    h.Update(indices.data(), indices.size() * sizeof(int64_t));
    name =
        OperatorName("AsyncForEach", site.file, site.line,
                     "over " + std::to_string(indices.size()) + " indices (hash " + h.hex() + ")");
  }
  const Collectives::OperatorScope scope(rt.context().collectives(), std::move(name));
  const LoopBodyScope bodies("AsyncForEach", site.file, site.line);
  bodies.Run([&] { IndexSetSite::At(rt, site).Run(rt, indices, body, run_group); });
}

}  // namespace internal

}  // namespace strads
