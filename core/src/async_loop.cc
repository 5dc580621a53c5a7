#include "async_loop.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "access_check.h"
#include "accumulators.h"
#include "cache_line.h"
#include "element_requests.h"
#include "memory_headroom.h"
#include "memory_report.h"
#include "node_context.h"
#include "recon_hook.h"
#include "reconnaissance.h"
#include "schedule_report.h"
#include "shared_array_files.h"
#include "strads/errors.h"
#include "strads/internal/dds.h"
#include "strads/operators.h"
#include "strads/parallel_for.h"

namespace strads {

namespace {
constexpr int64_t kBinsPerBlock = 64;
// The block count the automatic choice starts from (and the default before it existed).
constexpr int kMostAutomaticBlocks = 16;
// The body lists of planning go in batches of whole rounds of at most this many groups (a round
// of more goes alone): every node holds its batch's messages, sent and received, at once, and
// with --nodes 64 --blocks 128 (16 384 groups) one exchange of all of them held 31 MB, one of
// 4 096 groups 10.8 MB (planning's peak, once the cells' table and schedule were one a
// process). A schedule of up to this many groups sends them in one exchange, as before.
constexpr size_t kBodyListBatchGroups = 1024;
// The bodies a spot check verifies (ChooseSpotCheck): a body that changes its accesses in every
// call is seen in the next one; checking more would only find rarer strays sooner.
constexpr size_t kSpotCheckBodies = 16;

UnplannedAccessHook unplanned_hook;

// What bodies without a read-only element prefetch (and the entries past a group's end).
const std::byte kDummyElement[64] = {};

// Cell numbers by packed signature, for LocalCells' lookup per body: open addressing with
// linear probing in a power-of-two table of cell numbers kept at most half full, each cell's
// word kept once, by its number. A slot of the word and the number took 16 bytes, 32 to 64 a
// cell at that load: every node holds the table of its cells at once, nearly all 16 384 with
// --nodes 64 --blocks 128 (19 MB at planning's peak); here 4 a slot and 8 a cell.
class PackedCells {
 public:
  // The number of `word`'s cell, or `fresh` if it had none (it is `word`'s from now on).
  int32_t FindOrAdd(uint64_t word, int32_t fresh) {
    if ((used_ + 1) * 2 > slots_.size()) Grow();
    for (size_t i = Slot(word);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] < 0) {
        slots_[i] = fresh;
        if (words_.size() <= static_cast<size_t>(fresh))
          words_.resize(static_cast<size_t>(fresh) + 1);  // numbers of unpacked cells stay unused
        words_[static_cast<size_t>(fresh)] = word;
        ++used_;
        return fresh;
      }
      if (words_[static_cast<size_t>(slots_[i])] == word) return slots_[i];
    }
  }
  // The number of `word`'s cell, or -1.
  int32_t Find(uint64_t word) const {
    if (slots_.empty()) return -1;
    for (size_t i = Slot(word);; i = (i + 1) & (slots_.size() - 1))
      if (slots_[i] < 0 || words_[static_cast<size_t>(slots_[i])] == word) return slots_[i];
  }

 private:
  size_t Slot(uint64_t word) const {
    return static_cast<size_t>((word * 0x9e3779b97f4a7c15ULL) >> shift_);
  }
  void Grow() {
    std::vector<int32_t> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, -1);
    shift_ = 64 - std::countr_zero(slots_.size());
    for (int32_t cell : old) {
      if (cell < 0) continue;
      size_t i = Slot(words_[static_cast<size_t>(cell)]);
      while (slots_[i] >= 0) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = cell;
    }
  }

  std::vector<int32_t> slots_;   // cell numbers, -1 free
  std::vector<uint64_t> words_;  // by cell number
  size_t used_ = 0;
  int shift_ = 64;
};

// The groups of `from` that node `me` runs, in schedule order, with its first index and
// rotation: copied out of a const schedule, moved out of another.
template <class From>
std::shared_ptr<Schedule> NodeGroups(From& from, int me, int threads) {
  auto own = std::make_shared<Schedule>();
  own->first = from.first;
  own->rotation = from.rotation;
  own->rounds.resize(from.rounds.size());
  for (size_t r = 0; r < from.rounds.size(); ++r)
    for (auto& g : from.rounds[r])
      if (g.worker / threads == me) {
        if constexpr (std::is_const_v<From>)
          own->rounds[r].push_back(g);
        else
          own->rounds[r].push_back(std::move(g));
      }
  return own;
}

// Every group's slot, by round in schedule order (PlannedCells::layout).
std::vector<std::vector<GroupSlot>> LayoutOf(const Schedule& schedule) {
  std::vector<std::vector<GroupSlot>> layout(schedule.rounds.size());
  for (size_t r = 0; r < schedule.rounds.size(); ++r) {
    layout[r].reserve(schedule.rounds[r].size());
    for (const Group& g : schedule.rounds[r]) layout[r].push_back({g.worker, g.cell});
  }
  return layout;
}

// Calls fn(begin, end) for the parts of `range` outside the node's owned range of `dds`.
template <typename Fn>
void ForNotOwned(const DdsBase& dds, const AsyncLoop::Range& range, Fn fn) {
  if (range.begin < dds.owned_begin()) fn(range.begin, std::min(range.end, dds.owned_begin()));
  if (range.end > dds.owned_end()) fn(std::max(range.begin, dds.owned_end()), range.end);
}

// `ranges` sorted by DDS and start, overlapping or touching ones merged.
std::vector<AsyncLoop::Range> MergeRanges(std::vector<AsyncLoop::Range> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const AsyncLoop::Range& a, const AsyncLoop::Range& b) {
    return a.dds != b.dds ? a.dds < b.dds : a.begin < b.begin;
  });
  std::vector<AsyncLoop::Range> merged;
  for (const AsyncLoop::Range& r : ranges)
    if (!merged.empty() && merged.back().dds == r.dds && r.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, r.end);
    else
      merged.push_back(r);
  return merged;
}

bool SharesBlock(std::span<const BlockKey> a, std::span<const BlockKey> b) {
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) return true;
    a[i] < b[j] ? ++i : ++j;
  }
  return false;
}

// STRADS_INJECT_BUG=conflicting-round (tests only): moves the first group of round 1 that
// conflicts with a group of round 0 into round 0, on a worker of another node (or another
// thread) than that group. The reported serial order still lists rounds in order, so it no
// longer matches what runs.
void InjectConflictingRound(Schedule& s, const CellSignatures& signatures, int threads,
                            int workers) {
  if (s.rounds.size() < 2) return;
  std::vector<Group>& r0 = s.rounds[0];
  std::vector<Group>& r1 = s.rounds[1];
  for (size_t j = 0; j < r1.size(); ++j)
    for (const Group& g0 : r0) {
      if (!SharesBlock(signatures.at(g0.cell), signatures.at(r1[j].cell))) continue;
      Group moved = std::move(r1[j]);
      moved.worker = (g0.worker + threads) % workers;
      if (moved.worker == g0.worker) moved.worker = (g0.worker + 1) % workers;
      r1.erase(r1.begin() + static_cast<std::ptrdiff_t>(j));
      r0.push_back(std::move(moved));
      if (r1.empty()) s.rounds.erase(s.rounds.begin() + 1);
      return;
    }
}

// Per chunk of `cells` (CellNumbers' chunks), how many of its bodies each of the `count` cells
// has, counted on the node's threads: on one thread, a pass over the share's bodies (19 M at
// 19 M ratings) while the others wait.
std::vector<std::vector<int64_t>> CountByChunk(Runtime& rt, const CellNumbers& cells,
                                               size_t count) {
  const int64_t chunks = cells.chunks().parts();
  std::vector<std::vector<int64_t>> counts(static_cast<size_t>(chunks));
  // Chunk c on thread c % threads; one chunk (AsyncForEach's) on the driver, no worker woken.
  internal::RunParallelFor(rt, chunks, [&](int64_t c) {
    std::vector<int64_t>& mine = counts[static_cast<size_t>(c)];
    mine.assign(count, 0);
    cells.ForEachInChunk(c, [&](int64_t, int32_t cell) { ++mine.at(static_cast<size_t>(cell)); });
  });
  return counts;
}

}  // namespace

size_t AsyncSite::HeldBytes() const {
  size_t bytes = 0;
  for (const auto& plan : plans) bytes += plan->HeldBytes();
  return bytes;
}

size_t AsyncLoop::HeldBytes() const {
  size_t bytes = HeapBytes(order_) + HeapBytes(bounds_) + HeapBytes(phases_) + HeapBytes(serve_);
  for (const OwnedElementList& list : serve_) bytes += list.HeapBytes();
  for (const auto& round : schedule_->rounds) {
    bytes += HeapBytes(round);
    for (const Group& g : round) bytes += HeapBytes(g.bodies);
  }
  for (const auto& round : mine_)
    for (const auto& groups : round) {
      bytes += HeapBytes(groups);
      for (const MyGroup& g : groups) bytes += HeapBytes(g.ahead) + HeapBytes(g.digests);
    }
  bytes += HeapBytes(share_digests_);
  if (dual_order_) bytes += HeapBytes(*dual_order_);
  return bytes;
}

std::shared_ptr<const std::vector<int64_t>> AsyncLoop::FollowedOrder(Runtime& rt, const char* file,
                                                                     uint32_t line, int64_t first,
                                                                     int64_t last) {
  DualTrace* dual = rt.context().dual();
  if (dual == nullptr || !dual->following() || last < first) return nullptr;
  return dual->NextOrder(std::string(file) + ":" + std::to_string(line), first, last);
}

void AsyncLoop::CheckOrder(const std::string& where, int64_t first, int64_t last,
                           const std::vector<int64_t>& order) {
  if (const std::string error = OrderPermutationError(first, last, order); !error.empty())
    throw UsageError("OrderedAsyncFor at " + where + ": the order is not a permutation of " +
                     std::to_string(first) + ".." + std::to_string(last) + ": " + error);
}

AsyncLoop& AsyncLoop::At(Runtime& rt, internal::LoopSite where, int64_t first, int64_t last,
                         const std::vector<int64_t>* order) {
  const std::string key = std::string("AsyncFor@") + where.file + ":" + std::to_string(where.line);
  auto* site = dynamic_cast<AsyncSite*>(rt.context().loop_state(key));
  if (site == nullptr) {
    auto fresh = std::make_unique<AsyncSite>();
    fresh->index = rt.context().NextAsyncSiteIndex();
    site = fresh.get();
    rt.context().set_loop_state(key, std::move(fresh));
  }
  auto& plans = site->plans;
  if (where.dynamic) plans.clear();
  const auto same = [&](const std::unique_ptr<AsyncLoop>& p) {
    return p->first_ == first && p->last_ == last && p->ordered_ == (order != nullptr) &&
           (order == nullptr || *order == p->order_);
  };
  if (auto it = std::find_if(plans.begin(), plans.end(), same); it != plans.end()) {
    plans.splice(plans.begin(), plans, it);
    return *plans.front();
  }
  plans.push_front(Make(where, site, first, last, order));
  if (plans.size() > AsyncSite::kPlansPerSite) plans.pop_back();
  ++site->plans_made;
  return *plans.front();
}

std::unique_ptr<AsyncLoop> AsyncLoop::Make(internal::LoopSite where, AsyncSite* site, int64_t first,
                                           int64_t last, const std::vector<int64_t>* order) {
  auto fresh = std::make_unique<AsyncLoop>();
  fresh->file_ = where.file;
  fresh->line_ = where.line;
  fresh->first_ = first;
  fresh->last_ = last;
  fresh->ordered_ = order != nullptr;
  if (order) fresh->order_ = *order;
  fresh->site_ = site;
  return fresh;
}

