// AsyncLoop: the serializable engine behind AsyncFor (async_for.h), one per loop call site.
//
// First call: reconnaissance execution (RE) of every body, each node a contiguous share of
// the indices, with DDS accesses recorded and writes sent to scratch copies (never committed).
// A non-const access counts as a write, a const access as a read; a DDS written by any body is
// "written" for the whole loop, and its accesses are tracked by block; the others are
// "read-only" and their elements are prefetched once (again only if they change). From the
// signatures: the schedule (schedule.h) and the exchange plan, i.e. which block moves from which
// node to which between rounds, so that every group finds its blocks local. Later calls reuse
// all of it (iterativeness and static control flow, paper section 4.2), and verify that the
// bodies still access what reconnaissance recorded (access_check.h, --access-check).
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache_line.h"
#include "cell_numbers.h"
#include "cell_signatures.h"
#include "element_ref.h"
#include "node_context.h"
#include "owned_element_list.h"
#include "reconnaissance.h"
#include "schedule.h"
#include "shared_plans.h"
#include "strads/internal/async_engine.h"
#include "strads/internal/function_ref.h"
#include "strads/runtime.h"

namespace strads {

class AccessCheckHook;
class AsyncLoop;
struct ReconResult;

// The plans of one AsyncFor call site: the kPlansPerSite most recently used, keyed by bounds
// (and the order, for the ordered variant), so that a loop over rotating mini-batches plans
// each batch once; and the site's invocation count, which every plan's calls share (traces and
// dual files number a site's calls 0, 1, 2, ...).
class AsyncSite : public internal::LoopState {
 public:
  static constexpr size_t kPlansPerSite = 8;

  std::list<std::unique_ptr<AsyncLoop>> plans;  // most recently used first
  uint64_t invocations = 0;
  uint64_t plans_made = 0;
  size_t index = 0;  // creation order among this runtime's AsyncFor sites

  size_t HeldBytes() const override;
};

class AsyncLoop : public internal::LoopState {
 public:
  using Body = internal::LoopBody;
  using GroupRunner = internal::GroupRunner;
  static constexpr size_t kPrefetchDistance = internal::kPrefetchDistance;

  // The plan of this call for its bounds (and order) from the site's plans, made on first use
  // and on every call of a dynamic site; the least recently used beyond kPlansPerSite goes.
  static AsyncLoop& At(Runtime& rt, internal::LoopSite site, int64_t first, int64_t last,
                       const std::vector<int64_t>* order);
  // Under --dual-in: the order the followed file lists for this invocation of the site (the
  // caller runs the ordered variant with it); otherwise, or for an empty range, null.
  static std::shared_ptr<const std::vector<int64_t>> FollowedOrder(Runtime& rt, const char* file,
                                                                   uint32_t line, int64_t first,
                                                                   int64_t last);
  // Throws a UsageError naming the call site `where` (file:line) and the index at fault if
  // OrderedAsyncFor's `order` is not a permutation of first..last.
  static void CheckOrder(const std::string& where, int64_t first, int64_t last,
                         const std::vector<int64_t>& order);

  // A plan of `site` not kept in its list: AsyncForEach (index_set_loop.h) makes one per index
  // set and keeps it itself.
  static std::unique_ptr<AsyncLoop> Make(internal::LoopSite where, AsyncSite* site, int64_t first,
                                         int64_t last, const std::vector<int64_t>* order);

  // Reconnaissance and planning, on the first call only. `body` runs one index.
  void Prepare(Runtime& rt, Body body);
  // Collective. Planning from a reconnaissance `recon` of first..last made elsewhere (each node
  // its Reconnoitre share): Prepare without running the bodies.
  void Plan(Runtime& rt, ReconResult recon);
  // One invocation: exchange, rounds, exchange back. `run_group` runs a group's bodies.
  void Execute(Runtime& rt, GroupRunner run_group);

