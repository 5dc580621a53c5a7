// AsyncForEach (async_for.h): AsyncFor over an index set that changes from call to call,
// planned in work proportional to the set (docs/async_for.md, "Index sets").
//
// A call site keeps, per index it has run, the accesses its reconnaissance recorded (CSR:
// one offset per index, 8 bytes per access, and a record of what a call reads of it),
// replicated on every node so that any node can plan any share of any set. A call reconnoitres
// only the indices the site has not seen (each node a share of those, then an AllGather), and
// gives the engines a ReconResult of the set's positions 0..k-1 assembled from the cache: the
// schedule engine (AsyncLoop::Plan) or the lock engine (LockedLoop::Plan) plans exactly as for
// AsyncFor(0, k - 1), never looking at the range the indices come from. A call with the same set
// as the site's last call reuses its plan. Once the site's block bounds are fixed, a call plans
// from per-index summaries of the lists (Summarize), which give the same cells from a few accesses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "async_loop.h"
#include "index_slots.h"
#include "reconnaissance.h"
#include "strads/internal/async_engine.h"
#include "strads/runtime.h"

namespace strads {

// What a site did: the counters a test checks to see the work follow the sets.
struct IndexSetCounters {
  uint64_t calls = 0;
  uint64_t reconnoitred = 0;         // bodies run by reconnaissance (indices not seen before)
  uint64_t planned_accesses = 0;     // accesses given to the planner, summed over calls
  uint64_t summarized = 0;           // access lists summarized (Summarize), each once
  uint64_t given_cells = 0;          // calls whose plan took the cached cells (ReconResult)
  uint64_t touches_omitted = 0;      // of those, calls that gave no access lists (no read-only DDS)
  uint64_t plans = 0;                // calls that planned (not the same set as the last call)
  uint64_t cache_clears = 0;         // the cache grew past its bound and started again
  uint64_t whole_lists_dropped = 0;  // the whole lists grew past the bound: summaries kept
};

class IndexSetSite : public internal::LoopState {
 public:
  // The cache's bound, per node: past it, the cache is emptied before a call adds to it. Once
  // the site's block bounds are fixed, the whole lists past it are dropped instead and each
  // index keeps its summary (a few accesses), the bound then applying to the summaries: Lasso's
  // 200 000 coordinates of 49 accesses (78 MB) emptied the cache every 85 calls, and so each
  // call reconnoitred most of its set again (half of an epoch's instructions).
  static constexpr size_t kMaxCachedAccesses = size_t{1} << 23;  // 64 MiB of PackedTouch
  static constexpr size_t kMaxCachedIndices = size_t{1} << 22;

  // The site's state, made on its first call.
  static IndexSetSite& At(Runtime& rt, internal::LoopSite where);
  // Null if the site has not run.
  static const IndexSetSite* Find(Runtime& rt, const char* file, uint32_t line);

  // Collective. One call: runs `body` (an index) for reconnaissance and the lock engine,
  // `run_group` (positions in `indices`) for the schedule engine.
  void Run(Runtime& rt, const std::vector<int64_t>& indices, internal::LoopBody body,
           internal::GroupRunner run_group);

  const IndexSetCounters& counters() const { return counters_; }
  // Whether a call planned from the summaries gives the planner the cached cells (the default)
  // or lets it compute each body's cell from the summary: both plan alike (a test compares).
  void set_cells_ahead(bool on) { cells_ahead_ = on; }
  // The bound on cached accesses (kMaxCachedAccesses), lower in tests.
  void set_max_cached_accesses(size_t bound) { max_cached_accesses_ = bound; }
  // The block count the last call's plan used (0 before a plan): the site's first choice.
  int planned_blocks() const { return plan_ ? plan_->blocks() : 0; }
  size_t HeldBytes() const override;

