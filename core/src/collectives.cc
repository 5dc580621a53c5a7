#include "collectives.h"

#include <stdexcept>
#include <string>

#include "strads/fnv1a.h"
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

std::vector<std::vector<std::byte>> Collectives::Gather(int root, std::vector<std::byte> mine) {
  const int me = transport_.node(), n = transport_.nodes();
  std::vector<std::vector<std::byte>> all;
  if (me != root) {
    transport_.Send(root, Tag::kCollective, std::move(mine));
    return all;
  }
  all.resize(n);
  all[me] = std::move(mine);
  for (int p = 0; p < n; ++p)
    if (p != me) all[p] = Receive(p).payload;
  return all;
}

std::vector<std::byte> Collectives::Scatter(int root,
                                            std::vector<std::vector<std::byte>> outgoing) {
  const int me = transport_.node(), n = transport_.nodes();
  if (me != root) return Receive(root).payload;
  for (int p = 0; p < n; ++p)
    if (p != me) transport_.Send(p, Tag::kCollective, std::move(outgoing.at(p)));
  return std::move(outgoing.at(me));
}

std::vector<int64_t> Collectives::SumEach(const std::vector<int64_t>& mine) {
  ByteWriter w;
  w.PutVector(mine);
  ByteWriter sum;
  if (const auto all = Gather(0, w.Take()); !all.empty()) {
    std::vector<int64_t> total(mine.size(), 0);
    for (const auto& bytes : all) {
      ByteReader r(bytes);
      const auto theirs = r.GetVector<int64_t>();
      if (theirs.size() != total.size())
        throw std::runtime_error("strads: a node's vector to sum has " +
                                 std::to_string(theirs.size()) + " elements, not " +
                                 std::to_string(total.size()));
      for (size_t i = 0; i < total.size(); ++i) total[i] += theirs[i];
    }
    sum.PutVector(total);
  }
  const std::vector<std::byte> bytes = Broadcast(0, sum.Take());
  ByteReader r(bytes);
  return r.GetVector<int64_t>();
}

uint64_t Collectives::HashInNodeOrder(uint64_t state, const std::byte* bytes, size_t size) {
  const int me = transport_.node(), n = transport_.nodes();
  if (me > 0) state = ByteReader(Receive(me - 1).payload).Get<uint64_t>();
  Fnv1a hash(state);
  hash.Update(bytes, size);
  ByteWriter w;
  w.Put(hash.digest());
  std::vector<std::byte> mine = w.Take();
  if (me + 1 < n) transport_.Send(me + 1, Tag::kCollective, mine);
  return ByteReader(Broadcast(n - 1, std::move(mine))).Get<uint64_t>();
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
