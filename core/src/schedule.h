// The AsyncFor scheduler: from the blocks each loop body writes, rounds of conflict-free
// groups (design.md section 3, paper section 4.4.1).
//
// A written DDS of n elements is cut into min(B, n) blocks (EvenSplit). A body's signature is
// the sorted set of (DDS, block) it accesses in written DDSs; bodies with equal signatures form
// a cell. Two groups conflict when their signatures share a block; the groups of one round never
// conflict, so a round's groups can run in any interleaving and the result equals running them
// one after another: the serial order is rounds in order, groups in order, bodies in order.
//
// Unordered loops: when every signature is one block of the same two DDSs with the same block
// count B (SGD-MF's users x items), cell (a, b) goes to round (b - a) mod B: the 2-D block
// rotation of Strata/STRADS, B rounds of B groups. Otherwise cells are coloured first-fit,
// largest first. Ordered loops keep a given serial order for every pair of conflicting bodies.
// Groups are placed on workers (node * threads + thread) largest first to the least loaded; on
// several nodes, to a worker of the node that holds most of the group's blocks when the round's
// balance allows (ScheduleInput::block_home). None of this depends on the number of nodes or
// threads except the placement: the serial order and so the results are the same for any P and T.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cell_signatures.h"
#include "strads/fnv1a.h"

namespace strads {

// (dds << 40) | block.
using BlockKey = uint64_t;
inline BlockKey MakeBlockKey(uint32_t dds, int64_t block) {
  return (static_cast<uint64_t>(dds) << 40) | static_cast<uint64_t>(block);
}
inline uint32_t BlockKeyDds(BlockKey k) { return static_cast<uint32_t>(k >> 40); }
inline int64_t BlockKeyBlock(BlockKey k) { return static_cast<int64_t>(k & ((1ULL << 40) - 1)); }

// Cells are looked up by signature (a few block keys): FNV-1a, a word per key.
struct SignatureHash {
  size_t operator()(std::span<const BlockKey> signature) const {
    Fnv1a h;
    for (BlockKey key : signature) h.UpdateWord(key);
    const uint64_t digest = h.digest();
    return static_cast<size_t>(digest ^ (digest >> 32));
  }
};

struct ScheduleInput {
  int64_t first = 0;                   // body k is loop index first + k
  CellSignatures signatures;           // per cell, sorted, unique
  std::vector<int64_t> blocks_of_dds;  // block count of each written DDS (by id)
  int workers = 1;                     // nodes x threads: worker w runs on node w / threads
  int threads = 1;
  // Where the written blocks start, per DDS (by id) and block: the node owning most of the
  // block, and its bytes. When given and there are several nodes, a group of the unordered
  // first-fit and ordered schedules goes to the node holding most of its blocks' bytes (where
  // they start, or where the last group using them ran) unless a worker there would then carry
  // more than the round's balance bound, so fewer blocks cross nodes between rounds. Placement
  // never changes rounds, groups or the serial order.
  std::vector<std::vector<int32_t>> block_home;
  std::vector<std::vector<int64_t>> block_bytes;
  // Ordered variant: a permutation of the indices (OrderPermutationError; its callers check it
  // first and name the order's source: OrderedAsyncFor's call site, a dual-test file's line).
  const std::vector<int64_t>* order = nullptr;
  // The bodies per cell. Unordered loops need only these: the groups are planned from the
  // cells' sizes, and their body lists are left empty for the caller to fill (a node fills
  // only those it needs). Made from cell_of_body when empty.
  std::vector<int64_t> cell_sizes;
  // Per body, its cell. Required by the ordered variant; when given, every group's body list
  // is filled.
  std::vector<int32_t> cell_of_body;
};

struct Group {
  int32_t worker = 0;
  int32_t cell = 0;
  int64_t size = 0;  // bodies in the group
  // Offsets from the schedule's first index (32 bits: a loop has at most kMaxBodies bodies), in
  // execution order; empty when not filled (ScheduleInput::cell_sizes).
  std::vector<uint32_t> bodies;
};

struct Schedule {
  static constexpr int64_t kMaxBodies = int64_t{UINT32_MAX};

  int64_t first = 0;  // body offsets count from this loop index
  std::vector<std::vector<Group>> rounds;
  bool rotation = false;  // the 2-D block rotation was detected

  // Loop indices in the serial order: every group's body list must be filled.
  std::vector<int64_t> SerialOrder() const;
  int64_t bodies() const;  // the sum of the groups' sizes
};

// Throws std::invalid_argument if input.order is given and is not a permutation of the bodies.
Schedule BuildSchedule(const ScheduleInput& input);

// Cells merged where they differ only in blocks of DDSs that order nothing: `alone[d]` says
// that every element of written DDS d that a body of the loop accesses is its own (its loop
// index), so no two bodies share one (Lasso's beta_j, beside the residual rows column j
// shares). Cells whose signatures agree apart from such blocks, and keep some other block,
// become one cell with the union of their signatures; a cell of such blocks only joins the
// first cell of other blocks that holds its first block, if that one holds all of them. A
// merged cell's bodies run in one group, one after another, and its group conflicts with every
// group the parts did. That is valid whatever `alone` says; it is worth it where the parts
// would conflict through their other blocks anyway (Lasso's two cells at an r-block boundary,
// which differ in beta's block only and took a round each). Returns per cell of in.signatures
// its merged cell, numbered in order of first appearance, and fills *merged: the signatures,
// cell_sizes summed where in.cell_sizes is given (else BuildSchedule counts them from
// cell_of_body), cell_of_body renumbered, the rest copied. Returns an empty vector, filling
// nothing, if no two cells merge. Unordered inputs only.
std::vector<int32_t> MergeCellsApartFrom(const ScheduleInput& in, const std::vector<bool>& alone,
                                         ScheduleInput* merged);

// What keeps `order` from being a permutation of first..last ("index 7 at position 3 is listed
// before, at position 1"), or "" if it is one.
std::string OrderPermutationError(int64_t first, int64_t last, const std::vector<int64_t>& order);

}  // namespace strads
