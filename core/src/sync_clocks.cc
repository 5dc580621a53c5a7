#include "sync_clocks.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "node_context.h"
#include "strads/internal/bytes.h"
#include "strads/seam/ordering.h"
#include "strads/seam/transport.h"
#include "sync_update.h"

namespace strads {
namespace internal {

namespace {

// Runs node call.me's mini-batches of clock c: mini-batch c * T + t on worker t, on the
// node's threads, or when serial on this thread one worker after another.
void RunWorkers(SyncCall& call, int64_t c) {
  call.engine.BeginClock();
  const int64_t first = c * call.threads;
  const int64_t mine = call.Batches(call.me);
  auto run = [&](int t) {
    const int64_t m = first + t;
    if (m >= mine) return;
    WorkerScope scope(&call.engine.workers[static_cast<size_t>(t)]);
    const auto [begin, end] = call.MiniBatch(call.me, m);
    call.body(begin, end, call.Worker(call.me, t));
  };
  if (call.serial) {
    for (int t = 0; t < call.threads; ++t) run(t);
    return;
  }
  call.rt.context().pool().RunOnAll(run);
}

// The end of a BSP or Hybrid clock of `clocks`: every node's update goes to every node, and
// every node applies all of them in the same order; one node's plain BSP does both at once.
void EndBspClock(SyncCall& call, int64_t c, int64_t clocks) {
  if (call.nodes == 1 && call.plan == nullptr && !call.hybrid())
    return EndClockOnOneNode(call, c, /*another_clock=*/c + 1 < clocks);
  std::vector<std::byte>& update = EncodeNodeUpdate(call, c);
  if (call.nodes == 1) {
    ApplyBsp(call, c, {std::span<const std::byte>(update)});
    return;
  }
  const auto all = call.rt.context().collectives().AllGather(update);
  ApplyBsp(call, c, std::vector<std::span<const std::byte>>(all.begin(), all.end()));
}

// Hybrid runs these clocks too: its hook hands the threads of a node one shared copy, and
// ApplyBsp averages its updates over nodes instead of workers.
void RunBsp(SyncCall& call) {
  ParamHook hook(call.engine, call.hybrid());
  ParamAccessScope scope(call.rt, call.ids, hook);
  const int64_t clocks = call.Clocks();
  for (int64_t c = 0; c < clocks; ++c) {
    RunWorkers(call, c);
    EndBspClock(call, c, clocks);
  }
}

void RunHybrid(SyncCall& call) {
  for (uint32_t d : call.ids)
    if (!call.engine.shared[d]) call.engine.shared[d] = std::make_unique<SharedCopy>();
  RunBsp(call);
}

// BSP of the emulated topology, on this one node of one thread.
void RunSerialBsp(SyncCall& call) {
  ParamHook hook(call.engine, /*hybrid=*/false);
  ParamAccessScope scope(call.rt, call.ids, hook);
  std::vector<std::vector<std::byte>> updates(static_cast<size_t>(call.nodes));
  const int64_t clocks = call.Clocks();
  for (int64_t c = 0; c < clocks; ++c) {
    for (int p = 0; p < call.nodes; ++p) {
      call.Play(p);
      RunWorkers(call, c);
      updates[p] = EncodeNodeUpdate(call, c);
    }
    ApplyBsp(call, c, std::vector<std::span<const std::byte>>(updates.begin(), updates.end()));
  }
}

// SSP(s): node q starts clock c only after it has applied the updates of clocks <= c - s - 1
// of every node (docs/sync_for.md).
class SspClocks {
 public:
  explicit SspClocks(SyncCall& call)
      : call_(call), clocks_(call.Clocks()), applied_(call.nodes, 0) {}
  void Run();

 private:
  // The fewest clocks of another node applied here.
  int64_t SlowestOther() const;
  // Applies the next update another node sent, in the order the ordering seam delivers them.
  void ReceiveOne();
  // Sends `message` (the clock, then the update) to every other node; moves it into the last.
  void Broadcast(std::vector<std::byte>& message);