void AsyncLoop::Prepare(Runtime& rt, Body body) {
  if (prepared_ || last_ < first_) return;
  const std::string where = file_ + ":" + std::to_string(line_);
  if (last_ - first_ + 1 > Schedule::kMaxBodies)
    throw UsageError("AsyncFor at " + where + ": " + std::to_string(last_ - first_ + 1) +
                     " bodies; a loop runs at most " + std::to_string(Schedule::kMaxBodies));
  // Once per order: a call with the order of a plan made before reuses that plan.
  if (ordered_) CheckOrder(where, first_, last_, order_);
  // 1. Reconnaissance; which DDSs the loop writes and which it only reads. Written accesses are
  // kept as their bins for the most blocks Plan tries (every count it tries cuts at those bins'
  // boundaries), with their digests computed on the way.
  // On one node, unordered, the digests are kept summed by pairs of fine bins where bodies
  // allow (ReconResult::PairSums: sgdmf's 4 bytes a body at planning's peak); if some pair body
  // also reads a DDS the loop writes, those sums do not follow the cells, and reconnaissance runs
  // again keeping the digests per body (its bodies change nothing, so a rerun is the same run).
  const bool pair_sums = rt.nodes() == 1 && !ordered_;
  const auto start = std::chrono::steady_clock::now();
  ReconResult recon = Reconnoitre(rt, where, first_, last_, body, /*with_digests=*/false,
                                  kBinsPerBlock * MostBlocks(rt), pair_sums);
  if (recon.pair_sums && !recon.PairSumsHold()) {
    recon = ReconResult();  // freed before the rerun
    recon = Reconnoitre(rt, where, first_, last_, body, false, kBinsPerBlock * MostBlocks(rt));
  }
  const auto planning = std::chrono::steady_clock::now();
  Plan(rt, std::move(recon));
  // The one-process cluster's nodes share one heap, where planning's transients (every node's
  // at once) left freed pages resident into the loop's run.
  if (rt.context().shared_files() != nullptr) ReturnFreeHeapPages();
  // The first call's cost besides its bodies, on node 0's clock, as benches read it (the first
  // run of the plan, checked whole under --access-check sample, comes after this).
  ReportPlanTime(rt, where, first_, last_, start, planning);
}

int AsyncLoop::MostBlocks(const Runtime& rt) const {
  return blocks_ != 0               ? blocks_
         : rt.options().blocks == 0 ? kMostAutomaticBlocks
                                    : rt.options().blocks;
}

void AsyncLoop::Plan(Runtime& rt, ReconResult recon) {
  if (prepared_ || last_ < first_) return;
  const int nodes = rt.nodes(), me = rt.node();
  const std::string where = file_ + ":" + std::to_string(line_);
  const auto& flags = recon.flags;
  written_dds_ = recon.written;
  read_only_dds_ = recon.read_only;
  const int64_t mine_count = recon.share_count;

  // 3-4. Blocks and cells: for --blocks B, or else the block count among 16, 8, 4, 2, 1 that
  // the access sets favour: halved while that lowers UnboundedCost, the cost of a round's
  // barrier and exchanges included (docs/async_for.md, "Block count"). A 2-D rotation of B
  // blocks with n >= B * B * kRoundCostBodies / 2 bodies is kept without planning B / 2: that
  // would double the bodies per round (about n / B more) to save B / 2 rounds.
  const bool automatic = ChoosesBlocks(rt);
  int blocks = MostBlocks(rt);
  CellNumbers my_cells;  // the cell of each body of this node's share
  std::vector<uint32_t> cell_sums;
  ChunkCellCounts cell_counts;
  CellsPlan cells = PlanCells(rt, recon, blocks, &my_cells, &cell_sums, &cell_counts);
  const double bodies = static_cast<double>(last_ - first_ + 1);
  for (double cost = UnboundedCost(cells.get().schedule); automatic && blocks > 1;) {
    if (cells.get().schedule.rotation && bodies >= blocks * blocks * kRoundCostBodies / 2) break;
    std::vector<std::vector<int64_t>> bounds = std::move(bounds_);
    CellNumbers fewer_cells;
    std::vector<uint32_t> fewer_sums;
    ChunkCellCounts fewer_counts;
    CellsPlan fewer = PlanCells(rt, recon, blocks / 2, &fewer_cells, &fewer_sums, &fewer_counts);
    const double fewer_cost = UnboundedCost(fewer.get().schedule);
    if (fewer_cost >= cost) {
      bounds_ = std::move(bounds);
      break;
    }
    blocks /= 2;
    cost = fewer_cost;
    cells = std::move(fewer);
    my_cells = std::move(fewer_cells);
    cell_sums = std::move(fewer_sums);
    cell_counts = std::move(fewer_counts);
  }
  blocks_ = blocks;
  // Kept by PlanCells for the automatic choice's next block count only (see there).
  Release(recon.fine_counts);
  // This node's schedule: the whole one on the leader (its body lists make the serial order),
  // or where the node made it itself; a node that reads the leader's keeps a copy of the groups
  // it runs only, as KeepOwnGroups leaves them.
  const int threads = rt.threads(), workers = nodes * threads;
  if (cells.shared == nullptr) {
    schedule_ = std::make_shared<Schedule>(std::move(cells.own.schedule));
  } else if (rt.leader()) {
    schedule_ = std::make_shared<Schedule>(cells.shared->schedule);
  } else {
    schedule_ = NodeGroups(std::as_const(cells.shared->schedule), me, threads);
  }
  // Every group, with its worker as placed (one_worker_ below moves groups between threads of
  // a node only): the leader's under shared plans, else this node's.
  const Schedule& whole = cells.shared ? cells.shared->schedule : *schedule_;
  const CellSignatures& signatures = cells.get().signatures;
  // Never slower than the serial order on one worker, by the estimate: then one worker per
  // node runs the node's groups, thread 0 (the serial order, and so the results, stay the
  // same). On one node that is every group. On several, the groups stay on the nodes placement
  // chose: gathering them on node 0 made every call ship the parts of the written blocks the
  // other nodes own there and back (Lasso, mpiexec -n 2: the whole of beta and r, 1 MB a call).
  ScheduleSummary summary = Summarize(whole, workers);
  summary.blocks = blocks;
  summary.automatic = automatic;
  if (summary.speedup < 1) {
    summary.one_worker = one_worker_ = true;
    for (auto& round : schedule_->rounds)
      for (Group& g : round) g.worker -= g.worker % threads;
  }
  // The ordered variant's body lists grew by appending (up to twice their size).
  for (auto& round : schedule_->rounds)
    for (Group& g : round) g.bodies.shrink_to_fit();
  if (rt.context().inject_bug() == internal::InjectedBug::kConflictingRound)
    InjectConflictingRound(*schedule_, signatures, threads, workers);
  if (rt.options().schedule_report && rt.leader())
    std::fprintf(stderr, "schedule: %s\n", DescribeSchedule(where, first_, last_, summary).c_str());
  cells_ = signatures.size();

  // The node that runs each body of this node's share: by cell (an unordered schedule has one
  // group per cell), or, ordered, by body.
  mine_.assign(schedule_->rounds.size(), std::vector<std::vector<MyGroup>>(threads));
  std::vector<int32_t> executor_of_cell(cells_, -1), executor;
  if (ordered_) executor.assign(static_cast<size_t>(mine_count), -1);
  for (size_t r = 0; r < schedule_->rounds.size(); ++r)
    for (const Group& g : schedule_->rounds[r]) {
      const int node = g.worker / threads;
      if (node == me) mine_[r][g.worker % threads].push_back({&g, {}, {}});
      for (uint32_t b : g.bodies) {  // ordered only: the others' lists are still empty
        const int64_t k = b - recon.share_begin;
        if (k >= 0 && k < mine_count) executor[k] = node;
      }
    }
  for (const auto& round : whole.rounds)
    for (const Group& g : round) executor_of_cell[g.cell] = g.worker / threads;
  // The exchanges need only the groups' cells and workers: planned now, the cells' signatures
  // (a table of every cell on every node) are gone before the element requests and the body
  // lists are sent, where every node holds its messages at once (--nodes 64: 41 MB of tables).
  PlanExchanges(rt, signatures, whole);

  // Sending the body lists needs every group's worker and cell (the leader lists them all);
  // the groups themselves, 40 bytes each, only on the leader and for a node's own. Unordered,
  // the others' go now: every node holding the whole schedule until the body lists were made
  // put planning's peak at 16 384 groups on each node (--nodes 64, 128 blocks: 41 MB). The
  // ordered variant's lists name the bodies of every group, which every node sends from.
  // Under shared plans the leader made the layout with the schedule; on one node every group
  // is the node's, and the rounds are empty.
  if (cells.shared == nullptr) {
    cells.own.signatures.Release();
    if (nodes > 1)
      cells.own.layout = LayoutOf(whole);
    else
      cells.own.layout.resize(whole.rounds.size());
    if (nodes > 1 && !ordered_) KeepOwnGroups(rt);  // `whole` goes with the others' groups
  }
  const std::vector<std::vector<GroupSlot>>& layout = cells.get().layout;
  const auto executor_at = [&](int64_t k) {
    return ordered_ ? executor[k] : executor_of_cell[my_cells.Get(k)];
  };

  // 5. Read-only elements: ask each owner to serve them to the node that runs the body.
  {
    // Per owner, as offsets in its owned range, by the executor that needs them: ask[p] lists
    // executor 0's elements, then 1's, and so on, ask_counts[p][e] of executor e's. Tagged with
    // their executor (4 bytes an element: 7.6 MB over --nodes 64), the requests and the
    // received lists made the peak of planning. A first pass counts, the second fills.
    std::vector<std::vector<OwnedElement>> ask(nodes);
    std::vector<std::vector<uint64_t>> ask_counts(nodes, std::vector<uint64_t>(nodes, 0));
    const auto for_each_request = [&](auto request) {  // request(owner, executor, dds, index)
      recon.ForEachBody([&](int64_t k, std::span<const ReconAccess> accesses) {
        for (const ReconAccess& a : accesses) {
          if (flags[a.dds] & 2) continue;
          const DdsBase& dds = rt.context().dds(a.dds);
          const int owner = dds.owner(a.at);
          const int executor = executor_at(k);
          if (owner != executor) request(owner, executor, dds, a.at);
        }
      });
    };
    if (nodes > 1 && !read_only_dds_.empty()) {
      for_each_request(
          [&](int owner, int executor, const DdsBase&, int64_t) { ++ask_counts[owner][executor]; });
      std::vector<std::vector<size_t>> next(nodes);  // where executor e's next request goes
      for (int p = 0; p < nodes; ++p) {
        size_t at = 0;
        for (const uint64_t count : ask_counts[p]) next[p].push_back(std::exchange(at, at + count));
        ask[p].resize(at);
      }
      for_each_request([&](int owner, int executor, const DdsBase& dds, int64_t index) {
        ask[owner][next[owner][executor]++] = OwnedOffset(dds, owner, index);
      });
    }
    // Each message made as it is sent and each received one read and let go (AllToAllMade):
    // all at once, every node's requests out and in (8 bytes an element) were in memory together.
    const auto make = [&](int p) {
      ByteWriter w;  // made at its size: grown by doubling, it held up to twice its bytes
      PutElementRequests(w, ask_counts[p], ask[p]);
      Release(ask[p]);
      Release(ask_counts[p]);
      return w.Take();
    };
    std::vector<std::vector<OwnedElement>> serve(nodes);
    const auto take = [&](int, std::vector<std::byte> bytes) {
      GetElementRequests(bytes, nodes, [&](int executor, OwnedElement need) {
        if (need.dds >= rt.context().dds_count() ||
            need.offset >=
                rt.context().dds(need.dds).owned_end() - rt.context().dds(need.dds).owned_begin())
          throw std::runtime_error("AsyncFor planning: bad element request in a message");
        serve[static_cast<size_t>(executor)].push_back(need);
      });
    };
    rt.context().collectives().AllToAllMade(make, take);
    // Each list coded as soon as it is complete, and let go: the vectors of all nodes at once
    // were the requests' peak already.
    serve_.assign(nodes, {});
    for (int p = 0; p < nodes; ++p) {
      std::vector<OwnedElement>& list = serve[p];
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      serve_[p] = OwnedElementList(list);
      Release(list);
    }
  }
  Release(executor);
  Release(executor_of_cell);  // one per cell of the loop on every node; the requests were its use

  // 6. Each body's first read-only element, for software prefetch, unless it is always the
  // body's own index of one DDS (the usual `A[i]`), and its access digest: all the rest of
  // reconnaissance's touches can go before the groups' body lists are made.
  // With no read-only DDS (Lasso writes all it touches) no body has one to fetch ahead: both
  // passes over the bodies would find nothing. read_only_dds_ comes from the agreed flags, so
  // every node skips AheadFollowsIndex's collective alike.
  std::vector<PackedTouch> first_read;
  if (read_only_dds_.empty()) {
    ahead_dds_ = -1;
    first_read.assign(static_cast<size_t>(mine_count), PackedTouch::None());
  } else if (!AheadFollowsIndex(rt, recon)) {
    first_read.assign(static_cast<size_t>(mine_count), PackedTouch::None());
    recon.ForEachBody([&](int64_t k, std::span<const ReconAccess> accesses) {
      for (const ReconAccess& a : accesses)
        if (!(flags[a.dds] & 2)) {
          first_read[k] = PackedTouch(Touch{a.dds, false, a.at});
          break;
        }
    });
  }
  if (rt.options().access_check != AccessCheck::kOff && recon.digests.empty() && !recon.binned())
    recon.digests = AccessDigests(rt, recon);
  group_digests_ = recon.pair_sums;
  recon.of_chunk = {};
  PlanGroupBodies(rt, recon.share_begin, first_read, std::move(recon.digests), std::move(my_cells),
                  std::move(cell_sums), std::move(cell_counts), layout);
  recon = {};
  cells = {};  // the layout and, where this node read them, the leader's table and schedule

  WriteOrder(rt);
  if (ordered_) KeepOwnGroups(rt);
  prepared_ = true;
}

