// Collectives over the Transport seam. Every node calls them in the same order (control
// replication), and each combines contributions in node order, so results never depend on
// timing. Linear algorithms: strads targets tens of nodes, not thousands.
#pragma once

#include <cstddef>
#include <vector>

#include "strads/internal/bytes.h"
#include "strads/seam/transport.h"

namespace strads {

class Collectives {
 public:
  Collectives(Transport& transport, double timeout_seconds)
      : transport_(transport), timeout_(timeout_seconds) {}

  void Barrier();
  // result[p] is node p's contribution.
  std::vector<std::vector<std::byte>> AllGather(std::vector<std::byte> mine);
  // Node `root`'s `data`, on every node (the argument is ignored elsewhere).
  std::vector<std::byte> Broadcast(int root, std::vector<std::byte> data);
  // outgoing[p] goes to node p; result[p] came from node p.
  std::vector<std::vector<std::byte>> AllToAll(std::vector<std::vector<std::byte>> outgoing);

  template <class T>
  std::vector<T> AllGatherValue(const T& mine) {
    ByteWriter w;
    w.Put(mine);
    std::vector<T> all;
    for (const auto& bytes : AllGather(w.Take())) all.push_back(ByteReader(bytes).Get<T>());
    return all;
  }
  bool AnyTrue(bool mine);
  int64_t Sum(int64_t mine);

 private:
  Transport& transport_;
  double timeout_;
};

}  // namespace strads
