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
// Groups are placed on workers (node * threads + thread) largest first to the least loaded.
// None of this depends on the number of nodes or threads except the placement: the serial order
// and so the results are the same for any P and T.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strads {

// (dds << 40) | block.
using BlockKey = uint64_t;
inline BlockKey MakeBlockKey(uint32_t dds, int64_t block) {
  return (static_cast<uint64_t>(dds) << 40) | static_cast<uint64_t>(block);
}
inline uint32_t BlockKeyDds(BlockKey k) { return static_cast<uint32_t>(k >> 40); }
inline int64_t BlockKeyBlock(BlockKey k) { return static_cast<int64_t>(k & ((1ULL << 40) - 1)); }

struct ScheduleInput {
  int64_t first = 0;                              // body k is loop index first + k
  std::vector<int32_t> cell_of_body;              // per body
  std::vector<std::vector<BlockKey>> signatures;  // per cell, sorted, unique
  std::vector<int64_t> blocks_of_dds;             // block count of each written DDS (by id)
  int workers = 1;
  const std::vector<int64_t>* order = nullptr;  // ordered variant: a permutation of the indices
};

struct Group {
  int32_t worker = 0;
  int32_t cell = 0;
  std::vector<int64_t> bodies;  // loop indices, in execution order
};

struct Schedule {
  std::vector<std::vector<Group>> rounds;
  bool rotation = false;  // the 2-D block rotation was detected

  std::vector<int64_t> SerialOrder() const;
  size_t bodies() const;
};

Schedule BuildSchedule(const ScheduleInput& input);

}  // namespace strads
