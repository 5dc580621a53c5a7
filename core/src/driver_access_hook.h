// DriverAccessHook: DDS element access from driver code. Every node makes the same accesses in
// the same order (control replication), so reading an element another node owns is a collective:
// its owner sends it to every node. The owner sends the element's whole block (at most kBlockBytes
// of its range), which every node keeps in its array and reads from while the block is current:
// a driver that reads a round's picked coordinates one by one (Lasso) makes a fetch a block
// where it made one an element.
//
// A node's blocks stop being current when an operator begins or ends (loops reuse a node's copies
// of other nodes' elements), when any collective call is made (messages may carry new values),
// and when the DDS's version changes (Transform, Assign, a mutable local() on the owner). In a
// program that follows control replication these happen alike on every node, so every node
// decides alike whether to fetch. One that does not: a mutable local() called on some nodes
// only (inside `if (rt.leader())`), then a driver read of that DDS before the next operator.
// The nodes then decide apart; the fetch (Collectives::DriverRead) has every node in it send
// before it waits, so the nodes stop with the mismatch error at the next collective message
// (tests: porting_tests.cmake's leader_local_*), never with a stale value or a wait until
// --timeout. Reading through a const reference (the const local()) avoids it.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "strads/internal/dds.h"

namespace strads {

class Runtime;

class DriverAccessHook : public AccessHook {
 public:
  // A fetch moves at most this many bytes of the owner's range (at least one element).
  static constexpr int64_t kBlockBytes = 64 << 10;

  explicit DriverAccessHook(Runtime& rt) : rt_(rt) {}
  std::byte* Access(DdsBase& dds, int64_t index, bool write) override;

  // An operator begins or ends: no block is current any more.
  void Forget() { ++generation_; }

 private:
  // The blocks of one DDS this node holds, current while the stamps below are.
  struct Held {
    uint64_t generation = ~uint64_t{0};
    uint64_t calls = 0;                  // the collective calls made when they were last current
    uint64_t version = 0;                // the DDS's version then
    std::unordered_set<int64_t> firsts;  // each block's first index
  };
  // dds's blocks, emptied if they are no longer current.
  Held& CurrentBlocks(const DdsBase& dds);

  Runtime& rt_;
  uint64_t generation_ = 0;
  std::vector<Held> held_;  // by DDS id
};

}  // namespace strads
