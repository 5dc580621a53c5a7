#include "collectives.h"

namespace strads {

std::vector<std::vector<std::byte>> Collectives::AllToAll(
    std::vector<std::vector<std::byte>> outgoing) {
  const int me = transport_.node(), n = transport_.nodes();
  std::vector<std::vector<std::byte>> incoming(n);
  for (int p = 0; p < n; ++p)
    if (p != me) transport_.Send(p, Tag::kCollective, std::move(outgoing[p]));
  incoming[me] = std::move(outgoing[me]);
  for (int p = 0; p < n; ++p)
    if (p != me) incoming[p] = transport_.Receive(p, Tag::kCollective, timeout_).payload;
  return incoming;
}

std::vector<std::vector<std::byte>> Collectives::AllGather(std::vector<std::byte> mine) {
  const int n = transport_.nodes();
  std::vector<std::vector<std::byte>> outgoing(n, mine);
  return AllToAll(std::move(outgoing));
}

std::vector<std::byte> Collectives::Broadcast(int root, std::vector<std::byte> data) {
  const int me = transport_.node(), n = transport_.nodes();
  if (me == root) {
    for (int p = 0; p < n; ++p)
      if (p != me) transport_.Send(p, Tag::kCollective, data);
    return data;
  }
  return transport_.Receive(root, Tag::kCollective, timeout_).payload;
}

void Collectives::Barrier() { AllGather({}); }

bool Collectives::AnyTrue(bool mine) {
  for (bool b : AllGatherValue<bool>(mine))
    if (b) return true;
  return false;
}

int64_t Collectives::Sum(int64_t mine) {
  int64_t total = 0;
  for (int64_t v : AllGatherValue<int64_t>(mine)) total += v;
  return total;
}

}  // namespace strads