void AsyncLoop::KeepOwnGroups(Runtime& rt) {
  if (rt.leader()) return;  // its schedule makes the serial order
  const int me = rt.node(), threads = rt.threads();
  std::shared_ptr<Schedule> own = NodeGroups(*schedule_, me, threads);
  // mine_[r][t] lists thread t's groups in schedule order (PlanGroupBodies): the same order
  // NodeGroups keeps, so the k-th of thread t's groups in a round is its k-th there.
  for (size_t r = 0; r < own->rounds.size(); ++r) {
    std::vector<size_t> next(static_cast<size_t>(threads), 0);
    for (Group& g : own->rounds[r]) {
      const int t = g.worker % threads;
      MyGroup& mine = mine_[r][t].at(next[t]++);
      if (mine.group->cell != g.cell)  // the moved-from group in schedule_ keeps its cell
        throw std::logic_error("AsyncFor planning: groups out of order");
      mine.group = &g;
    }
  }
  schedule_ = std::move(own);
}

bool AsyncLoop::AheadFollowsIndex(Runtime& rt, const ReconResult& recon) {
  // -2: no bodies here; -1: some body breaks the pattern; else the DDS.
  int64_t dds = recon.share_count == 0 ? -2 : -1;
  bool broken = false;
  if (recon.binned()) {
    // Every shape is some body's, and says which DDS its first read-only access reads and
    // whether it reads the body's own index there: no need to read the bodies back.
    bool first_shape = true;
    for (const ReconResult::Chunk& chunk : recon.of_chunk)
      for (const ReconResult::Shape& shape : chunk.shapes) {
        int64_t found = -1;
        for (uint32_t item : shape.items)
          if (!(recon.flags[item >> 2] & 2)) {
            if ((item & 3) == ReconResult::kOwnRead) found = item >> 2;
            break;
          }
        if (found < 0 || (!first_shape && found != dds)) broken = true;
        if (!broken) dds = found;
        first_shape = false;
      }
    if (broken) dds = -1;
  }
  if (!recon.binned())
    recon.ForEachBody([&](int64_t k, std::span<const ReconAccess> accesses) {
      if (broken) return;
      int64_t found = -1;
      for (const ReconAccess& a : accesses)
        if (!(recon.flags[a.dds] & 2)) {
          if (a.at == first_ + recon.share_begin + k) found = a.dds;
          break;
        }
      if (found < 0 || (k > 0 && found != dds)) {
        dds = -1;
        broken = true;
        return;
      }
      dds = found;
    });
  ByteWriter w;
  w.Put(dds);
  int64_t agreed = -2;
  for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
    ByteReader r(bytes);
    const auto theirs = r.Get<int64_t>();
    if (theirs == -2) continue;
    agreed = (agreed == -2 || agreed == theirs) ? theirs : -1;
  }
  ahead_dds_ =
      agreed >= 0 && static_cast<uint64_t>(agreed) < rt.context().dds_count() ? agreed : -1;
  return ahead_dds_ >= 0;
}

bool AsyncLoop::SharesPlans(Runtime& rt) const {
  return rt.nodes() > 1 && !ordered_ && rt.context().shared_plans() != nullptr &&
         rt.context().inject_bug() == internal::InjectedBug::kNone;
}

