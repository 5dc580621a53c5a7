// What a trace holds, counted (`strads trace stats`): per node and operator site, events by
// kind; the message matrix (deliveries by source and destination); lock grants, logged and
// implied; the logged lock handovers per DDS and the hottest elements; SSP polls that found no
// update; since format 6, time per operator site and node, and the waits (count and time, by
// what was waited for) of each.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "strads/trace/reader.h"

namespace strads {

struct TraceStats {
  static constexpr size_t kKinds = 10;  // indexed by EventKind (0 unused)
  using KindCounts = std::array<uint64_t, kKinds>;
  static constexpr size_t kWaitKinds = 4;  // indexed by TraceWaitKind (0: unknown kinds)
  struct Waits {
    std::array<uint64_t, kWaitKinds> count{}, ns{};
  };

  struct Site {  // one operator call site on one node, every invocation
    explicit Site(std::string n) : name(std::move(n)) {}
    std::string name;  // "AsyncFor/locks at sgdmf.cc:59", or "(outside operators)"
    uint64_t invocations = 0;
    KindCounts events{};
    uint64_t time_ns = 0;  // from each invocation's begin to its end, summed
    // Waits that began between an invocation's begin and end (a lock wait of a worker too).
    Waits waits;
  };
  struct Node {
    int node = 0;
    uint64_t events = 0;
    KindCounts events_by_kind{};
    std::vector<Site> sites;     // in order of first appearance
    uint64_t lock_acquires = 0;  // every grant, logged or implied (the threads' last digests)
    uint64_t ssp_polls = 0, ssp_polls_empty = 0;  // polls, and those that found no update
    uint64_t time_ns = 0;  // from the first operator begin to the last operator end
    Waits waits;           // every wait of the node, inside operators or not
  };
  std::vector<Node> nodes;
  // messages[source][destination]: deliveries (by count: a trace holds no message sizes).
  std::vector<std::vector<uint64_t>> messages;
  // Logged lock grants (handovers between threads that no earlier one orders) per DDS, by the
  // lock engine's lock ids (DDS id << 40 | element), and the 10 most handed-over elements.
  std::vector<std::pair<uint64_t, uint64_t>> handovers_per_dds;  // (DDS id, count)
  std::vector<std::pair<uint64_t, uint64_t>> hottest_elements;   // (lock id, count)
};

TraceStats ComputeStats(const TraceReader& trace);

// A node's lock grants, logged and implied: the sum of its threads' last digest counts.
uint64_t LockAcquires(const NodeTrace& node);

}  // namespace strads
