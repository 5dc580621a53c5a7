// accumulator<T>: an array of counters or sums that AsyncFor and SyncFor bodies update with
// commutative `Add(i, delta)` (Orion's buffered writes). Made with MakeAccumulator; the runtime
// owns it.
//
// Contract (the serial equivalent), for one AsyncFor or SyncFor call whose bodies call Add:
//  - a body reads (operator[]) the value the element had when the call began plus the deltas
//    that body itself has added to it so far, and nothing any other body added in the call;
//  - when the call ends, every delta of the call is added: the accumulator becomes
//    start + the sum of all the call's deltas.
// (A SyncFor body is one mini-batch: its own adds are those of its batch.) T is an integer type,
// float or double; what a body reads depends only on the start values and on that body, and the
// sum never depends on the order in which threads and nodes fold their buffers, nor on the
// schedule: the result is bit for bit the same for any --nodes, mpiexec -n, --threads, --blocks,
// engine and SyncFor mode (BSP, SSP, Hybrid).
//  - Integers: integer addition is associative and commutative. The serial equivalent is a loop
//    in which each body works on its own copy of the values the call began with (`mine = start`,
//    `mine[i] += delta` and reads of `mine`) and the deltas are added to the accumulator as
//    they come: LDA's sampler reads nk[k] after nk.Add(old, -1) as the serial sampler reads it
//    after --nk[old].
//  - float and double: a body's own copy adds with an ordinary rounded `+=`, in the order the
//    body adds. Each element's new value at the call's end is the exact sum of its start value
//    and every delta of the call, rounded once (ExactSum, exact_sum.h). The serial equivalent:
//        strads::ExactSum<double> s;  s.Add(x[i]);      // once per call and element, then
//        for each body, in any order: s.Add(delta);      // the deltas the bodies add
//        x[i] = s.Value();                               // at the call's end
//    A serial `x += delta` in some order rounds at every step and may differ in the last bits.
//    Each thread keeps an ExactSum per element (576 bytes for double): floating-point
//    accumulators are for a few values (a loss, per-class totals), not for parameters.
// Other bodies' updates become visible at the call's end, not at round ends, because the rounds
// differ between the schedule engine, its ordered variant that dual testing runs and the lock
// engine, while the call is the same in all of them.
//
// Accumulator accesses are not DDS accesses: reconnaissance does not record them, so bodies that
// only add to the same counter do not conflict and the loop is not serialized by it. Bodies run
// during reconnaissance read as above and add nothing to the accumulator. Every node keeps the
// whole array (it is meant for small, hot arrays: LDA's per-topic totals, histograms, a loss),
// and every thread that runs bodies a copy of it; the end of every AsyncFor and SyncFor call
// exchanges each node's buffered deltas (one AllGather for all accumulators).
//
// In driver code, which every node runs alike, Add applies at once on every node (for float and
// double, an ordinary rounded `+=`) and operator[] and data() read the current values. In a body,
// data() is the call's start values, without the body's own adds. Add is not supported in
// operator callbacks (Map, Transform, ...): it would apply on one node only.
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
#include "strads/internal/body_adds.h"
#include "strads/internal/dds.h"
#include "strads/internal/node_services.h"
#include "strads/operators.h"
#include "strads/runtime.h"

namespace strads {

namespace internal {

// What the loop engines see of an accumulator (core/src/accumulators.h drives it).
class AccumulatorBase : public DdsBase {
 public:
  enum class Mode {
    kDirect,   // driver code: Add applies at once
    kBuffer,   // an AsyncFor call's bodies: Add goes to the thread's buffer and view
    kDiscard,  // reconnaissance: Add goes to the thread's view only
  };
  using DdsBase::DdsBase;

  Mode mode() const { return mode_.load(std::memory_order_relaxed); }
  // Called by the driver while no body runs (the engines hand bodies to their threads after it
  // and take them back before the next call): bodies read call_key_ without synchronisation.
  void set_mode(Mode mode) {
    mode_.store(mode, std::memory_order_relaxed);
    call_key_ = mode == Mode::kDirect ? kNoCall : NextCallKey();
  }
  // This node's buffered deltas, summed over its threads (empty if none), and clears them.
  virtual std::vector<std::byte> TakeDeltas() = 0;
  // Adds the deltas every node took (node order; empty ones are skipped).
  virtual void AddDeltas(const std::vector<std::vector<std::byte>>& per_node) = 0;

 protected:
  static constexpr uint64_t kNoCall = ~uint64_t{0};
  // A process-wide id: a thread's cached view is never mistaken for another call's or
  // accumulator's.
  static uint64_t NextCallKey();

  std::atomic<Mode> mode_{Mode::kDirect};
  // Which call (or reconnaissance) bodies run in now, kNoCall in driver code. Not atomic, so
  // that a body's reads of it can be hoisted out of its loops.
  uint64_t call_key_ = kNoCall;
};

// Registers an accumulator with its node (collective, in creation order).
void RegisterAccumulator(Runtime& rt, AccumulatorBase& accumulator);

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
  // In a body: the value when the call began plus the body's own adds. In driver code: the
  // current value.
  const T& operator[](int64_t i) const {
    const Cached& c = CacheSlot();
    if (c.key == call_key_) [[likely]]
      return c.view[i];
    if (mode() == Mode::kDirect) return data_[i];
    return const_cast<accumulator*>(this)->Setup().view[i];
  }
  const T* data() const { return data_.get(); }