  SyncCall& call_;
  const int64_t clocks_;
  std::vector<int64_t> applied_;                // clocks of each node applied here
  std::vector<std::vector<std::byte>> spares_;  // received messages' buffers, for updates
};

void SspClocks::Run() {
  Runtime& rt = call_.rt;
  const int me = call_.me, nodes = call_.nodes;
  const int64_t s = call_.option.staleness;
  ParamHook hook(call_.engine, /*hybrid=*/false);
  ParamAccessScope scope(rt, call_.ids, hook);
  for (int64_t c = 0; c < clocks_; ++c) {
    // Clock c needs every node's updates of clocks <= c - s - 1: c - s of them.
    while (SlowestOther() < c - s) ReceiveOne();
    // Updates that have already arrived are applied too (the reads may see them): how
    // many have is a matter of timing, hence a choice of the seam at every poll.
    while (nodes > 1 && rt.context().ordering().Choose(
                            ChoicePoint::kSspPoll,
                            rt.context().transport().Poll(kAnySource, Tag::kSyncFor) ? 1 : 0) != 0)
      ReceiveOne();
    RunWorkers(call_, c);
    ++applied_[me];
    if (nodes == 1 && call_.plan == nullptr) {
      // Alone, a node's SSP clock is a BSP clock: its own update, applied at once, in one pass.
      EndClockOnOneNode(call_, c, /*another_clock=*/c + 1 < clocks_);
      continue;
    }
    // The message is the update with the clock in front, built in place, in a received
    // message's buffer if one is spare (the last one was sent away).
    if (call_.engine.update.capacity() == 0 && !spares_.empty()) {
      call_.engine.update = std::move(spares_.back());
      spares_.pop_back();
    }
    std::vector<std::byte>& message = EncodeNodeUpdate(call_, c, sizeof c);
    std::memcpy(message.data(), &c, sizeof c);
    ApplySsp(call_, me, c, std::span<const std::byte>(message).subspan(sizeof c));
    if (nodes > 1) Broadcast(message);
  }
  while (SlowestOther() < clocks_) ReceiveOne();
  // Updates were applied in different orders on different nodes: take the owners' values.
  for (size_t k = 0; k < call_.ids.size(); ++k)
    if (call_.touched[k]) ReplicateRaw(rt, rt.context().dds(call_.ids[k]));
}

int64_t SspClocks::SlowestOther() const {
  int64_t m = clocks_;
  for (int p = 0; p < call_.nodes; ++p)
    if (p != call_.me) m = std::min(m, applied_[p]);
  return m;
}

void SspClocks::ReceiveOne() {
  Runtime& rt = call_.rt;
  Message m = DeliverNext(rt.context().transport(), rt.context().ordering(), Tag::kSyncFor,
                          rt.options().timeout);
  if (m.source < 0 || m.source >= call_.nodes || m.source == call_.me)
    throw std::runtime_error("SyncFor: SSP update from an unexpected node");
  ByteReader r(m.payload);
  const int64_t clock = r.Get<int64_t>();
  if (clock != applied_[m.source])
    throw std::runtime_error("SyncFor: SSP update of clock " + std::to_string(clock) +
                             " from node " + std::to_string(m.source) + ", expected clock " +
                             std::to_string(applied_[m.source]));
  ApplySsp(call_, m.source, clock, std::span<const std::byte>(m.payload).subspan(sizeof(int64_t)));
  ++applied_[m.source];
  // A later update here is about this one's size (the same layout without reconnaissance):
  // kept, its buffer is not allocated and zero-filled again. Two nodes run up to 2 (s + 1)
  // clocks each between receipts (a serialized run: each until it must wait), so up to that
  // many are kept, at most 8, and only for this call: messages that were in flight anyway.
  const int64_t keep = std::min<int64_t>(2 * (call_.option.staleness + 1), 8);
  if (static_cast<int64_t>(spares_.size()) < keep) spares_.push_back(std::move(m.payload));
}

void SspClocks::Broadcast(std::vector<std::byte>& message) {
  Transport& transport = call_.rt.context().transport();
  // With two nodes the message is not copied: it moves into the last peer's Send.
  const int last_peer = call_.me == call_.nodes - 1 ? call_.nodes - 2 : call_.nodes - 1;
  for (int p = 0; p < last_peer; ++p)
    if (p != call_.me) transport.Send(p, Tag::kSyncFor, message);
  transport.Send(last_peer, Tag::kSyncFor, std::move(message));
}

}  // namespace

void RunClocks(SyncCall& call) {
  call.Play(call.me);
  if (call.serial) return RunSerialBsp(call);
  switch (call.option.mode) {
    case SyncOption::Mode::kBsp:
      return RunBsp(call);
    case SyncOption::Mode::kHybrid:
      return RunHybrid(call);
    case SyncOption::Mode::kSsp:
      return SspClocks(call).Run();
  }
}

}  // namespace internal
}  // namespace strads
