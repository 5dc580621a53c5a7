// SyncFor(D, M, F, BSP|SSP|Hybrid, RE): the data-parallel engine (paper section 4.4.2).
// docs/sync_for.md defines it: mini-batches and clocks, the order of aggregation, the exact
// SSP bound, Hybrid, reconnaissance, and the serial program BSP equals (dual testing).
//
//   strads::Replicate(rt, W);                      // W: a SyncFor parameter, full copy per node
//   strads::SyncFor(samples, 64, [&W](std::span<const Sample> batch) {
//     for (const Sample& s : batch) { ... W[j] ... }  // plain serial code
//   }, strads::BSP());
//
// The contract in short:
// - Replicate(rt, v), collective: every node's full array of v takes the owners' values, and v
//   becomes a parameter; SyncFor keeps every parameter whole and current on every node.
// - RegisterAggregationFunc(v, fn), on every node: fn(before, deltas) gives an element's value
//   after a clock, from the active workers' deltas in (node, thread) order, instead of the
//   average; v becomes a parameter, made current at the next SyncFor.
// - SyncFor(data, minibatch, body, option, reconnaissance), collective: body(batch) runs once
//   on every mini-batch of every node's part of data, on copies of the parameters taken at the
//   start of each clock; it may access only parameters (anything else throws UsageError).
//   BSP: the result depends only on the data, nodes and threads, bit for bit, and equals a
//   serial program (--sync-workers PxT runs it). SSP(s): no node starts clock c before it has
//   applied every node's updates of clocks <= c - s - 1. Hybrid: lock-free inside a node, not
//   reproducible, refused when recording. Reconnaissance: copies and messages cover only the
//   elements the bodies access; the BSP result is the same (up to the sign of zero deltas).
//   Test mode runs SSP and Hybrid as BSP. Every wait is bounded by RuntimeOptions::timeout.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <source_location>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "strads/dvector.h"
#include "strads/internal/body_adds.h"
#include "strads/internal/body_failure.h"
#include "strads/internal/function_ref.h"
#include "strads/runtime.h"