AsyncLoop::CellsPlan AsyncLoop::PlanCells(Runtime& rt, ReconResult& recon, int blocks,
                                          CellNumbers* my_cells, std::vector<uint32_t>* cell_sums,
                                          ChunkCellCounts* chunk_counts) {
  const int nodes = rt.nodes();
  const bool shared = SharesPlans(rt);
  const int64_t n = last_ - first_ + 1;
  const size_t dds_count = rt.context().dds_count();
  const auto& flags = recon.flags;

  // 3. Blocks of the written DDSs, balanced by how often their elements are accessed; the
  // node's threads count the touches of their reconnaissance chunks. Bounds given for every
  // written DDS, with `blocks` blocks each, are used as they are (set_bounds).
  const bool given = std::all_of(written_dds_.begin(), written_dds_.end(), [&](uint32_t d) {
    const int64_t size = rt.context().dds(d).size();
    return d < given_bounds_.size() && !given_bounds_[d].empty() &&
           given_bounds_[d].size() == static_cast<size_t>(std::min<int64_t>(blocks, size)) + 1 &&
           given_bounds_[d].back() == size;
  });
  // Binned reconnaissance: per written DDS, each fine bin's block.
  std::vector<std::vector<int32_t>> block_of_fine(dds_count);
  if (given) {
    bounds_.assign(dds_count, {});
    for (uint32_t d : written_dds_) bounds_[d] = given_bounds_[d];
  } else {
    std::vector<std::vector<int64_t>> counts(dds_count);
    std::vector<EvenSplit> bins_of(dds_count, EvenSplit(0, 1));
    // Each fine bin's bin here. The bins here nest in the fine ones (both are EvenSplits of the
    // DDS, and the fine count is a multiple of this one or every element), so a fine bin lies in
    // one bin and one block.
    std::vector<std::vector<int32_t>> bin_of_fine(dds_count);
    for (uint32_t d : written_dds_) {
      const int64_t size = rt.context().dds(d).size();
      counts[d].assign(std::min<int64_t>(size, kBinsPerBlock * blocks), 0);
      bins_of[d] = EvenSplit(size, static_cast<int64_t>(counts[d].size()));
      if (!recon.binned()) continue;
      const EvenSplit fine(size, recon.fine_bins[d]);
      if (fine.parts() != size && fine.parts() % bins_of[d].parts() != 0)
        throw std::logic_error("AsyncFor planning: blocks that do not nest in the fine bins");
      bin_of_fine[d].resize(static_cast<size_t>(fine.parts()));
      for (int64_t f = 0; f < fine.parts(); ++f)
        bin_of_fine[d][f] = static_cast<int32_t>(bins_of[d].part_of(fine.begin(f)));
    }
    if (recon.binned()) {  // reconnaissance counted the accesses by fine bin
      for (uint32_t d : written_dds_)
        if (d < recon.fine_counts.size())
          for (size_t f = 0; f < recon.fine_counts[d].size(); ++f)
            counts[d][static_cast<size_t>(bin_of_fine[d][f])] += recon.fine_counts[d][f];
    } else {
      const int threads = rt.threads();
      std::vector<std::vector<std::vector<int64_t>>> of_thread(threads, counts);
      rt.context().pool().RunOnAll([&](int t) {
        auto& mine = of_thread[t];
        for (size_t c = static_cast<size_t>(t); c < recon.of_chunk.size(); c += threads)
          recon.ForEachBody(c, [&](int64_t, std::span<const ReconAccess> accesses) {
            for (const ReconAccess& a : accesses)
              if (flags[a.dds] & 2) ++mine[a.dds][bins_of[a.dds].part_of(a.at)];
          });
      });
      for (uint32_t d : written_dds_)
        for (const auto& mine : of_thread)
          for (size_t b = 0; b < counts[d].size(); ++b) counts[d][b] += mine[d][b];
    }
    PlanBlocks(rt, counts, blocks);
  }
  // Read again only when the automatic choice plans another block count (Plan lets them go
  // then): a count per fine bin of every written DDS on every node, 6.8 MB over --nodes 64 at
  // 128 blocks, held through the cells' messages.
  if (!ChoosesBlocks(rt)) Release(recon.fine_counts);
  for (uint32_t d : written_dds_) {
    if (!recon.binned()) continue;
    const EvenSplit fine(rt.context().dds(d).size(), recon.fine_bins[d]);
    const auto& b = bounds_[d];
    block_of_fine[d].resize(static_cast<size_t>(fine.parts()));
    for (int64_t f = 0; f < fine.parts(); ++f)
      block_of_fine[d][f] =
          static_cast<int32_t>(std::upper_bound(b.begin(), b.end(), fine.begin(f)) - b.begin() - 1);
  }

  // 4. Cells: bodies with the same written blocks, numbered as one pass over the bodies in
  // index order would. Every node learns every cell's signature and size; the bodies' cells
  // stay on the node that reconnoitred them, except for the ordered variant, which schedules
  // body by body.
  CellSignatures local_signatures;
  std::vector<uint32_t> local_sums;
  if (given && static_cast<int64_t>(recon.cell_of_body.size()) == recon.share_count) {
    // Made ahead for these bounds (AsyncForEach's cached cells): numbered as LocalCells numbers.
    for (const auto& sig : recon.cell_signatures) local_signatures.Add(sig);
    *my_cells = CellNumbers(recon.chunks);
    for (int64_t chunk = 0; chunk < recon.chunks.parts(); ++chunk) {
      const int64_t begin = recon.chunks.begin(chunk), end = recon.chunks.end(chunk);
      for (int64_t k = begin; k < end; ++k) {
        const int32_t c = recon.cell_of_body[static_cast<size_t>(k)];
        if (c < 0 || static_cast<size_t>(c) >= local_signatures.size())
          throw std::logic_error("AsyncFor planning: a given cell out of range");
        my_cells->Set(chunk, k - begin, c);
      }
    }
    // Given cells come from AsyncForEach's cached lists, whose digests are kept per body.
    if (recon.pair_sums) throw std::logic_error("AsyncFor planning: given cells with pair sums");
  } else {
    LocalCells(rt, recon, block_of_fine, &local_signatures, my_cells,
               recon.pair_sums ? &local_sums : nullptr, nodes == 1 ? chunk_counts : nullptr);
  }
  // The one-process cluster's nodes share one heap, where LocalCells' freed hash tables (every
  // node's at once) stayed resident while every node's cells were on their way to the leader.
  if (rt.context().shared_files() != nullptr) ReturnFreeHeapPages();
  ScheduleInput input;
  input.first = first_;
  input.workers = nodes * rt.threads();
  input.threads = rt.threads();
  input.order = ordered_ ? &order_ : nullptr;
  input.blocks_of_dds.assign(dds_count, 0);
  for (uint32_t d : written_dds_)
    input.blocks_of_dds[d] = static_cast<int64_t>(bounds_[d].size()) - 1;
  if (nodes > 1) {
    // Each block starts on the node owning most of it: placement keeps groups near their data.
    input.block_home.resize(dds_count);
    input.block_bytes.resize(dds_count);
    for (uint32_t d : written_dds_) {
      const DdsBase& dds = rt.context().dds(d);
      const auto& b = bounds_[d];
      for (size_t k = 0; k + 1 < b.size(); ++k) {
        int home = 0;
        int64_t most = -1;
        for (int64_t begin = b[k]; begin < b[k + 1];) {
          const int owner = dds.owner(begin);
          const int64_t stop = std::min(b[k + 1], dds.owners().end(owner));
          if (stop - begin > most) most = stop - begin, home = owner;
          begin = stop;
        }
        input.block_home[d].push_back(home);
        input.block_bytes[d].push_back((b[k + 1] - b[k]) *
                                       static_cast<int64_t>(dds.element_bytes()));
      }
    }
  }
  // Messages here are made at their sizes, and the leader lets each node's go once read: at
  // --nodes 64 every node's cells are nearly all 16 384, and grown by doubling, the gathered
  // messages and the 64 replies (each the whole table) held 100 MB at once on the leader.
  // A cell's bodies on a node in 32 bits (a share has at most kMaxBodies) and its signature
  // packed: the leader receives every node's message at once, 28 bytes a cell of two keys with
  // 64-bit sizes and whole keys, 12 so.
  const size_t local_cells = local_signatures.size();
  ByteWriter w;
  w.Reserve(local_signatures.PackedWireBytes() + sizeof(uint64_t) + local_cells * sizeof(uint32_t));
  local_signatures.PutPacked(w);
  // The table goes before the cells' bodies are counted: the table, the counts and the message
  // were 40 bytes a cell on every node at once.
  local_signatures.Release();
  // The chunks' counts summed into the first's: a second array of a count per cell on every node
  // was 8.4 MB over --nodes 64 at 128 blocks, at planning's peak.
  // LocalCells' counts, where it kept them (one node: a few KB), are summed from a copy, since
  // they stay for PlanGroupBodies.
  ChunkCellCounts chunk_sizes =
      chunk_counts->empty() ? CountByChunk(rt, *my_cells, local_cells) : *chunk_counts;
  std::vector<int64_t> local_sizes =
      chunk_sizes.empty() ? std::vector<int64_t>(local_cells, 0) : std::move(chunk_sizes[0]);
  for (size_t k = 1; k < chunk_sizes.size(); ++k)
    for (size_t c = 0; c < local_cells; ++c) local_sizes[c] += chunk_sizes[k][c];
  Release(chunk_sizes);
  w.Put<uint64_t>(local_cells);
  for (const int64_t size : local_sizes) w.Put(static_cast<uint32_t>(size));
  Release(local_sizes);
  // As after LocalCells: the table and the counts, 28 bytes a cell, stayed resident as free
  // heap while every node's message waited for the leader (the one-process cluster only).
  if (rt.context().shared_files() != nullptr) ReturnFreeHeapPages();
  // Node 0 numbers the cells (node after node, each node's in its order) and sends every node
  // the table of signatures and sizes and its own cells' numbers: each node holds the table
  // once, where an AllGather of the nodes' cells would hold P copies of it. Under shared plans
  // node 0 also makes the schedule, for every node of the process, and the replies carry the
  // cells' numbers only: every node held the table and the schedule it made from it (68 bytes
  // a cell), 71 MB at once over --nodes 64 at 128 blocks.
  std::vector<std::vector<int32_t>> to_global(nodes);
  std::vector<std::byte> table_bytes;
  CellsPlan made;
  std::optional<Schedule> leader_schedule;  // built by MergeAloneCells for `input` as it is
  if (auto all = rt.context().collectives().Gather(0, w.Take()); !all.empty()) {
    std::unordered_map<std::vector<BlockKey>, int32_t, SignatureHash> global;
    for (int p = 0; p < nodes; ++p) {
      ByteReader r(all[p]);
      const CellSignatures theirs = CellSignatures::GetPacked(r, "AsyncFor planning");
      const uint64_t cells = theirs.size();
      for (uint64_t c = 0; c < cells; ++c) {
        const auto sig = theirs[c];
        auto [it, inserted] = global.try_emplace(std::vector<BlockKey>(sig.begin(), sig.end()),
                                                 static_cast<int32_t>(global.size()));
        if (inserted) {
          input.signatures.Add(sig);
          input.cell_sizes.push_back(0);
        }
        to_global[p].push_back(it->second);
      }
      const auto sizes = r.GetVector<uint32_t>();
      if (sizes.size() != cells)
        throw std::runtime_error("AsyncFor planning: bad cell sizes in a message");
      for (uint64_t c = 0; c < cells; ++c) input.cell_sizes[to_global[p][c]] += sizes[c];
      Release(all[p]);
    }
    if (!ordered_) leader_schedule = MergeAloneCells(flags, input, to_global);
    if (shared) {
      auto planned = std::make_shared<PlannedCells>();
      planned->schedule = leader_schedule ? std::move(*leader_schedule) : BuildSchedule(input);
      planned->layout = LayoutOf(planned->schedule);
      planned->signatures = std::move(input.signatures);
      Release(input.cell_sizes);
      made.shared = planned;
      rt.context().shared_plans()->Publish(std::move(planned));  // before the replies
    } else {
      ByteWriter table;
      table.Reserve(input.signatures.WireBytes() + sizeof(uint64_t) +
                    input.cell_sizes.size() * sizeof(int64_t));
      input.signatures.Put(table);
      table.PutVector(input.cell_sizes);
      table_bytes = table.Take();
    }
  }
  // Each reply made as it is sent: the leader held all of them at once (64 x 0.5 MB).
  const std::vector<std::byte> reply = rt.context().collectives().ScatterMade(0, [&](int p) {
    ByteWriter message;
    message.Reserve(table_bytes.size() + sizeof(uint64_t) + to_global[p].size() * sizeof(int32_t));
    message.PutRaw(table_bytes.data(), table_bytes.size());
    message.PutVector(to_global[p]);
    Release(to_global[p]);
    return message.Take();
  });
  ByteReader r(reply);
  if (shared) {
    if (!rt.leader()) made.shared = rt.context().shared_plans()->Take(rt.node());
  } else if (!rt.leader()) {
    input.signatures = CellSignatures::Get(r, "AsyncFor planning");
    input.cell_sizes = r.GetVector<int64_t>();
  } else {  // made the table itself
    CellSignatures::Get(r, "AsyncFor planning");
    r.GetVector<int64_t>();
  }
  const uint64_t cells = shared ? made.shared->signatures.size() : input.signatures.size();
  const auto mine = r.GetVector<int32_t>();
  if ((!shared && input.cell_sizes.size() != cells) || mine.size() != local_cells)
    throw std::runtime_error("AsyncFor planning: bad cell table in a message");
  for (int32_t c : mine)
    if (c < 0 || static_cast<uint64_t>(c) >= cells)
      throw std::runtime_error("AsyncFor planning: bad cell number in a message");
  // The leader's cells keep their numbers (it numbers its own first): one node maps nothing.
  bool renumbered = false;
  for (size_t c = 0; c < mine.size() && !renumbered; ++c)
    renumbered = mine[c] != static_cast<int32_t>(c);
  if (renumbered) {
    for (int64_t c = 0; c < my_cells->chunks().parts(); ++c) my_cells->Renumber(c, mine);
    Release(*chunk_counts);  // by the old numbers (not kept on several nodes anyway)
  }
  cell_sums->clear();
  if (recon.pair_sums) {
    cell_sums->assign(static_cast<size_t>(cells), 0);
    for (size_t c = 0; c < local_sums.size(); ++c)
      (*cell_sums)[static_cast<size_t>(mine[c])] += local_sums[c];
  }
  // The ordered variant schedules body by body: every node needs every body's cell.
  if (ordered_) {
    ByteWriter cells_of_mine;
    std::vector<int32_t> listed(static_cast<size_t>(my_cells->size()));
    my_cells->ForEach([&](int64_t k, int32_t c) { listed[static_cast<size_t>(k)] = c; });
    cells_of_mine.PutVector(listed);
    input.cell_of_body.reserve(n);
    for (const auto& bytes : rt.context().collectives().AllGather(cells_of_mine.Take())) {
      ByteReader cr(bytes);
      for (int32_t c : cr.GetVector<int32_t>()) {
        if (c < 0 || static_cast<uint64_t>(c) >= cells)
          throw std::runtime_error("AsyncFor planning: bad cell number in a message");
        input.cell_of_body.push_back(c);
      }
    }
  }
  if (!shared) {
    made.own.schedule = leader_schedule ? std::move(*leader_schedule) : BuildSchedule(input);
    made.own.signatures = std::move(input.signatures);
  }
  return made;
}

std::optional<Schedule> AsyncLoop::MergeAloneCells(
    const std::vector<uint8_t>& flags, ScheduleInput& input,
    std::vector<std::vector<int32_t>>& to_global) const {
  std::vector<bool> alone(flags.size(), false);
  bool any = false;
  for (uint32_t d : written_dds_)
    if (!(flags[d] & ReconResult::kForeignAccess)) alone[d] = any = true;
  ScheduleInput merged;
  const std::vector<int32_t> to_merged =
      any ? MergeCellsApartFrom(input, alone, &merged) : std::vector<int32_t>();
  if (to_merged.empty()) return std::nullopt;
  // By the estimate that knows no worker count: the plan is the same for any nodes and threads.
  Schedule as_is = BuildSchedule(input), fewer = BuildSchedule(merged);
  if (UnboundedCost(fewer) >= UnboundedCost(as_is)) return as_is;
  for (auto& cells : to_global)
    for (int32_t& c : cells) c = to_merged[static_cast<size_t>(c)];
  input.signatures = std::move(merged.signatures);
  input.cell_sizes = std::move(merged.cell_sizes);
  return fewer;
}

