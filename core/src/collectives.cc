#include "collectives.h"

#include "strads/seam/ordering.h"  // SteadyNowNs, kWaitReportNs

namespace strads {

Message Collectives::Receive(int source) {
  if (!wait_observer_) return transport_.Receive(source, Tag::kCollective, timeout_);
  const uint64_t begin = SteadyNowNs();
  Message m = transport_.Receive(source, Tag::kCollective, timeout_);
  if (const uint64_t waited = SteadyNowNs() - begin; waited >= kWaitReportNs)
    wait_observer_(source, begin, waited);
  return m;
}

std::vector<std::vector<std::byte>> Collectives::AllToAll(
    std::vector<std::vector<std::byte>> outgoing) {
  const int me = transport_.node(), n = transport_.nodes();
  std::vector<std::vector<std::byte>> incoming(n);
  for (int p = 0; p < n; ++p)
    if (p != me) transport_.Send(p, Tag::kCollective, std::move(outgoing[p]));
  incoming[me] = std::move(outgoing[me]);
  for (int p = 0; p < n; ++p)
    if (p != me) incoming[p] = Receive(p).payload;
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
  return Receive(root).payload;
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