namespace strads {

struct SyncOption {
  enum class Mode : uint8_t { kBsp, kSsp, kHybrid };
  Mode mode = Mode::kBsp;
  int staleness = 0;  // SSP only
};

// Bulk synchronous parallel: a barrier and an exact, deterministic average every clock.
inline SyncOption BSP() { return {SyncOption::Mode::kBsp, 0}; }
// Stale synchronous parallel with staleness bound `staleness` >= 0 (docs/sync_for.md).
inline SyncOption SSP(int staleness) { return {SyncOption::Mode::kSsp, staleness}; }
// Lock-free (Hogwild) inside a node, synchronous across nodes.
inline SyncOption Hybrid() { return {SyncOption::Mode::kHybrid, 0}; }

// The element arithmetic of SyncFor parameters: element-wise on Scalar, kScalars per element.
template <class T>
struct SyncElement : std::false_type {};
template <>
struct SyncElement<float> : std::true_type {
  using Scalar = float;
  static constexpr size_t kScalars = 1;
};
template <>
struct SyncElement<double> : std::true_type {
  using Scalar = double;
  static constexpr size_t kScalars = 1;
};
template <class S, size_t N>
requires(std::is_same_v<S, float> || std::is_same_v<S, double>) struct SyncElement<std::array<S, N>>
    : std::true_type {
  using Scalar = S;
  static constexpr size_t kScalars = N;
};

// The worker that runs a SyncFor body: thread `thread` of node `node` (the emulated ones under
// --sync-workers PxT), worker number `index` = node * threads + thread of `count` = nodes x
// threads. Mini-batch m of a node runs on its thread m mod threads.
struct SyncWorkerId {
  int node = 0;
  int thread = 0;
  int index = 0;
  int count = 1;
};

namespace internal {

enum class ScalarKind : uint8_t { kFloat, kDouble };

// A custom aggregation on a run of `n` consecutive raw elements: for e < n, element e of `out` =
// fn(element e of `before`, its deltas), where worker j's delta of element e is element e of
// blocks[j] (null: a zero delta), j < workers. `out` may be `before`. One call covers a run (a
// part of a whole parameter without reconnaissance), so that the per-element work is the typed
// code's. Calls on disjoint runs may run at once on the node's threads.
using RawAggregation = std::function<void(const std::byte* before, const std::byte* const* blocks,
                                          size_t workers, size_t n, std::byte* out)>;

template <class P>
constexpr ScalarKind KindOf() {
  return std::is_same_v<typename SyncElement<P>::Scalar, float> ? ScalarKind::kFloat
                                                                : ScalarKind::kDouble;
}

// Declares `v` a parameter (idempotent); `custom` replaces its aggregation when set.
void DeclareSyncParameter(Runtime& rt, DdsBase& v, ScalarKind kind, RawAggregation custom);
// Collective: every node's full array of `v` takes the owners' values.
void ReplicateRaw(Runtime& rt, DdsBase& v);

struct SyncSite {
  const char* file;
  uint32_t line;
};
// Runs the clocks; run(begin, end, worker) runs the body on data.local()[begin, end).
void RunSyncFor(Runtime& rt, DdsBase& data, int64_t local_count, int64_t minibatch,
                FunctionRef<void(int64_t, int64_t, SyncWorkerId)> run, SyncOption option,
                bool reconnaissance, SyncSite site);

}  // namespace internal

// Collective. Makes every node's full array of `v` current (an AllGather of the owned ranges)
// and declares `v` a SyncFor parameter.
template <class P>
void Replicate(Runtime& rt, dvector<P>& v) {
  static_assert(SyncElement<P>::value,
                "strads::SyncFor parameters must have elements of type float, double or "
                "std::array<float|double, N> (the engine subtracts, adds and divides them)");
  internal::DeclareSyncParameter(rt, v, internal::KindOf<P>(), {});
  internal::ReplicateRaw(rt, v);
}

// Replaces the default aggregation (average) of parameter `param` with
//   P fn(const P& before, std::span<const P> deltas)
// (docs/sync_for.md: when it runs and the order of `deltas`). Declares `param` a
// parameter; it is made current on every node at the next SyncFor. Call it on every node.
template <class P, class Fn>
void RegisterAggregationFunc(dvector<P>& param, Fn fn) {
  static_assert(SyncElement<P>::value,
                "strads::SyncFor parameters must have elements of type float, double or "
                "std::array<float|double, N> (the engine subtracts, adds and divides them)");
  static_assert(
      std::is_convertible_v<std::invoke_result_t<const Fn&, const P&, std::span<const P>>, P>,
      "RegisterAggregationFunc: fn must be callable as "
      "P fn(const P& before, std::span<const P> deltas) const (a pure function: the node's "
      "threads may call it at once on different elements)");
  // Elements are copied in and out as bytes (the engine's buffers need not be aligned for P).
  // Calls on different runs may overlap (the node's threads share a whole parameter's runs), so
  // `deltas` is the calling thread's, kept between its calls.
  internal::RawAggregation raw = [fn = std::move(fn)](const std::byte* before,
                                                      const std::byte* const* blocks,
                                                      size_t workers, size_t n, std::byte* out) {
    thread_local std::vector<P> deltas;
    deltas.resize(workers);
    for (size_t e = 0; e < n; ++e) {
      const size_t at = e * sizeof(P);
      for (size_t j = 0; j < workers; ++j) {
        if (blocks[j] != nullptr)
          std::memcpy(&deltas[j], blocks[j] + at, sizeof(P));
        else
          deltas[j] = P{};
      }
      P b;
      std::memcpy(&b, before + at, sizeof(P));
      const P result = fn(std::as_const(b), std::span<const P>(deltas));
      std::memcpy(out + at, &result, sizeof(P));
    }
  };
  internal::DeclareSyncParameter(Runtime::Current(), param, internal::KindOf<P>(), std::move(raw));
}

// Runs body(std::span<const T> batch) on every mini-batch of every node's part of `data`,
// with parameters synchronised as `option` says. Collective: every node calls it. A body that
// takes (std::span<const T> batch, int64_t first) also gets the index in `data` of batch[0]
// (for per-sample seeds, say); one taking (batch, first, SyncWorkerId worker) also the worker
// that runs it (for per-worker scratch space, say).
template <class T, class F>
void SyncFor(const dvector<T>& data, int64_t minibatch, F&& body, SyncOption option,
             bool reconnaissance = false,
             std::source_location where = std::source_location::current()) {
  Runtime& rt = Runtime::Current();
  auto& d = const_cast<dvector<T>&>(data);
  const std::span<const T> local = data.local();
  internal::RunSyncFor(
      rt, d, static_cast<int64_t>(local.size()), minibatch,
      [&](int64_t begin, int64_t end, [[maybe_unused]] SyncWorkerId worker) {
        const auto batch =
            local.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
        const internal::BodyEnd body_end;  // a mini-batch's own accumulator adds end with it
        try {
          if constexpr (std::is_invocable_v<F&, std::span<const T>, int64_t, SyncWorkerId>)
            body(batch, d.owned_begin() + begin, worker);
          else if constexpr (std::is_invocable_v<F&, std::span<const T>, int64_t>)
            body(batch, d.owned_begin() + begin);
          else
            body(batch);
        } catch (...) {
          internal::NoteBodyFailure(d.owned_begin() + begin);  // which one threw (body_failure.h)
          throw;
        }
      },
      option, reconnaissance, {where.file_name(), static_cast<uint32_t>(where.line())});
}

}  // namespace strads