void AsyncLoop::LocalCells(Runtime& rt, const ReconResult& recon,
                           const std::vector<std::vector<int32_t>>& block_of_fine,
                           CellSignatures* signatures, CellNumbers* cell_of_body,
                           std::vector<uint32_t>* cell_sums, ChunkCellCounts* chunk_counts) const {
  // Each reconnaissance chunk's cells are numbered in order of first appearance (the node's
  // threads take the chunks in turn); renumbered chunk after chunk, the cells keep the numbers
  // one pass in body order gives.
  const int threads = rt.threads();
  const size_t chunks = recon.of_chunk.size();
  struct Chunk {
    // Signatures that pack in a word (PackSignature) are looked up by it, the others whole.
    PackedCells packed;
    std::unordered_map<std::vector<BlockKey>, int32_t, SignatureHash> cells;
    CellSignatures signatures;    // by the chunk's cell number
    std::vector<uint32_t> sums;   // cell_sums: by the chunk's cell number
    std::vector<int64_t> counts;  // chunk_counts: bodies by the chunk's cell number
  };
  const bool counting = chunk_counts != nullptr;
  std::vector<Chunk> parts(chunks);
  *cell_of_body = CellNumbers(recon.chunks);
  // The signature of a body from its accesses, into `sig`, sorted and unique.
  const auto signature_of = [&](std::span<const ReconAccess> accesses, std::vector<BlockKey>& sig) {
    sig.clear();
    // A body's exact touches of a block mostly come in runs (a column's rows in order): a
    // touch in the block of the touch before it adds nothing, so it costs neither a search
    // nor a slot in the sort below (Lasso's 49 touches a body gave 2 or 3 keys and a sort
    // of 49).
    uint32_t run_dds = UINT32_MAX;
    int64_t run_begin = 0, run_end = 0;
    for (const ReconAccess& a : accesses) {
      if (!(recon.flags[a.dds] & 2)) continue;
      if (a.binned) {
        sig.push_back(MakeBlockKey(a.dds, block_of_fine[a.dds][a.at]));
        continue;
      }
      if (a.dds == run_dds && a.at >= run_begin && a.at < run_end) continue;
      const auto& b = bounds_[a.dds];
      const int64_t block = std::upper_bound(b.begin(), b.end(), a.at) - b.begin() - 1;
      run_dds = a.dds;
      run_begin = b[static_cast<size_t>(block)];
      run_end = b[static_cast<size_t>(block) + 1];
      sig.push_back(MakeBlockKey(a.dds, block));
    }
    std::sort(sig.begin(), sig.end());
    sig.erase(std::unique(sig.begin(), sig.end()), sig.end());
  };
  rt.context().pool().RunOnAll([&](int t) {
    std::vector<BlockKey> sig;
    std::vector<ReconAccess> accesses;
    for (size_t c = static_cast<size_t>(t); c < chunks; c += threads) {
      Chunk& part = parts[c];
      const ReconResult::Chunk& chunk = recon.of_chunk[c];
      // Neighbouring bodies often share a cell: no lookup then.
      int32_t previous = -1;
      uint64_t previous_word = 0;
      bool previous_packed = false;
      const auto cell_of = [&](uint64_t word, bool packed) {
        if (previous >= 0 && packed && previous_packed && word == previous_word) return previous;
        if (packed) {
          const auto fresh = static_cast<int32_t>(part.signatures.size());
          previous = part.packed.FindOrAdd(word, fresh);
          if (previous == fresh) {
            part.signatures.AddPacked(word);
            if (counting) part.counts.push_back(0);
          }
        } else if (previous < 0 || previous_packed ||
                   !std::ranges::equal(sig, part.signatures[static_cast<size_t>(previous)])) {
          auto [it, inserted] =
              part.cells.try_emplace(sig, static_cast<int32_t>(part.signatures.size()));
          if (inserted) {
            part.signatures.Add(sig);
            if (counting) part.counts.push_back(0);
          }
          previous = it->second;
        }
        previous_word = word;
        previous_packed = packed;
        return previous;
      };
      const int64_t begin = recon.chunks.begin(static_cast<int64_t>(c));
      const int64_t end = recon.chunks.end(static_cast<int64_t>(c));
      // The cell of body k from its accesses.
      const auto set_cell = [&](int64_t k, std::span<const ReconAccess> body_accesses) {
        signature_of(body_accesses, sig);
        uint64_t word = 0;
        const bool packed = PackSignature(sig, &word);
        const int32_t cell = cell_of(word, packed);
        cell_of_body->Set(static_cast<int64_t>(c), k - begin, cell);
        if (counting) ++part.counts[static_cast<size_t>(cell)];
        return cell;
      };
      if (!recon.binned()) {
        recon.ForEachBody(c, [&](int64_t k, std::span<const ReconAccess> a) { set_cell(k, a); });
        part.packed = {};
        part.cells = {};
        continue;
      }
      // Binned: a shape whose signature comes from at most two written bins (sgdmf's W and H)
      // gives its packed signature from the bins alone, without reading the body back.
      struct ShapeBins {
        bool direct = true;
        int bins = 0;
        uint32_t dds[2] = {0, 0};
        uint32_t offset[2] = {0, 0};  // in the body's payload
        bool pair = false;            // a pair body's (cell_sums): summed in its table
      };
      const ReconResult::PairSums& pairs = chunk.pairs;
      if (cell_sums != nullptr) part.sums.clear();
      std::vector<ShapeBins> shapes(chunk.shapes.size());
      for (size_t h = 0; h < chunk.shapes.size(); ++h) {
        ShapeBins& sb = shapes[h];
        sb.pair = cell_sums != nullptr && pairs.active() && pairs.Holds(chunk.shapes[h]);
        uint32_t offset = 0;
        for (uint32_t item : chunk.shapes[h].items) {
          const uint32_t dds = item >> 2;
          const auto kind = static_cast<ReconResult::ShapeItem>(item & 3);
          if (recon.flags[dds] & 2) {
            if (kind != ReconResult::kWriteBin || sb.bins == 2 || dds >= kPackedDdsLimit)
              sb.direct = false;
            else
              sb.dds[sb.bins] = dds, sb.offset[sb.bins++] = offset;
          }
          offset += ReconResult::ItemBytes(kind);
        }
      }
      // cell_sums: adds body k's digest to its cell's sum, unless it is a pair body (its fine
      // pair's sum is added below, once the chunk's cells are numbered).
      const auto add_sum = [&](int64_t k, const ShapeBins& sb, int32_t cell) {
        if (sb.pair) return;
        if (part.sums.size() <= static_cast<size_t>(cell))
          part.sums.resize(static_cast<size_t>(cell) + 1, 0);
        part.sums[static_cast<size_t>(cell)] += BodyDigestPart(
            first_ + recon.share_begin + k, chunk.body_digests.at(static_cast<size_t>(k - begin)));
      };
      // The cells of the last packed words seen, direct-mapped by the word: sgdmf's bodies come
      // in random order, so a body's cell is mostly not its predecessor's, and the table's
      // lookup (PackedCells, through cell_of) was about half of LocalCells' instructions
      // (callgrind, 1.9 M ratings). A word's cell never changes once given, so whatever a slot
      // holds is right, and a cell is still numbered by cell_of at its first body.
      struct RecentCell {
        uint64_t word = 0;
        int32_t cell = -1;
      };
      constexpr int kRecentShift = 64 - 11;  // 2048 slots, 32 KB
      std::vector<RecentCell> recent_cells(size_t{1} << (64 - kRecentShift));
      const uint8_t* at = chunk.stream.data();
      for (int64_t k = begin; k < end; ++k) {
        const uint8_t* const body_at = at;
        const uint32_t shape = ReconResult::ReadShape(at);
        const ShapeBins& sb = shapes[shape];
        if (!sb.direct) {
          accesses.clear();
          at = recon.DecodeBody(chunk, k, body_at, accesses);
          const int32_t cell = set_cell(k, accesses);
          if (cell_sums != nullptr) add_sum(k, sb, cell);
          continue;
        }
        uint32_t keys[2] = {kNoPackedKey, kNoPackedKey};
        for (int i = 0; i < sb.bins; ++i) {
          const uint8_t* bin = at + sb.offset[i];
          const int32_t block = block_of_fine[sb.dds[i]][bin[0] | bin[1] << 8];
          keys[i] = sb.dds[i] << 16 | static_cast<uint32_t>(block);
        }
        if (keys[1] < keys[0]) std::swap(keys[0], keys[1]);
        if (keys[1] == keys[0]) keys[1] = kNoPackedKey;
        const uint64_t word = uint64_t{keys[0]} << 32 | keys[1];
        RecentCell& recent = recent_cells[(word * 0x9e3779b97f4a7c15ULL) >> kRecentShift];
        if (recent.word != word || recent.cell < 0) recent = {word, cell_of(word, true)};
        const int32_t cell = recent.cell;
        cell_of_body->Set(static_cast<int64_t>(c), k - begin, cell);
        if (counting) ++part.counts[static_cast<size_t>(cell)];
        if (cell_sums != nullptr) add_sum(k, sb, cell);
        at += chunk.shapes[shape].bytes;
      }
      if (cell_sums != nullptr && pairs.active()) {
        // Each fine pair's sum to its cell, in one pass over the table: a fine pair lies in one
        // cell, and a pair with no body sums to 0. Looked up per body, at its pair's first body,
        // the table and a byte a pair (whether it was added) were read at random: the most of
        // LocalCells' time at 19 M ratings (perf).
        const uint32_t dds0 = pairs.dds[0], dds1 = pairs.dds[1];
        const auto& blocks0 = block_of_fine[dds0];
        const auto& blocks1 = block_of_fine[dds1];
        std::vector<int32_t> row_cells;  // per block of dds1, the cell with the row's dds0 block
        int32_t row_block = -1;
        for (int64_t i = 0; i < pairs.bins[0]; ++i) {
          if (blocks0[static_cast<size_t>(i)] != row_block) {
            row_block = blocks0[static_cast<size_t>(i)];
            row_cells.assign(bounds_[dds1].size(), -1);
          }
          const uint32_t* row = pairs.sums.data() + i * pairs.bins[1];
          for (int64_t j = 0; j < pairs.bins[1]; ++j) {
            if (row[j] == 0) continue;
            const int32_t block1 = blocks1[static_cast<size_t>(j)];
            int32_t& cell = row_cells[static_cast<size_t>(block1)];
            if (cell < 0) {
              sig = {MakeBlockKey(dds0, row_block), MakeBlockKey(dds1, block1)};
              uint64_t word = 0;
              if (PackSignature(sig, &word)) {
                cell = part.packed.Find(word);
              } else if (const auto it = part.cells.find(sig); it != part.cells.end()) {
                cell = it->second;
              }
              if (cell < 0) throw std::logic_error("AsyncFor planning: a fine pair in no cell");
              if (part.sums.size() <= static_cast<size_t>(cell))
                part.sums.resize(static_cast<size_t>(cell) + 1, 0);
            }
            part.sums[static_cast<size_t>(cell)] += row[j];
          }
        }
      }
      part.packed = {};
      part.cells = {};
    }
  });
  // One chunk (one thread) numbers the cells as the merge would: its list is the node's. The
  // merge holds every signature three times (the chunk's, the map's key, the node's list): with
  // --nodes 64 --threads 1, each node's nearly all 16 384 cells, 65 MB over the nodes at once.
  if (chunks == 1) {
    if (counting) chunk_counts->assign(1, std::move(parts[0].counts));
    *signatures = std::move(parts[0].signatures);
    if (cell_sums != nullptr) {  // a cell's sum grows its chunk's list only once it has one
      *cell_sums = std::move(parts[0].sums);
      cell_sums->resize(signatures->size(), 0);
    }
    return;
  }
  std::unordered_map<std::vector<BlockKey>, int32_t, SignatureHash> merged;
  std::vector<std::vector<int32_t>> to_merged(chunks);
  for (size_t c = 0; c < chunks; ++c) {
    for (size_t cell = 0; cell < parts[c].signatures.size(); ++cell) {
      const auto sig = parts[c].signatures[cell];
      auto [it, inserted] = merged.try_emplace(std::vector<BlockKey>(sig.begin(), sig.end()),
                                               static_cast<int32_t>(merged.size()));
      if (inserted) signatures->Add(sig);
      to_merged[c].push_back(it->second);
    }
    parts[c].signatures.Release();
  }
  if (counting) {
    chunk_counts->assign(chunks, std::vector<int64_t>(signatures->size(), 0));
    for (size_t c = 0; c < chunks; ++c)
      for (size_t cell = 0; cell < parts[c].counts.size(); ++cell)
        (*chunk_counts)[c][static_cast<size_t>(to_merged[c][cell])] += parts[c].counts[cell];
  }
  if (cell_sums != nullptr) {
    cell_sums->assign(signatures->size(), 0);
    for (size_t c = 0; c < chunks; ++c)
      for (size_t cell = 0; cell < parts[c].sums.size(); ++cell)
        (*cell_sums)[static_cast<size_t>(to_merged[c][cell])] += parts[c].sums[cell];
  }
  for (size_t c = 0; c < chunks; ++c) cell_of_body->Renumber(static_cast<int64_t>(c), to_merged[c]);
}

