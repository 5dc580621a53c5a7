// ChaosOrderingPolicy: another policy (Live, Record or Replay) plus seeded random delays and
// yields at the ordering points, so that interleavings that are rare on a quiet machine show up
// in tests (`--chaos SEED`, STRADS_CHAOS=SEED, `strads record --chaos SEED`).
//
// What it does, per ordering point (probabilities per call, delays uniform):
//   Acquire       yield 1/16; sleep 0-200 us 1/512 (so a thread loses its turn)
//   Release       yield 1/16
//   NextSource    sleep 0-300 us (more messages arrive before the choice)
//   Choose        sleep 0-300 us
//   Operator      sleep 0-2 ms at begin and end with probability 1/2 (nodes drift apart, so
//                 messages between them arrive in other orders)
// The decisions themselves stay the wrapped policy's: under Replay, chaos changes timing only,
// never the result. The delay pattern is a function of the seed, the node and the thread; the
// outcome is not (it depends on the machine's timing, which is the point).
#pragma once

#include <cstdint>
#include <memory>

#include "strads/seam/ordering.h"

namespace strads {

class ChaosOrderingPolicy : public OrderingPolicy {
 public:
  ChaosOrderingPolicy(std::unique_ptr<OrderingPolicy> inner, uint64_t seed, int node, int threads);
  ~ChaosOrderingPolicy() override;

  const char* mode() const override { return inner_->mode(); }
  void Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) override;
  void Release(SeamLock& lock, uint64_t lock_id, int thread) override;
  int NextSource(Tag tag) override;
  void Delivered(const Message& message) override;
  uint64_t Choose(ChoicePoint point, uint64_t live_value) override;
  void Input(const std::string& path, uint64_t offset, std::span<const std::byte> bytes) override;
  void OperatorBegin(const OperatorSite& site) override;
  void OperatorEnd(const OperatorSite& site) override;
  void Waited(WaitKind kind, int source, uint64_t begin_ns, uint64_t duration_ns) override {
    inner_->Waited(kind, source, begin_ns, duration_ns);
  }
  void OperatorOutcome(const OperatorSite& site, FunctionRef<uint64_t()> digest) override {
    inner_->OperatorOutcome(site, digest);
  }
  std::string CheckpointWritten(uint64_t operators) override {
    return inner_->CheckpointWritten(operators);
  }
  void CheckpointsKept(const std::string& dir, std::span<const uint64_t> kept) override {
    inner_->CheckpointsKept(dir, kept);
  }
  void Restored(uint64_t operators) override { inner_->Restored(operators); }
  void Finish(bool ok) override;
  void Drain() override { inner_->Drain(); }

  // What it injected so far, over all threads (read while no thread runs an operator): so that
  // a test can tell chaos that injects nothing from chaos that did not change a result.
  struct Injected {
    uint64_t sleeps = 0, sleep_us = 0, yields = 0;
  };
  Injected injected() const;

 private:
  struct alignas(64) Stream {
    uint64_t state = 0;
    Injected injected;  // counted by the stream's own thread
  };
  uint64_t Next(int stream);  // splitmix64 of one thread's (or the driver's) stream
  void MaybeSleep(int stream, uint64_t one_in, uint64_t max_us);
  void Sleep(int stream, uint64_t us);
  void Yield(int stream);

  std::unique_ptr<OrderingPolicy> inner_;
  int driver_stream_;
  std::unique_ptr<Stream[]> streams_;  // one per worker thread, then the driver's
};

}  // namespace strads