  void Add(int64_t i, T delta) {
    // One unsigned compare for both bounds, and the body's case first: a sampler such as LDA's
    // adds twice per body, so these few instructions are a visible share of a body.
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(DdsBase::size())) [[unlikely]]
      OutOfRange(i);
    Cached* c = &CacheSlot();
    if (c->key != call_key_) [[unlikely]] {
      if (mode() == Mode::kDirect) {
        data_[i] += delta;
        return;
      }
      c = &Setup();
    }
    if constexpr (kExact)
      c->buffer[i].Add(delta);
    else
      c->buffer[i] += delta;
    T* const mine = c->view + i;
    internal::LogBodyAdd(mine);
    *mine += delta;
  }

  std::vector<std::byte> TakeDeltas() override {
    std::lock_guard lock(mu_);
    if (threads_.empty()) return {};
    std::vector<Sum> sum(static_cast<size_t>(size()), Sum{});
    for (auto& thread : threads_) {
      std::vector<Sum>& b = thread->buffer;
      for (size_t i = 0; i < sum.size(); ++i) {
        if constexpr (kExact)
          sum[i].Merge(b[i]);
        else
          sum[i] += b[i];
        b[i] = Sum{};
      }
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

  // What one thread that runs bodies keeps.
  struct ThreadState {
    std::thread::id owner;
    std::vector<Sum> buffer;  // the deltas its bodies added in this call
    std::vector<T> view;      // the call's start values plus the running body's adds, then padding
    uint64_t view_key = kNoCall;  // the call `view` was copied for
    std::vector<Sum> discarded;   // where reconnaissance's adds go
  };
  // A thread's pointers into its ThreadState, valid while `key` is the call's key.
  struct Cached {
    uint64_t key;
    Sum* buffer;
    T* view;
  };

  // This thread's cache entry for this accumulator: a few slots per element type, so that a
  // body adding to two accumulators does not evict one with the other.
  static constexpr uint32_t kSlots = 4;
  Cached& CacheSlot() const {
    thread_local Cached slots[kSlots];
    return *reinterpret_cast<Cached*>(reinterpret_cast<std::byte*>(slots) + slot_bytes_);
  }
  // Elements past a view's end, so that the undo log's 8-byte entries stay inside it.
  static constexpr size_t kViewPadding = (internal::kBodyAddBytes + sizeof(T) - 1) / sizeof(T);

  // The calling thread's state for this call (found under the lock by thread id, the view copied
  // at the thread's first use in the call), cached thread-locally. States live as long as the
  // accumulator. Out of line: AsyncFor's flattened bodies (async_for.h, RunFlat) would inline
  // it, its lock and allocations, into every body that reads or adds.
  [[gnu::noinline]] Cached& Setup() {
    std::lock_guard lock(mu_);
    const auto me = std::this_thread::get_id();
    size_t k = 0;
    while (k < threads_.size() && threads_[k]->owner != me) ++k;
    const size_t n = static_cast<size_t>(size());
    if (k == threads_.size()) {
      auto fresh = std::make_unique<ThreadState>();
      fresh->owner = me;
      fresh->buffer.assign(n, Sum{});
      fresh->view.resize(n + kViewPadding);
      threads_.push_back(std::move(fresh));
    }
    ThreadState& state = *threads_[k];
    const bool discard = mode() == Mode::kDiscard;
    if (state.view_key != call_key_) {  // not earlier in this call: the running body's adds stay
      std::memcpy(state.view.data(), data_.get(), n * sizeof(T));
      state.view_key = call_key_;
      if (discard) state.discarded.assign(n, Sum{});
    }
    Cached& c = CacheSlot();
    c = {call_key_, discard ? state.discarded.data() : state.buffer.data(), state.view.data()};
    return c;
  }

  std::unique_ptr<T[]> data_;
  // This accumulator's cache slot, as a byte offset into the slots: one addition per access.
  const uint32_t slot_bytes_ = static_cast<uint32_t>(NextCallKey() % kSlots * sizeof(Cached));
  std::mutex mu_;
  std::vector<std::unique_ptr<ThreadState>> threads_;
};

// An accumulator of n counters, element i starting at init(i), identical on every node
// (collective).
template <class T, class Init>
accumulator<T>& MakeAccumulator(Runtime& rt, int64_t n, Init init,
                                const std::string& name = "accumulator") {
  if (n < 0) throw UsageError("MakeAccumulator '" + name + "': negative size " + std::to_string(n));
  // Every node holds the whole accumulator (and each thread a buffer of it during a call): a
  // size from a flag past memory is refused here, where std::bad_alloc would name nothing.
  internal::CheckFitsInMemory(rt, "accumulator", name, n, "elements", sizeof(T),
                              /*whole_on_each_node=*/true);
  auto& a = internal::CreateDds<accumulator<T>>(rt, name, n);
  for (int64_t i = 0; i < n; ++i) a.Add(i, init(i));
  internal::RegisterAccumulator(rt, a);
  return a;
}

}  // namespace strads