  // The execution number access checking samples by (ChecksRound): AsyncForEach makes a plan
  // per set, so it counts its site's calls instead, or every call would be checked whole.
  void set_executions(uint64_t executions) { executions_ = executions; }
  // Before Plan: plan with `blocks` blocks per written DDS instead of --blocks or the choice
  // (0: those). After Plan: the block count it planned with. AsyncForEach keeps its first
  // call's choice for the site's later sets, which then plan once instead of once per count.
  void set_blocks(int blocks) { blocks_ = blocks; }
  int blocks() const { return blocks_; }
  // Before Plan: the bounds of the written DDSs' blocks (by DDS id, as bounds()) to plan with,
  // used if they cover every DDS the loop writes (else chosen from the touch counts). After
  // Plan: the bounds it planned with. AsyncForEach keeps its first call's for the site's later
  // sets, which then neither count their touches per bin nor sum the counts over the nodes.
  void set_bounds(std::vector<std::vector<int64_t>> bounds) { given_bounds_ = std::move(bounds); }
  const std::vector<std::vector<int64_t>>& bounds() const { return bounds_; }

  const Schedule& schedule() const { return *schedule_; }
  std::shared_ptr<const Schedule> schedule_ptr() const { return schedule_; }
  size_t HeldBytes() const override;

  struct Range {
    uint32_t dds;
    int64_t begin, end;
  };

 private:
  struct Transfer {
    int from, to;
    Range range;
  };