void AsyncLoop::PlanGroupBodies(Runtime& rt, int64_t share_begin,
                                const std::vector<PackedTouch>& first_read,
                                std::vector<uint32_t> digests, CellNumbers my_cells,
                                std::vector<uint32_t> cell_sums, ChunkCellCounts chunk_counts,
                                const std::vector<std::vector<GroupSlot>>& layout) {
  const int nodes = rt.nodes(), me = rt.node(), threads = rt.threads();
  const bool checked = rt.options().access_check != AccessCheck::kOff;
  const bool reads = ahead_dds_ < 0;  // per-body prefetch addresses are kept
  const int64_t share_count = static_cast<int64_t>(my_cells.size());
  const int64_t n = last_ - first_ + 1;
  {
    // The plan's lists, a few bytes a body: refused beyond what the process can still use, with
    // reconnaissance's records still held (every node of the process plans at once).
    const size_t body_bytes = sizeof(uint32_t) + (checked ? sizeof(uint32_t) : 0) +
                              (reads ? sizeof(MyGroup::ahead[0]) : 0) +
                              (nodes == 1 ? 0 : sizeof(uint32_t));  // by_cell
    EnsureNodesHeadroom(rt.options(),
                        "node " + std::to_string(me) + ": the plan of AsyncFor at " + file_ + ":" +
                            std::to_string(line_),
                        share_count, "bodies", body_bytes);
  }
  // This node's bodies by cell (unordered: a group's bodies are its cell's, in index order).
  // 32 bits, as the offsets in by_cell: a share has at most kMaxBodies bodies. Every node holds
  // one per cell of the loop (--nodes 64, 128 blocks: 16 384 on each) beside its messages.
  std::vector<uint32_t> cell_begin;
  std::vector<uint32_t> by_cell;
  // One node, unordered: the node runs and lists every group, whose bodies are its cell's in
  // index order, offsets from share_begin 0. Each list is filled straight from the cells,
  // without the share sorted by cell beside them (4 bytes a body at planning's peak).
  const bool direct = !ordered_ && nodes == 1;
  if (direct) {
    // On the node's threads, chunk by chunk (on one, a pass over every body while the others
    // waited): each chunk's bodies of a cell go to their place in the cell's group's list,
    // after the earlier chunks' bodies of that cell.
    std::vector<Group*> group_of_cell(cells_, nullptr);
    for (auto& round : schedule_->rounds)
      for (Group& g : round) group_of_cell.at(static_cast<size_t>(g.cell)) = &g;
    ChunkCellCounts at =
        chunk_counts.empty() ? CountByChunk(rt, my_cells, cells_) : std::move(chunk_counts);
    if (at.size() != static_cast<size_t>(my_cells.chunks().parts()))
      throw std::logic_error("AsyncFor planning: cell counts for another number of chunks");
    for (auto& chunk_at : at) chunk_at.resize(cells_, 0);  // a node may lack the last cells
    for (size_t c = 0; c < cells_; ++c) {
      int64_t listed = 0;
      for (auto& chunk_at : at) listed += std::exchange(chunk_at[c], listed);
      if (listed != (group_of_cell[c] == nullptr ? 0 : group_of_cell[c]->size))
        throw std::logic_error("AsyncFor planning: a body in no group or a group overfull");
    }
    const int64_t chunks = my_cells.chunks().parts();
    // The lists are sized by the threads the chunks are filled on: with one chunk (AsyncForEach's
    // plans, every Lasso round) both on the driver, where the worker was woken twice for nothing.
    const int64_t sizers = chunks == 1 ? 1 : threads;
    internal::RunParallelFor(rt, sizers, [&](int64_t t) {
      for (auto c = static_cast<size_t>(t); c < cells_; c += static_cast<size_t>(sizers))
        if (group_of_cell[c] != nullptr)
          group_of_cell[c]->bodies.resize(static_cast<size_t>(group_of_cell[c]->size));
    });
    internal::RunParallelFor(rt, chunks, [&](int64_t c) {
      const int64_t begin = my_cells.chunks().begin(c);
      std::vector<int64_t>& next = at[static_cast<size_t>(c)];
      my_cells.ForEachInChunk(c, [&](int64_t j, int32_t cell) {
        group_of_cell[static_cast<size_t>(cell)]
            ->bodies[static_cast<size_t>(next[static_cast<size_t>(cell)]++)] =
            static_cast<uint32_t>(begin + j);
      });
    });
    my_cells.Release();
  } else if (!ordered_) {
    cell_begin.assign(cells_ + 1, 0);
    my_cells.ForEach([&](int64_t, int32_t c) { ++cell_begin[static_cast<size_t>(c) + 1]; });
    std::partial_sum(cell_begin.begin(), cell_begin.end(), cell_begin.begin());
    by_cell.resize(static_cast<size_t>(share_count));
    // Each cell's start counts up to its end, the next cell's start, and is put back after:
    // a copy of the starts to count in was 4 bytes a cell of the loop on every node.
    my_cells.ForEach([&](int64_t k, int32_t c) {
      by_cell[cell_begin[static_cast<size_t>(c)]++] = static_cast<uint32_t>(k);
    });
    for (size_t c = cells_; c > 0; --c) cell_begin[c] = cell_begin[c - 1];
    cell_begin[0] = 0;
    my_cells.Release();  // by_cell says it all now
  }
  // Unordered: the bodies of this node's share in cell c (as share offsets), in index order.
  const auto of_cell = [&](int32_t c) {
    return std::span<const uint32_t>(by_cell).subspan(
        static_cast<size_t>(cell_begin[c]), static_cast<size_t>(cell_begin[c + 1] - cell_begin[c]));
  };
  // The bodies of this node's share in group g (as share offsets), in the group's order.
  std::vector<uint32_t> scratch;
  const auto own = [&](const Group& g) -> std::span<const uint32_t> {
    if (direct) return g.bodies;
    if (!ordered_) return of_cell(g.cell);
    scratch.clear();
    for (uint32_t b : g.bodies)
      if (b >= share_begin && b < share_begin + share_count)
        scratch.push_back(static_cast<uint32_t>(b - share_begin));
    return scratch;
  };
  const auto runs = [&](const Group& g) { return g.worker / threads; };
  // Unordered, the leader keeps every group's body list (the serial order: --order-out, dual
  // files, last_serial_order); the other nodes keep only their groups'.
  const auto listed = [&](const Group& g, int node) {
    return runs(g) == node || (!ordered_ && node == 0);
  };
  // The sends go by `layout` (this node may hold only its own groups): the bodies of this
  // node's share in round r's group i, whose cell and worker `slot` says.
  const auto own_at = [&](size_t r, size_t i, GroupSlot slot) -> std::span<const uint32_t> {
    if (ordered_) return own(schedule_->rounds[r][i]);  // kept whole until WriteOrder
    return of_cell(slot.cell);
  };
  const auto slot_listed = [&](GroupSlot slot, int node) {
    return slot.worker / threads == node || (!ordered_ && node == 0);
  };

  // To each node, for each group it lists, in schedule order: the count of this node's bodies
  // in it, then per body its offset and, if that node runs the group, its first read-only
  // element and digest.
  // The messages' sizes first, so that each is made at its size: grown by doubling, every
  // node's messages held up to twice their bytes at planning's peak (--nodes 64: 53 MB).
  // A count is 32 bits: a group has at most kMaxBodies bodies.
  // The rounds go in batches (kBodyListBatchGroups), one exchange each: `exchange` sends this
  // node's lists of rounds [begin, end) and leaves the others' in `from`.
  const size_t run_extra = (reads ? sizeof(PackedTouch) : 0) + (checked ? sizeof(uint32_t) : 0);
  std::vector<std::vector<std::byte>> in;
  std::vector<ByteReader> from;
  const auto exchange = [&](size_t begin, size_t end) {
    from.clear();
    in = {};
    std::vector<size_t> sizes(nodes, 0);
    for (size_t r = begin; r < end; ++r)
      for (size_t i = 0; i < layout[r].size(); ++i)
        for (int p = 0; p < nodes; ++p) {
          const GroupSlot slot = layout[r][i];
          if (p == me || !slot_listed(slot, p)) continue;
          const bool run = slot.worker / threads == p;
          sizes[p] += sizeof(uint32_t) +
                      own_at(r, i, slot).size() * (sizeof(uint32_t) + (run ? run_extra : 0));
        }
    std::vector<ByteWriter> out(nodes);
    for (int p = 0; p < nodes; ++p) out[p].Reserve(sizes[p]);
    for (size_t r = begin; r < end; ++r)
      for (size_t i = 0; i < layout[r].size(); ++i)
        for (int p = 0; p < nodes; ++p) {
          const GroupSlot slot = layout[r][i];
          if (p == me || !slot_listed(slot, p)) continue;
          const auto bodies = own_at(r, i, slot);
          ByteWriter& w = out[p];
          w.Put<uint32_t>(static_cast<uint32_t>(bodies.size()));
          for (uint32_t k : bodies) {
            w.Put<uint32_t>(static_cast<uint32_t>(share_begin + k));
            if (slot.worker / threads != p) continue;
            if (reads) w.Put(first_read[k]);
            if (checked) w.Put(digests[k]);
          }
        }
    std::vector<std::vector<std::byte>> bytes(nodes);
    for (int p = 0; p < nodes; ++p) bytes[p] = out[p].Take();
    Release(out);
    in = rt.context().collectives().AllToAll(std::move(bytes));
    for (int p = 0; p < nodes; ++p) from.emplace_back(in[p]);
  };
  // The end of the batch of rounds that starts at round `begin`: every node computes the same
  // one from `layout`, every group of the schedule (on one node its rounds are empty: one batch).
  const auto batch_end = [&](size_t begin) {
    size_t end = begin, groups = 0;
    while (end < layout.size() &&
           (end == begin || groups + layout[end].size() <= kBodyListBatchGroups))
      groups += layout[end++].size();
    return end;
  };

  struct Entry {
    uint32_t body;
    PackedTouch read;
    uint32_t digest;
  };
  // Node q's bodies of group g, read from its message or, for this node, from its share.
  std::vector<std::vector<Entry>> parts(nodes);
  const auto take = [&](const Group& g, bool with_reads) {
    for (int q = 0; q < nodes; ++q) {
      parts[q].clear();
      if (q == me) {
        for (uint32_t k : own(g))
          parts[q].push_back({static_cast<uint32_t>(share_begin + k),
                              reads ? first_read[k] : PackedTouch::None(),
                              checked ? digests[k] : 0});
        continue;
      }
      const uint32_t count = from[q].Get<uint32_t>();
      if (count > static_cast<uint64_t>(g.size))
        throw std::runtime_error("AsyncFor planning: bad body count in a message");
      for (uint64_t c = 0; c < count; ++c) {
        Entry e{from[q].Get<uint32_t>(), PackedTouch::None(), 0};
        if (e.body >= n) throw std::runtime_error("AsyncFor planning: bad body in a message");
        if (with_reads) {
          if (reads) e.read = from[q].Get<PackedTouch>();
          if (checked) e.digest = from[q].Get<uint32_t>();
        }
        parts[q].push_back(e);
      }
    }
  };
  // A body's prefetch address from its first read-only element.
  const auto add_ahead = [&](MyGroup& mine, PackedTouch read) {
    if (read.none()) {
      mine.ahead.push_back(kDummyElement);
      return;
    }
    if (read.dds() >= rt.context().dds_count() ||
        read.index() >= rt.context().dds(read.dds()).size())
      throw std::runtime_error("AsyncFor planning: bad element reference in a message");
    mine.ahead.push_back(rt.context().dds(read.dds()).raw_element(read.index()));
  };
  const EvenSplit share(n, nodes);
  size_t batch_ends = 0;
  for (size_t r = 0; r < schedule_->rounds.size(); ++r) {
    if (r == batch_ends) exchange(r, batch_ends = batch_end(r));
    std::vector<size_t> next(threads, 0);  // each thread's groups come in schedule order
    for (Group& g : schedule_->rounds[r]) {
      if (!listed(g, me)) continue;
      const bool run = runs(g) == me;
      if (nodes == 1) {
        // Every body is this node's and runs here, and offsets count from share_begin 0: the
        // group's list is its own bodies, made without per-group copies, which left freed holes
        // in the heap between the lists (76 MB at planning's peak at 19 M bodies).
        const auto bodies = own(g);
        if (static_cast<int64_t>(bodies.size()) != g.size)
          throw std::runtime_error("AsyncFor planning: a group's bodies are missing");
        MyGroup& mine = mine_[r][g.worker % threads].at(next[g.worker % threads]++);
        if (group_digests_) mine.digest_sum = cell_sums.at(static_cast<size_t>(g.cell));
        if (!reads) continue;
        if (read_only_dds_.empty()) {  // nothing to read ahead (Plan, step 6): the dummy for all
          mine.ahead.assign(bodies.size() + kPrefetchDistance, kDummyElement);
          continue;
        }
        mine.ahead.reserve(bodies.size() + kPrefetchDistance);
        for (uint32_t k : bodies) add_ahead(mine, first_read[k]);
        mine.ahead.insert(mine.ahead.end(), kPrefetchDistance, kDummyElement);
        continue;
      }
      take(g, run);
      std::vector<Entry> entries;  // the group's bodies in its order
      entries.reserve(static_cast<size_t>(g.size));
      if (ordered_) {
        std::vector<size_t> at(nodes, 0);
        for (uint32_t b : g.bodies) {
          const auto q = static_cast<size_t>(share.part_of(b));
          if (at[q] >= parts[q].size() || parts[q][at[q]].body != b)
            throw std::runtime_error("AsyncFor planning: bodies out of order in a message");
          entries.push_back(parts[q][at[q]++]);
        }
      } else {
        for (const auto& part : parts) entries.insert(entries.end(), part.begin(), part.end());
        g.bodies.reserve(entries.size());
        for (const Entry& e : entries) g.bodies.push_back(e.body);
      }
      if (static_cast<int64_t>(g.bodies.size()) != g.size)
        throw std::runtime_error("AsyncFor planning: a group's bodies are missing");
      if (!run) continue;
      MyGroup& mine = mine_[r][g.worker % threads].at(next[g.worker % threads]++);
      if (checked) mine.digests.reserve(entries.size());
      if (!reads) {
        for (const Entry& e : entries)
          if (checked) mine.digests.push_back(e.digest);
        continue;
      }
      mine.ahead.reserve(entries.size() + kPrefetchDistance);
      for (const Entry& e : entries) {
        add_ahead(mine, e.read);
        if (checked) mine.digests.push_back(e.digest);
      }
      mine.ahead.insert(mine.ahead.end(), kPrefetchDistance, kDummyElement);
    }
  }
  // On one node the digests stay in body order: permuting them into group order would hold
  // them twice at planning's peak.
  if (checked && nodes == 1) share_digests_ = std::move(digests);
}

