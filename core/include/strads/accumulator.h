// accumulator<T>: an array of counters or sums that AsyncFor and SyncFor bodies update with
// commutative `Add(i, delta)` (Orion's buffered writes). Made with MakeAccumulator; the runtime
// owns it.
//
// Contract (the serial equivalent), for one AsyncFor or SyncFor call whose bodies call Add:
//  - every body reads (operator[]) the values the accumulator had when the call began;
//  - each body's Add calls are buffered (per thread) and none is visible inside the call;
//  - when the call ends, every buffered delta is added: the accumulator becomes
//    start + the sum of all the call's deltas.
// T is an integer type, float or double, and that sum never depends on the order in which
// threads and nodes fold their buffers, nor on the schedule: the result is bit for bit the same
// for any --nodes, mpiexec -n, --threads, --blocks, engine and SyncFor mode (BSP, SSP, Hybrid).
//  - Integers: integer addition is associative and commutative. The serial equivalent is a loop
//    that reads a copy taken before the loop and adds the deltas to the accumulator as it goes.
//  - float and double: each element's new value is the exact sum of its start value and every
//    delta of the call, rounded once (ExactSum, exact_sum.h). The serial equivalent:
//        strads::ExactSum<double> s;  s.Add(x[i]);      // once per call and element, then
//        for each body, in any order: s.Add(delta);      // the deltas the bodies add
//        x[i] = s.Value();                               // at the call's end
//    A serial `x += delta` in some order rounds at every step and may differ in the last bits.
//    Each thread keeps an ExactSum per element (576 bytes for double): floating-point
//    accumulators are for a few values (a loss, per-class totals), not for parameters.
// Updates become visible at the call's end, not at round ends, because the rounds differ between
// the schedule engine, its ordered variant that dual testing runs and the lock engine, while the
// call is the same in all of them.
//
// Accumulator accesses are not DDS accesses: reconnaissance does not record them, so bodies that
// only add to the same counter do not conflict and the loop is not serialized by it. Bodies run
// during reconnaissance add nothing. Every node keeps the whole array (it is meant for small,
// hot arrays: LDA's per-topic totals, histograms, a loss); the end of every AsyncFor and SyncFor
// call exchanges each node's buffered deltas (one AllGather for all accumulators).
//
// In driver code, which every node runs alike, Add applies at once on every node (for float and
// double, an ordinary rounded `+=`). Add is not supported in operator callbacks (Map,
// Transform, ...): it would apply on one node only.
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
#include "strads/exact_sum.h"
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
  static_assert(std::is_integral_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>,
                "accumulator elements are integers, float or double");
  // What a thread's buffer holds per element: integers sum as they are, reals exactly.
  static constexpr bool kExact = !std::is_integral_v<T>;
  using Sum = std::conditional_t<kExact, ExactSum<T>, T>;

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
    // One unsigned compare for both bounds, and the body's mode first: a sampler such as LDA's
    // adds twice per body, so these few instructions are a visible share of a body.
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(DdsBase::size())) [[unlikely]]
      OutOfRange(i);
    const Mode mode = mode_.load(std::memory_order_relaxed);
    if (mode == Mode::kBuffer) [[likely]] {
      if constexpr (kExact)
        ThreadBuffer()[i].Add(delta);
      else
        ThreadBuffer()[i] += delta;
    } else if (mode == Mode::kDirect) {
      data_[i] += delta;
    }  // kDiscard: nothing
  }

  std::vector<std::byte> TakeDeltas() override {
    std::lock_guard lock(mu_);
    if (buffers_.empty()) return {};
    std::vector<Sum> sum(static_cast<size_t>(size()), Sum{});
    for (auto& b : buffers_)
      for (size_t i = 0; i < sum.size(); ++i) {
        if constexpr (kExact)
          sum[i].Merge(b[i]);
        else
          sum[i] += b[i];
        b[i] = Sum{};
      }
    if constexpr (kExact) {
      std::vector<std::byte> bytes(sum.size() * Sum::kBytes);
      for (size_t i = 0; i < sum.size(); ++i) sum[i].Save(bytes.data() + i * Sum::kBytes);
      return bytes;
    } else {
      std::vector<std::byte> bytes(sum.size() * sizeof(T));
      std::memcpy(bytes.data(), sum.data(), bytes.size());
      return bytes;
    }
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
    constexpr size_t wire = [] {  // the bytes of one element's delta
      if constexpr (kExact)
        return Sum::kBytes;
      else
        return sizeof(T);
    }();
    std::vector<const std::byte*> sent;
    for (const auto& bytes : per_node) {
      if (bytes.empty()) continue;
      if (bytes.size() != n * wire)
        throw std::runtime_error("accumulator '" + name() + "': a node sent " +
                                 std::to_string(bytes.size()) + " bytes of deltas, expected " +
                                 std::to_string(n * wire));
      sent.push_back(bytes.data());
    }
    if (sent.empty()) return;
    for (size_t i = 0; i < n; ++i) {
      if constexpr (kExact) {
        Sum total;
        total.Add(data_[i]);
        for (const std::byte* p : sent) total.Merge(Sum::Load(p + i * wire));
        data_[i] = total.Value();
      } else {
        for (const std::byte* p : sent) {
          T delta;
          std::memcpy(&delta, p + i * wire, sizeof(T));
          data_[i] += delta;
        }
      }
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
  Sum* ThreadBuffer() {
    struct Cached {
      uint64_t serial = 0;
      Sum* buffer = nullptr;
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
      buffers_.emplace_back(static_cast<size_t>(size()), Sum{});
    }
    cached = {serial_, buffers_[k].data()};
    return cached.buffer;
  }

  std::unique_ptr<T[]> data_;
  const uint64_t serial_ = internal::NextAccumulatorSerial();
  std::mutex mu_;
  std::vector<std::thread::id> owners_;  // buffers_[k] belongs to thread owners_[k]
  std::vector<std::vector<Sum>> buffers_;
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