  // PlanCells' result: every cell's signature and the schedule, the node's own or, when the
  // process's nodes share plans (SharesPlans), the leader's.
  struct CellsPlan {
    PlannedCells own;
    std::shared_ptr<const PlannedCells> shared;
    const PlannedCells& get() const { return shared ? *shared : own; }
  };
  // Steps 3 and 4 of Prepare for `blocks` blocks per written DDS: bounds_, every cell's
  // signature and size and the schedule they give, and (my_cells) the cell of each body of this
  // node's share. With recon.pair_sums, also (cell_sums) each cell's sum of its bodies'
  // BodyDigestParts.
  // Lets recon.fine_counts go once read unless ChoosesBlocks.
  // Per chunk of a CellNumbers, per cell: how many of the chunk's bodies are in the cell.
  using ChunkCellCounts = std::vector<std::vector<int64_t>>;
  // `chunk_counts`: on one node, when LocalCells numbered the cells, each chunk's bodies per
  // cell, as LocalCells counted them (for PlanGroupBodies); else left empty.
  CellsPlan PlanCells(Runtime& rt, ReconResult& recon, int blocks, CellNumbers* my_cells,
                      std::vector<uint32_t>* cell_sums, ChunkCellCounts* chunk_counts);
  // Whether the cells' table and the schedule are the leader's, shared by the process's nodes
  // (NodeContext::shared_plans), rather than made on every node: unordered loops only (the
  // ordered variant's schedule lists every body, which every node sends from), and not under
  // STRADS_INJECT_BUG (which moves groups in a node's schedule).
  bool SharesPlans(Runtime& rt) const;
  void PlanBlocks(Runtime& rt, const std::vector<std::vector<int64_t>>& touch_counts,
                  int most_blocks);
  // The leader, unordered plans: the cells that differ only in blocks of written DDSs each of
  // whose elements one body alone accesses (flags bit 2 clear) merged (MergeCellsApartFrom),
  // where that lowers the schedule's UnboundedCost; `to_global` (each node's cells' numbers)
  // then names the merged cells. Returns the schedule of `input` as it leaves it, where it built
  // one (cells to merge were found), for the leader to keep instead of building it again.
  std::optional<Schedule> MergeAloneCells(const std::vector<uint8_t>& flags, ScheduleInput& input,
                                          std::vector<std::vector<int32_t>>& to_global) const;
  // This node's cells: the signature of each (in order of first appearance among its bodies)
  // and each body's cell, computed by the node's threads.
  // `block_of_fine`: per written DDS, the block of each fine bin (binned reconnaissance).
  // With recon.pair_sums: `cell_sums`, per cell, the sum of its bodies' BodyDigestParts, from
  // the chunks' PairSums (a fine pair's sum once, at its first body) and body_digests.
  // `chunk_counts` (optional): per chunk, its bodies per cell, counted as the cells are given
  // (a pass over the share's cell numbers less, twice; one node only: on many, the counts
  // would be held beside the cells' table at planning's peak).
  void LocalCells(Runtime& rt, const ReconResult& recon,
                  const std::vector<std::vector<int32_t>>& block_of_fine,
                  CellSignatures* signatures, CellNumbers* cell_of_body,
                  std::vector<uint32_t>* cell_sums, ChunkCellCounts* chunk_counts) const;
  // From `whole`, every group of the schedule, and the cells' signatures.
  void PlanExchanges(Runtime& rt, const CellSignatures& signatures, const Schedule& whole);
  // Once the exchanges are planned (unordered; ordered: after planning, since every node sends
  // from every group's body list), on every node but the leader (whose schedule makes the serial
  // order): drops the groups other nodes run, so that a node holds its own share of the schedule
  // rather than all of it (--nodes 64, 128 blocks: 16 384 groups on each of 64 nodes). Rounds stay
  // numbered as before; a round this node runs nothing in is empty.
  void KeepOwnGroups(Runtime& rt);
  // Whether planning chooses the block count (neither set_blocks nor --blocks gives it).
  bool ChoosesBlocks(const Runtime& rt) const { return rt.options().blocks == 0 && blocks_ == 0; }
  // The block count planning starts from: set_blocks, --blocks, or the automatic choice's first.
  int MostBlocks(const Runtime& rt) const;
  // Fills the body lists of the groups this node runs (the leader: of every group, for the
  // serial order), and for those it runs each body's prefetch address and access digest, from
  // the nodes that reconnoitred the bodies. `first_read` and `digests` are per body of this
  // node's share, which starts at offset `share_begin`.
  // Empty `first_read` (ahead_dds_ set): no prefetch addresses are kept; they follow from the
  // body indexes.
  // `cell_sums` (pair sums, one node, unordered): per cell, its bodies' digest sum, which a group
  // of that cell is then checked against (group_digests_) instead of per body.
  // `layout`: every group's worker and cell, by round, in schedule order (on several nodes; the
  // schedule may hold only this node's groups by then, KeepOwnGroups).
  // `chunk_counts`: PlanCells' (empty: counted here).
  void PlanGroupBodies(Runtime& rt, int64_t share_begin, const std::vector<PackedTouch>& first_read,
                       std::vector<uint32_t> digests, CellNumbers my_cells,
                       std::vector<uint32_t> cell_sums, ChunkCellCounts chunk_counts,
                       const std::vector<std::vector<GroupSlot>>& layout);
  // Whether every body i of the loop (on every node) reads element i of one read-only DDS
  // before any other read-only element: then sets ahead_dds_ to it. Collective.
  bool AheadFollowsIndex(Runtime& rt, const ReconResult& recon);
  void SetHooks(Runtime& rt);
  void Prefetch(Runtime& rt);
  void RunPhase(Runtime& rt, size_t phase);
  // After the last phase: gives back the pages of the written blocks that visited this node
  // (the parts it does not own), so that they do not stay resident between calls.
  void ReleaseVisitingBlocks(Runtime& rt);
  // Round r's groups on this node, each body alone and verified against its reconnaissance.
  void RunRoundChecked(Runtime& rt, size_t r, GroupRunner run_group);
  // Runs run(check) with the loop's DDSs pointing at a fresh access check of this call.
  template <typename F>
  void WithAccessCheck(Runtime& rt, F&& run);
  // Points the hooks of the DDSs the loop accesses at `hook` (nullptr: direct access).
  void SetLoopHooks(Runtime& rt, AccessHook* hook) const;
  void WriteOrder(Runtime& rt) const;