void AsyncLoop::RunBodies(Runtime& rt, const MyGroup& g, size_t begin, size_t end,
                          GroupRunner run_group) const {
  const std::span<const uint32_t> bodies(g.group->bodies);
  if (ahead_dds_ < 0) {
    run_group(first_, bodies.subspan(begin, end - begin), g.ahead.data() + begin);
    return;
  }
  // Pieces small enough for the addresses to stay in cache while they are used.
  constexpr size_t kPiece = 2048;
  thread_local std::vector<const std::byte*> ahead;
  for (size_t at = begin; at < end; at += kPiece) {
    const size_t stop = std::min(end, at + kPiece);
    FillAhead(rt, g, at, stop, ahead);
    run_group(first_, bodies.subspan(at, stop - at), ahead.data());
  }
}

void AsyncLoop::FillAhead(Runtime& rt, const MyGroup& g, size_t begin, size_t end,
                          std::vector<const std::byte*>& ahead) const {
  const std::vector<uint32_t>& bodies = g.group->bodies;
  DdsBase& dds = rt.context().dds(static_cast<uint32_t>(ahead_dds_));
  const std::byte* const base = dds.raw() + static_cast<size_t>(first_) * dds.element_bytes();
  const size_t element_bytes = dds.element_bytes();
  ahead.resize(end - begin + kPrefetchDistance);
  const size_t listed = std::min(end + kPrefetchDistance, bodies.size());
  for (size_t k = begin; k < listed; ++k) ahead[k - begin] = base + bodies[k] * element_bytes;
  for (size_t k = std::max(listed, begin); k < end + kPrefetchDistance; ++k)
    ahead[k - begin] = kDummyElement;
}

template <typename F>
void AsyncLoop::RunRoundGroups(Runtime& rt, size_t r, F&& run) {
  const auto& mine = mine_[r];
  if (one_worker_) {  // no barrier: the other threads have nothing to run
    for (const MyGroup& g : mine[0]) run(g);
    return;
  }
  // Each thread runs its own groups and then helps with the others' (a round's groups never
  // conflict, so any thread may run any of them and the results stay the same): a thread that
  // the host preempts, or that got the slower groups, no longer holds up the round's barrier
  // while the other waits. A group is taken by one fetch_add on its list's counter.
  const int threads = rt.threads();
  if (taken_.size() != static_cast<size_t>(threads))
    taken_ = std::vector<GroupsTaken>(static_cast<size_t>(threads));
  for (auto& n : taken_) n.value.store(0, std::memory_order_relaxed);
  rt.context().pool().RunOnAll([&](int t) {
    for (int o = 0; o < threads; ++o) {
      const int owner = (t + o) % threads;
      const std::vector<MyGroup>& list = mine[owner];
      for (size_t k;
           (k = taken_[owner].value.fetch_add(1, std::memory_order_relaxed)) < list.size();)
        run(list[k]);
    }
  });
}

template <typename F>
void AsyncLoop::WithAccessCheck(Runtime& rt, F&& run) {
  AccessCheckHook check(rt, file_ + ":" + std::to_string(line_), site_->invocations);
  SetLoopHooks(rt, &check);
  run(check);
  // On a throw, Execute's HookGuard clears the hooks before any other access.
  SetLoopHooks(rt, nullptr);
}

void AsyncLoop::RunRoundChecked(Runtime& rt, size_t r, GroupRunner run_group) {
  // As Execute's rounds, with the threads' help: a checked round costs about twice an
  // unchecked one, so a thread the host preempts would hold up the other for longer.
  WithAccessCheck(rt, [&](AccessCheckHook& check) {
    RunRoundGroups(rt, r, [&](const MyGroup& g) {
      RunGroupChecked(rt, check, g, 0, g.group->bodies.size(), run_group);
    });
  });
}

void AsyncLoop::SetLoopHooks(Runtime& rt, AccessHook* hook) const {
  for (uint32_t d : written_dds_) rt.context().dds(d).set_hook(hook);
  for (uint32_t d : read_only_dds_) rt.context().dds(d).set_hook(hook);
}

void AsyncLoop::RunGroupChecked(Runtime& rt, AccessCheckHook& check, const MyGroup& g, size_t begin,
                                size_t end, GroupRunner run_group) const {
  thread_local std::vector<const std::byte*> computed;
  const std::byte* const* ahead = g.ahead.data() + begin;
  if (ahead_dds_ >= 0) {  // the bodies' addresses at once: bodies run one by one
    FillAhead(rt, g, begin, end, computed);
    ahead = computed.data();
  }
  const std::span<const uint32_t> bodies(g.group->bodies);
  if (group_digests_) {  // one digest sum per group (pair sums), checked at its end
    uint32_t sum = 0;
    for (size_t k = begin; k < end; ++k) {
      check.Begin();
      run_group(first_, bodies.subspan(k, 1), ahead + (k - begin));
      sum += BodyDigestPart(first_ + bodies[k], check.Digest());
    }
    if (sum != g.digest_sum) check.FailGroup(first_, bodies);
    return;
  }
  for (size_t k = begin; k < end; ++k) {
    // One node's digests stay in body order (PlanGroupBodies): a group reads them scattered, a
    // cache miss a body unless fetched ahead.
    if (g.digests.empty() && k + kPrefetchDistance < end)
      __builtin_prefetch(&share_digests_[bodies[k + kPrefetchDistance]]);
    check.Begin();
    run_group(first_, bodies.subspan(k, 1), ahead + (k - begin));
    check.Verify(first_ + bodies[k],
                 g.digests.empty() ? share_digests_.at(bodies[k]) : g.digests.at(k));
  }
}

AsyncLoop::SpotCheck AsyncLoop::ChooseSpotCheck(const Runtime& rt) const {
  SpotCheck spot;
  if (rt.options().access_check != AccessCheck::kSample || executions_ <= 1) return spot;
  for (size_t r = 0; r < mine_.size(); ++r)
    if (ChecksRound(AccessCheck::kSample, executions_, r)) return spot;  // a round whole
  size_t groups = 0;
  for (const auto& round : mine_)
    for (const auto& list : round) groups += list.size();
  if (groups == 0) return spot;
  // The call's group, counted over rounds and threads; each call the next.
  size_t k = static_cast<size_t>(executions_ % groups);
  for (size_t r = 0; r < mine_.size(); ++r)
    for (const auto& list : mine_[r]) {
      if (k >= list.size()) {
        k -= list.size();
        continue;
      }
      spot.round = r;
      spot.group = &list[k];
      const size_t n = list[k].group->bodies.size();
      // A group kept one digest sum is checked whole; else its last kSpotCheckBodies bodies.
      spot.from = group_digests_ ? 0 : n - std::min(n, kSpotCheckBodies);
      return spot;
    }
  return spot;
}

