// accumulator<T>: an array of integer counters that AsyncFor and SyncFor bodies update with
// commutative `Add(i, delta)` (Orion's buffered writes). Made with MakeAccumulator; the runtime
// owns it.
//
// Contract (the serial equivalent), for one AsyncFor or SyncFor call whose bodies call Add:
//  - every body reads (operator[]) the values the accumulator had when the call began;
//  - each body's Add calls are buffered (per thread) and none is visible inside the call;
//  - when the call ends, every buffered delta is added: the accumulator becomes
//    start + the sum of all the call's deltas.
// So the call equals a serial loop that reads a copy taken before the loop and adds the deltas
// to the accumulator as it goes. T is an integer type: integer addition is associative and
// commutative, so that sum does not depend on the order in which threads and nodes fold their
// buffers, nor on the schedule: the result is bit for bit the same for any --nodes,
// mpiexec -n, --threads, --blocks, engine and SyncFor mode (BSP, SSP, Hybrid). (Floating-point
// sums depend on their order; scale real values to fixed point.) Updates become visible at the
// call's end, not at round ends, because the rounds differ between the schedule engine, its
// ordered variant that dual testing runs and the lock engine, while the call is the same in all
// of them.
//
// Accumulator accesses are not DDS accesses: reconnaissance does not record them, so bodies that
// only add to the same counter do not conflict and the loop is not serialized by it. Bodies run
// during reconnaissance add nothing. Every node keeps the whole array (it is meant for small,
// hot arrays: LDA's per-topic totals, histograms); the end of every AsyncFor and SyncFor call
// exchanges each node's buffered deltas (one AllGather for all accumulators).
//
// In driver code, which every node runs alike, Add applies at once on every node. Add is not
// supported in operator callbacks (Map, Transform, ...): it would apply on one node only.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "strads/errors.h"
#include "strads/internal/dds.h"
#include "strads/internal/node_services.h"
#include "strads/runtime.h"

namespace strads {

namespace internal {

// What the loop engines see of an accumulator (core/src/accumulators.h drives it).
class AccumulatorBase : public DdsBase {
 public:
  enum class Mode {
    kDirect,   // driver code: Add applies at once
    kBuffer,   // an AsyncFor call's bodies: Add goes to the thread's buffer
    kDiscard,  // reconnaissance: Add does nothing
  };
  using DdsBase::DdsBase;

  Mode mode() const { return mode_.load(std::memory_order_relaxed); }
  void set_mode(Mode mode) { mode_.store(mode, std::memory_order_relaxed); }
  // This node's buffered deltas, summed over its threads (empty if none), and clears them.
  virtual std::vector<std::byte> TakeDeltas() = 0;
  // Adds the deltas every node took (node order; empty ones are skipped).
  virtual void AddDeltas(const std::vector<std::vector<std::byte>>& per_node) = 0;

 protected:
  std::atomic<Mode> mode_{Mode::kDirect};
};

// Registers an accumulator with its node (collective, in creation order).
void RegisterAccumulator(Runtime& rt, AccumulatorBase& accumulator);
// A process-wide id, so a thread's cached buffer is never mistaken for another accumulator's.
uint64_t NextAccumulatorSerial();

}  // namespace internal

template <class T>
class accumulator : public internal::AccumulatorBase {
  static_assert(std::is_integral_v<T>,
                "accumulator elements are integers: their sums do not depend on order");

 public:
  using value_type = T;

  // Used by MakeAccumulator.
  accumulator(uint32_t id, std::string name, int64_t size, int node, int nodes)
      : accumulator(id, std::move(name), size, node, nodes,
                    std::make_unique<T[]>(static_cast<size_t>(size))) {}

  int64_t size() const { return DdsBase::size(); }
  // In a body: the value when the call began. In driver code: the current value.
  const T& operator[](int64_t i) const { return data_[i]; }
  const T* data() const { return data_.get(); }