  std::string file_;
  uint32_t line_ = 0;
  int64_t first_ = 0, last_ = -1;
  std::vector<int64_t> order_;
  bool ordered_ = false;
  bool prepared_ = false;
  AsyncSite* site_ = nullptr;  // owns this plan
  uint64_t executions_ = 0;    // calls that ran this plan (access checking samples by it)
  bool one_worker_ = false;    // estimated slower than serial: a node's groups on its thread 0
  int blocks_ = 0;             // set_blocks, then the count Plan planned with
  std::vector<uint32_t> written_dds_, read_only_dds_;
  // Per written DDS (by id): block boundaries, bounds[b] .. bounds[b + 1]; empty otherwise.
  std::vector<std::vector<int64_t>> bounds_;
  std::vector<std::vector<int64_t>> given_bounds_;  // set_bounds
  // Shared with the runtime's last serial order, which is made from it only when asked for.
  std::shared_ptr<Schedule> schedule_ = std::make_shared<Schedule>();
  size_t cells_ = 0;                                        // the count of cells
  std::shared_ptr<const std::vector<int64_t>> dual_order_;  // made for dual files only
  struct MyGroup {
    const Group* group;
    // Per body, an address it reads, for software prefetch (plus kPrefetchDistance dummies);
    // empty when ahead_dds_ says where bodies read.
    std::vector<const std::byte*> ahead;
    // Per body, its reconnaissance's AccessDigest (if checked, on several nodes).
    std::vector<uint32_t> digests;
    // group_digests_: the sum of its bodies' BodyDigestParts.
    uint32_t digest_sum = 0;
  };
  // Checked groups are verified by their digest sums (pair sums: no digest kept per body).
  bool group_digests_ = false;
  // On one node, if checked: per body of the loop, in index order, its AccessDigest (the
  // groups' `digests` are then empty).
  std::vector<uint32_t> share_digests_;
  // Runs the bodies [begin, end) of g, with the prefetch addresses its plan keeps or, without
  // them, computed piece by piece from the body indexes.
  void RunBodies(Runtime& rt, const MyGroup& g, size_t begin, size_t end,
                 GroupRunner run_group) const;
  // Calls run(group) for each of round r's groups on this node, on the pool's threads: each
  // thread runs its own list, then helps with the others'. Defined and used in async_loop.cc.
  template <typename F>
  void RunRoundGroups(Runtime& rt, size_t r, F&& run);
  // Runs bodies [begin, end) of g on the calling thread, each verified by `check` (its hooks
  // set): per body, or with group_digests_ as one sum (then [0, size) only).
  void RunGroupChecked(Runtime& rt, AccessCheckHook& check, const MyGroup& g, size_t begin,
                       size_t end, GroupRunner run_group) const;
  // The sampled check's spot check (access_check.h): a call of the plan that checks no round
  // whole checks the last bodies of one of this node's groups, run after the rest of their
  // round (a round's groups never conflict). The group turns over from call to call.
  struct SpotCheck {
    size_t round = SIZE_MAX;  // SIZE_MAX: none this call
    const MyGroup* group = nullptr;
    size_t from = 0;  // its bodies [from, size) are checked
  };
  SpotCheck ChooseSpotCheck(const Runtime& rt) const;
  struct alignas(kCacheLineBytes) GroupsTaken {
    std::atomic<size_t> value{0};
  };
  std::vector<GroupsTaken> taken_;  // per thread's list in a round: its groups taken
  // With ahead_dds_: the prefetch addresses of g's bodies [begin, end), plus kPrefetchDistance
  // more (dummies past the group's end), into `ahead`.
  void FillAhead(Runtime& rt, const MyGroup& g, size_t begin, size_t end,
                 std::vector<const std::byte*>& ahead) const;
  // The read-only DDS whose element i every body i reads first (AheadFollowsIndex), or -1.
  int64_t ahead_dds_ = -1;
  // mine_[r][t]: the groups this node's thread t runs in round r.
  std::vector<std::vector<std::vector<MyGroup>>> mine_;
  std::vector<std::vector<Transfer>> phases_;  // phase r runs before round r; last: return
  std::vector<Range> visiting_;  // ReleaseVisitingBlocks' ranges, made by PlanExchanges
  // In the one-process cluster: parts of blocks that left this node and still hold pages here
  // (RunPhase gives them back once they reach kDepartedBatchBytes).
  static constexpr size_t kDepartedBatchBytes = size_t{64} << 10;
  std::vector<Range> departed_;
  size_t departed_bytes_ = 0;
  // Read-only elements this node owns and must send to executor node p: serve_[p].
  std::vector<OwnedElementList> serve_;
  std::vector<uint64_t> prefetched_versions_;
  bool prefetched_ = false;
};

}  // namespace strads
