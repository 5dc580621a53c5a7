// SharedPlans: under `--nodes P`, the part of AsyncFor planning that every node computes alike
// (the cells' signature table and the schedule built from it) made once, by the leader, and
// read by the process's other nodes, as the pages of DDS values they only read are one copy
// (shared_array_files.h). Made by the in-process cluster; under mpiexec (a node a process) there
// is none and every node makes its own table and schedule, as the messages let it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "cell_signatures.h"
#include "schedule.h"

namespace strads {

// A group's worker and cell: what every node needs of every group to send the body lists.
struct GroupSlot {
  int32_t worker, cell;
};

// What one planning of a loop's cells gives every node: every cell's signature and the schedule
// (groups with their workers and cells; body lists only where the schedule fills them), and on
// several nodes the schedule's `layout`, every group's slot by round in schedule order.
// Read-only once made: at --nodes 64 --blocks 128, 16 384 cells, these were 76 bytes a cell on
// each of 64 nodes at once (80 MB) where one copy is 1.2 MB.
struct PlannedCells {
  CellSignatures signatures;
  Schedule schedule;
  std::vector<std::vector<GroupSlot>> layout;
};

class SharedPlans {
 public:
  explicit SharedPlans(int nodes) : taken_(static_cast<size_t>(nodes), 0) {}
  SharedPlans(const SharedPlans&) = delete;
  SharedPlans& operator=(const SharedPlans&) = delete;

  // The leader: `plan` is what each other node's next Take gives, in the order published (all
  // nodes plan the same loops in the same order: planning is collective).
  void Publish(std::shared_ptr<const PlannedCells> plan);
  // Node `node`, not the leader: the plan published as this node's next, held until every
  // other node has taken it. The leader publishes before it sends the message the taker waits
  // for, so it is there; throws std::logic_error if not.
  std::shared_ptr<const PlannedCells> Take(int node);
  // Plans published so far, and those not yet taken by every other node (tests).
  uint64_t published() const;
  size_t pending() const;

 private:
  struct Entry {
    uint64_t number;
    std::shared_ptr<const PlannedCells> plan;
    size_t takers_left;
  };
  mutable std::mutex mu_;
  std::vector<uint64_t> taken_;  // per node, its Takes so far
  uint64_t published_ = 0;
  std::deque<Entry> entries_;  // by number
};

}  // namespace strads