void AsyncLoop::PlanBlocks(Runtime& rt, const std::vector<std::vector<int64_t>>& local_counts,
                           int most_blocks) {
  const size_t dds_count = rt.context().dds_count();
  bounds_.assign(dds_count, {});
  for (uint32_t d : written_dds_) {
    const std::vector<int64_t> counts = rt.context().collectives().SumEach(local_counts[d]);
    if (counts.size() != local_counts[d].size())
      throw std::runtime_error("AsyncFor planning: bad block counts in a message");
    const int64_t size = rt.context().dds(d).size();
    const int64_t bins = static_cast<int64_t>(counts.size());
    const int64_t blocks = std::min<int64_t>(most_blocks, bins);
    const EvenSplit bin_split(size, std::max<int64_t>(bins, 1));
    const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
    std::vector<int64_t>& b = bounds_[d];
    b.push_back(0);
    // Cut k goes after the first bin where the running count reaches k/blocks of the total,
    // keeping at least one bin per block.
    int64_t running = 0, bin = 0;
    for (int64_t k = 1; k < blocks; ++k) {
      const int64_t min_bin = k - 1, max_bin = bins - (blocks - k) - 1;
      int64_t cut_bin = std::max(bin, min_bin);
      if (total > 0) {
        while (cut_bin < max_bin && (running + counts[cut_bin]) * blocks < k * total)
          running += counts[cut_bin++];
        running += counts[cut_bin];
      } else {
        cut_bin = std::clamp(k * bins / blocks - 1, min_bin, max_bin);
      }
      b.push_back(bin_split.end(cut_bin));
      bin = cut_bin + 1;
    }
    b.push_back(size);
  }
}

void AsyncLoop::PlanExchanges(Runtime& rt, const CellSignatures& signatures,
                              const Schedule& whole) {
  const size_t rounds = whole.rounds.size();
  phases_.assign(rounds + 1, {});
  // Moves the parts of a block between `node` and the parts' owners, in either direction.
  auto with_owners = [&](std::vector<Transfer>& phase, BlockKey key, int node, bool to_owners) {
    const uint32_t d = BlockKeyDds(key);
    const int64_t block = BlockKeyBlock(key);
    DdsBase& dds = rt.context().dds(d);
    const int64_t end = bounds_[d][block + 1];
    for (int64_t begin = bounds_[d][block]; begin < end;) {
      const int owner = dds.owner(begin);
      const int64_t stop = std::min(end, dds.owners().end(owner));
      if (owner != node)
        phase.push_back(to_owners ? Transfer{node, owner, {d, begin, stop}}
                                  : Transfer{owner, node, {d, begin, stop}});
      begin = stop;
    }
  };
  std::map<BlockKey, int> holder;  // absent: every part of the block is at its owner
  for (size_t r = 0; r < rounds; ++r)
    for (const Group& g : whole.rounds[r]) {
      const int node = g.worker / rt.threads();
      for (BlockKey key : signatures.at(g.cell)) {
        auto it = holder.find(key);
        if (it == holder.end()) {
          with_owners(phases_[r], key, node, /*to_owners=*/false);
          holder[key] = node;
        } else if (it->second != node) {
          const uint32_t d = BlockKeyDds(key);
          const int64_t block = BlockKeyBlock(key);
          phases_[r].push_back({it->second, node, {d, bounds_[d][block], bounds_[d][block + 1]}});
          it->second = node;
        }
      }
    }
  for (const auto& [key, node] : holder)
    with_owners(phases_[rounds], key, node, /*to_owners=*/true);
  // The parts of written blocks this node does not own that it sends on in some phase, merged
  // per DDS: after the last phase every one of them is back with its owner.
  std::vector<Range> parts;
  for (const auto& phase : phases_)
    for (const Transfer& t : phase) {
      if (t.from != rt.node()) continue;
      ForNotOwned(rt.context().dds(t.range.dds), t.range, [&](int64_t begin, int64_t end) {
        parts.push_back({t.range.dds, begin, end});
      });
    }
  visiting_ = MergeRanges(std::move(parts));
  // A node runs only the transfers it sends or receives: every node kept all of them, which
  // with many in-process nodes (--nodes 64, 128 blocks: 16 384 cells) cost more than their own
  // bodies' plans.
  for (auto& phase : phases_) {
    std::erase_if(phase,
                  [me = rt.node()](const Transfer& t) { return t.from != me && t.to != me; });
    phase.shrink_to_fit();
  }
}

void AsyncLoop::RunPhase(Runtime& rt, size_t phase) {
  const int me = rt.node();
  const auto& transfers = phases_[phase];
  std::map<int, ByteWriter> out;
  std::map<int, size_t> expect;
  for (const Transfer& t : transfers) {
    DdsBase& dds = rt.context().dds(t.range.dds);
    const size_t bytes = static_cast<size_t>(t.range.end - t.range.begin) * dds.element_bytes();
    if (t.from == me) out[t.to].PutRaw(dds.raw_element(t.range.begin), bytes);
    if (t.to == me) expect[t.from] += bytes;
  }
  for (auto& [to, w] : out) rt.context().transport().Send(to, Tag::kExchange, w.Take());
  // In the one-process cluster the blocks this node does not own give their pages back soon
  // after they leave (their bytes are in the messages): a node then holds its owned ranges, the
  // blocks visiting it now and at most kDepartedBatchBytes of departed ones, where giving them
  // back only after the call (ReleaseVisitingBlocks) let every node fill in the whole of a
  // rotated DDS by the call's end (sgdmf's H, --nodes 64: 64 full copies). In batches, merged:
  // a system call a phase slowed --nodes 64's epochs, and a small block alone (sgdmf's H: 5 KB)
  // holds few whole pages. Under mpiexec the pages go back once a call (per phase cost lda 30 %).
  if (rt.context().shared_files() != nullptr) {
    for (const Transfer& t : transfers)
      if (t.from == me) {
        const DdsBase& dds = rt.context().dds(t.range.dds);
        ForNotOwned(dds, t.range, [&](int64_t begin, int64_t end) {
          departed_.push_back({t.range.dds, begin, end});
          departed_bytes_ += static_cast<size_t>(end - begin) * dds.element_bytes();
        });
      }
    // A departed block that comes back must get its pages back first: given back after it
    // arrived, they would lose its values (the ordered and first-fit schedules move a block back).
    const auto returning = [&] {
      for (const Transfer& t : transfers)
        if (t.to == me)
          for (const Range& d : departed_)
            if (d.dds == t.range.dds && d.begin < t.range.end && t.range.begin < d.end) return true;
      return false;
    };
    if (departed_bytes_ >= kDepartedBatchBytes || (!departed_.empty() && returning())) {
      for (const Range& r : MergeRanges(std::move(departed_)))
        rt.context().dds(r.dds).DiscardElements(r.begin, r.end);
      departed_ = {};
      departed_bytes_ = 0;
    }
  }
  for (const auto& [from, bytes] : expect) {
    // Watching the flow: a node that has left this loop (other --epochs on its rank) sends
    // collective messages instead, and the error names where both nodes are.
    Message m = rt.context().collectives().ReceiveWatchingFlow(from, Tag::kExchange, [&] {
      return "blocks for phase " + std::to_string(phase + 1) + " of " +
             std::to_string(phases_.size());
    });
    if (m.payload.size() != bytes)
      throw std::runtime_error("AsyncFor exchange: node " + std::to_string(from) + " sent " +
                               std::to_string(m.payload.size()) + " bytes, expected " +
                               std::to_string(bytes));
    ByteReader r(m.payload);
    for (const Transfer& t : transfers)
      if (t.from == from && t.to == me) {
        DdsBase& dds = rt.context().dds(t.range.dds);
        r.GetRaw(dds.raw_element(t.range.begin),
                 static_cast<size_t>(t.range.end - t.range.begin) * dds.element_bytes());
      }
  }
}

void AsyncLoop::ReleaseVisitingBlocks(Runtime& rt) {
  // Once per call, not per round: giving pages back costs a system call per block and a page
  // fault per page when a block comes back, which per round made lda under mpiexec 30 % slower.
  for (const Range& r : visiting_) rt.context().dds(r.dds).DiscardElements(r.begin, r.end);
  departed_ = {};  // all of them among visiting_
  departed_bytes_ = 0;
}

void AsyncLoop::Prefetch(Runtime& rt) {
  std::vector<uint64_t> versions;
  for (uint32_t d : read_only_dds_) versions.push_back(rt.context().dds(d).version());
  if (prefetched_ && versions == prefetched_versions_) return;
  ShareOwnersPages(rt, read_only_dds_);
  ServeElements(rt, serve_);
  prefetched_versions_ = std::move(versions);
  prefetched_ = true;
}

void AsyncLoop::SetHooks(Runtime& rt) {
  for (uint32_t d = 0; d < rt.context().dds_count(); ++d)
    rt.context().dds(d).set_hook(&unplanned_hook);
  for (uint32_t d : written_dds_) rt.context().dds(d).set_hook(nullptr);
  for (uint32_t d : read_only_dds_) rt.context().dds(d).set_hook(nullptr);
}

void AsyncLoop::Execute(Runtime& rt, GroupRunner run_group) {
  if (last_ < first_) return;
  const uint64_t invocation = site_->invocations;
  OperatorSite site{"AsyncFor", file_.c_str(), line_, invocation};
  rt.context().BeginOperator(site);
  AccumulatorCall accumulators(rt);
  {
    HookGuard guard(rt);
    Prefetch(rt);
    SetHooks(rt);
    const SpotCheck spot = ChooseSpotCheck(rt);
    for (size_t r = 0; r < schedule_->rounds.size(); ++r) {
      RunPhase(rt, r);
      if (ChecksRound(rt.options().access_check, executions_, r)) {
        RunRoundChecked(rt, r, run_group);
        continue;
      }
      // The spot-checked group's tail runs after the round, on the driver thread.
      RunRoundGroups(rt, r, [&](const MyGroup& g) {
        RunBodies(rt, g, 0, &g == spot.group ? spot.from : g.group->bodies.size(), run_group);
      });
      if (r == spot.round)
        WithAccessCheck(rt, [&](AccessCheckHook& check) {
          RunGroupChecked(rt, check, *spot.group, spot.from, spot.group->group->bodies.size(),
                          run_group);
        });
    }
    RunPhase(rt, schedule_->rounds.size());
    ReleaseVisitingBlocks(rt);
  }
  accumulators.Flush();
  for (uint32_t d : written_dds_) rt.context().dds(d).bump_version();
  // Only the leader keeps every group's body list (PlanGroupBodies).
  if (rt.leader())
    rt.context().set_last_serial_order([schedule = std::shared_ptr<const Schedule>(schedule_)] {
      return schedule->SerialOrder();
    });
  else
    rt.context().set_last_serial_order(nullptr);
  ++site_->invocations;
  ++executions_;
  rt.context().EndOperator(site, written_dds_);
  if (DualTrace* dual = rt.context().dual()) {
    std::vector<DdsBase*> written;
    for (uint32_t d : written_dds_) written.push_back(&rt.context().dds(d));
    written.insert(written.end(), Accumulators(rt).begin(), Accumulators(rt).end());
    const uint64_t state = Checksum(rt, written);  // collective
    if (!dual_order_ && rt.leader())               // only the leader writes (and lists every body)
      dual_order_ = std::make_shared<const std::vector<int64_t>>(schedule_->SerialOrder());
    dual->RecordAsyncFor(file_ + ":" + std::to_string(line_), first_, last_, dual_order_, state);
  }
}

void AsyncLoop::WriteOrder(Runtime& rt) const {
  const std::string& base = rt.options().order_out;
  if (base.empty() || !rt.leader()) return;
  const std::string path = site_->index == 0 ? base : base + "." + std::to_string(site_->index);
  std::ofstream out(path);
  for (int64_t i : schedule_->SerialOrder()) out << i << '\n';
  if (!out.flush()) throw UsageError("--order-out: cannot write '" + path + "'");
}

}  // namespace strads