 private:
  // Collective. The accesses of `indices` (positions 0..k-1), each node its EvenSplit share,
  // flags agreed: reconnoitres the indices not in the cache and adds them to it.
  // `every_access`: each body's whole list (the lock engine); otherwise, once the site's block
  // bounds are fixed and the set writes exactly the DDSs they cover, each body's summary
  // (Summarize), which plans the same schedule. Throws CollectiveUsageError when an index is
  // listed twice.
  ReconResult Accesses(Runtime& rt, const std::vector<int64_t>& indices, internal::LoopBody body,
                       bool every_access);
  void Clear();
  // Summarizes every slot and frees the whole lists: slots below whole_from_ keep only their
  // summaries (and digests); a call that needs their whole lists reconnoitres its set again.
  void DropWholeLists();
  // Extends the summaries to every cached slot. A slot's summary is its accesses with, of a
  // DDS the site's bounds cut into blocks, only the first read and the first write of each
  // block (in order): what the cells need; every access of the other DDSs, which planning
  // reads whole (read-only elements to serve, prefetch addresses). And the slot's cell for the
  // bounds (SlotRecord::cell): the sorted blocks its accesses of those DDSs fall in, numbered
  // among the site's signatures, so that a call's cells are looked up, not computed per body.
  void Summarize();
  // Collective: runs `unseen` (indices) through reconnaissance and caches what every node found.
  void Learn(Runtime& rt, const std::vector<int64_t>& unseen, internal::LoopBody body);

  internal::LoopSite where_{};
  std::string name_;  // file:line
  IndexSlots slots_;  // index -> slot
  // Per slot, what a call's passes over its set read of it, in one record: once the cache
  // outgrows the processor's caches (Lasso: 200 000 indices), a position then costs one cache
  // miss a pass where eight arrays, one per field, cost a miss each (docs/lasso.md, stop 45).
  // Aligned to its size, a record never straddles two cache lines.
  struct alignas(32) SlotRecord {
    uint64_t stamp = 0;          // the last Accesses call that listed the slot
    uint64_t summary_first = 0;  // its summary: summary_touches_[summary_first, + summary_count)
    uint32_t summary_count = 0;
    uint32_t digest = 0;  // its accesses' digest, when access checking is on
    uint32_t cell = 0;    // its signature's number (signatures_), once summarized
    // Its accesses' flags (ReconResult::flags) packed 2 bits a DDS, for DDSs 0-3, once
    // summarized; kFlagsUnpacked if it accesses another. A call's flags over the set then read
    // the record, not the slot's list.
    uint8_t summary_flags = 0;
    // The DDSs it accessed an element of other than its index at (bit d for DDS d <
    // kForeignBeyond, bit kForeignBeyond for any other): ReconResult::kForeignAccess of a set.
    uint8_t foreign = 0;
  };
  static_assert(sizeof(SlotRecord) == 32);
  static constexpr uint8_t kFlagsUnpacked = 0b10;  // a DDS written but not read: never a flag
  static constexpr uint32_t kForeignBeyond = 7;
  std::vector<SlotRecord> records_;   // by slot
  std::vector<uint64_t> offsets_{0};  // slot s's whole list: touches_[offsets_[s] .. offsets_[s+1])
  std::vector<PackedTouch> touches_;
  // The slots [0, summarized_) have their summaries (the records' summary fields), made with
  // bounds_.
  uint32_t summarized_ = 0;
  std::vector<PackedTouch> summary_touches_;
  std::vector<std::vector<BlockKey>> signatures_;  // by number
  std::map<std::vector<BlockKey>, uint32_t> signature_number_;
  bool cells_ahead_ = true;
  uint32_t whole_from_ = 0;  // slots below it have no whole list (DropWholeLists)
  size_t max_cached_accesses_ = kMaxCachedAccesses;
  std::vector<uint32_t> set_slots_;   // the call's slots, by position (kept for its buffer)
  uint64_t stamp_ = 0;                // Accesses calls so far
  AsyncSite async_site_;              // the invocation count and site index AsyncLoop reports
  std::vector<int64_t> planned_set_;  // the set `plan_` was made for
  std::unique_ptr<AsyncLoop> plan_;
  int blocks_ = 0;  // the block count the site's first plan chose, kept for its later sets
  std::vector<std::vector<int64_t>> bounds_;  // and its blocks' bounds (AsyncLoop::bounds)
  IndexSetCounters counters_;
};

}  // namespace strads