  void Add(int64_t i, T delta) {
    if (i < 0 || i >= DdsBase::size()) [[unlikely]]
      OutOfRange(i);
    switch (mode_.load(std::memory_order_relaxed)) {
      case Mode::kDirect:
        data_[i] += delta;
        return;
      case Mode::kBuffer:
        ThreadBuffer()[i] += delta;
        return;
      case Mode::kDiscard:
        return;
    }
  }

  std::vector<std::byte> TakeDeltas() override {
    std::lock_guard lock(mu_);
    if (buffers_.empty()) return {};
    std::vector<T> sum(static_cast<size_t>(size()), T{});
    for (auto& b : buffers_)
      for (size_t i = 0; i < sum.size(); ++i) {
        sum[i] += b[i];
        b[i] = T{};
      }
    std::vector<std::byte> bytes(sum.size() * sizeof(T));
    std::memcpy(bytes.data(), sum.data(), bytes.size());
    return bytes;
  }

  // Checkpoints: every node holds the whole array (equal on every node between calls), so each
  // node saves and restores all of it.
  void SaveOwned(ByteWriter& out) const override {
    out.PutRaw(data_.get(), static_cast<size_t>(size()) * sizeof(T));
  }
  void RestoreOwned(ByteReader& in) override {
    in.GetRaw(data_.get(), static_cast<size_t>(size()) * sizeof(T));
    bump_version();
  }

  void AddDeltas(const std::vector<std::vector<std::byte>>& per_node) override {
    const size_t n = static_cast<size_t>(size());
    std::vector<T> delta(n);
    for (const auto& bytes : per_node) {
      if (bytes.empty()) continue;
      if (bytes.size() != n * sizeof(T))
        throw std::runtime_error("accumulator '" + name() + "': a node sent " +
                                 std::to_string(bytes.size()) + " bytes of deltas, expected " +
                                 std::to_string(n * sizeof(T)));
      std::memcpy(delta.data(), bytes.data(), bytes.size());
      for (size_t i = 0; i < n; ++i) data_[i] += delta[i];
    }
    bump_version();
  }

 private:
  accumulator(uint32_t id, std::string name, int64_t size, int node, int nodes,
              std::unique_ptr<T[]> d)
      : AccumulatorBase(id, std::move(name), size, sizeof(T), node, nodes,
                        reinterpret_cast<std::byte*>(d.get())),
        data_(std::move(d)) {}

  // The calling thread's buffer: found under the lock by thread id, then cached thread-locally
  // until the thread adds to another accumulator. Buffers live as long as the accumulator.
  T* ThreadBuffer() {
    struct Cached {
      uint64_t serial = 0;
      T* buffer = nullptr;
    };
    thread_local Cached cached;
    if (cached.serial == serial_) [[likely]]
      return cached.buffer;
    std::lock_guard lock(mu_);
    const auto me = std::this_thread::get_id();
    size_t k = 0;
    while (k < owners_.size() && owners_[k] != me) ++k;
    if (k == owners_.size()) {
      owners_.push_back(me);
      buffers_.emplace_back(static_cast<size_t>(size()), T{});
    }
    cached = {serial_, buffers_[k].data()};
    return cached.buffer;
  }

  std::unique_ptr<T[]> data_;
  const uint64_t serial_ = internal::NextAccumulatorSerial();
  std::mutex mu_;
  std::vector<std::thread::id> owners_;  // buffers_[k] belongs to thread owners_[k]
  std::vector<std::vector<T>> buffers_;
};

// An accumulator of n counters, element i starting at init(i), identical on every node
// (collective).
template <class T, class Init>
accumulator<T>& MakeAccumulator(Runtime& rt, int64_t n, Init init,
                                const std::string& name = "accumulator") {
  if (n < 0) throw UsageError("MakeAccumulator '" + name + "': negative size " + std::to_string(n));
  auto& a = internal::CreateDds<accumulator<T>>(rt, name, n);
  for (int64_t i = 0; i < n; ++i) a.Add(i, init(i));
  internal::RegisterAccumulator(rt, a);
  return a;
}

}  // namespace strads
