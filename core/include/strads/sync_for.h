// SyncFor(D, M, F, BSP|SSP|Hybrid, RE): the data-parallel engine (paper section 4.4.2).
//
//   strads::Replicate(rt, W);                      // W: a SyncFor parameter, full copy per node
//   strads::SyncFor(samples, 64, [&W](std::span<const Sample> batch) {
//     for (const Sample& s : batch) { ... W[j] ... }  // plain serial code
//   }, strads::BSP());
//
// Mini-batches and clocks. Each node cuts ITS OWN part of `data` (data.local()) into
// consecutive mini-batches of `minibatch` elements (the last one may be shorter). With T
// threads per node, mini-batch m of a node runs on thread m % T at clock m / T; `body(batch)`
// is called once per mini-batch. A clock ends when every thread of the node finished its
// mini-batch. Every node runs max over nodes of its clock count; a worker (node, thread) with
// no mini-batch at a clock is idle for it. A worker that processed a mini-batch at a clock is
// "active" at that clock.
//
// Parameters. A parameter is a dvector<P> declared with Replicate(rt, v) or
// RegisterAggregationFunc(v, fn) (collective: every node declares the same parameters in the
// same order). P must be float, double or std::array<float|double, N>. Every node keeps the
// whole parameter current (Replicate gathers the owned ranges; SyncFor re-gathers a parameter
// whose contents changed since, e.g. after Transform). Inside the body `v[i]` is redirected to
// the calling worker's copy (BSP, SSP) or to the node's shared copy (Hybrid): the copy of the
// whole parameter (with reconnaissance: of the elements the node's bodies access) is taken on
// the worker's first access in each clock, from the value at the start of the clock. A body may
// access only parameters (through operator[]) and its batch; accessing any other DDS, `data`
// included, throws UsageError.
//
// Aggregation at the end of a clock (default). A worker's delta is, element by element,
// (its copy) - (the parameter at the start of the clock). BSP: each node sums its workers'
// deltas in thread order, the node sums are exchanged and summed in node order, and every node
// applies param += sum / W, where W is the number of workers active at that clock (over all
// nodes). All nodes therefore hold bit-identical parameters, and the result depends only on
// the data, P and T, never on timing: `--nodes P` and `mpiexec -n P` agree bit for bit.
//
// RegisterAggregationFunc(v, fn) replaces the default for v with
//
//   P fn(const P& before, std::span<const P> deltas)
//
// called on every node for every element of v (with reconnaissance: every element some node's
// bodies access) after each clock in which some worker accessed v: `before` is the element at
// the start of the clock, `deltas` are the active workers' deltas IN FIXED ORDER, node 0's
// threads 0..T-1, then node 1's, ... (a worker that did not access the element contributes a
// zero delta; deltas.size() is the number of active workers); the returned value is the
// element's new value. fn must be a pure function (it runs on every
// node). Under Hybrid a "worker" is a whole node (deltas.size() = active nodes); under SSP fn
// is applied once per (node, clock) update, with that node's workers' deltas in thread order
// and `before` the current value of the element.
//
// SSP(s), s >= 0. The exact definition, at node granularity: clocks are numbered 0, 1, ... in
// each SyncFor call, and NODE q STARTS CLOCK c ONLY AFTER IT HAS APPLIED THE UPDATES OF CLOCKS
// <= c - s - 1 OF EVERY NODE. Hence a worker at clock c sees every update of clocks <= c - s - 1
// of every node, every update of its own node of clocks <= c - 1, and perhaps some later
// updates of other nodes, but none of clocks > c + s (a node cannot start clock c + s + 1
// before it has this node's update of clock c).
// A node's update of a clock is the sum of its workers' deltas in thread order; it is applied
// at once by the node itself and broadcast to the others, which apply it as they take it in
// (param += update / W_c, W_c = workers active at clock c over all nodes): arrival order is
// decided by the ordering seam (DeliverNext, message delivery). Before each clock a node also
// applies every update that has already arrived (beyond the bound): each poll for one is the
// seam's ChoicePoint::kSspPoll, so that replay applies the same ones. s = 0 has BSP's
// bound, but updates are summed in arrival order: not bit-reproducible. At the end of the call
// every node waits for all updates and then takes the owners' values of every parameter, so
// that all nodes agree again.
//
// Hybrid: the threads of a node share one copy of each parameter, without locks (Hogwild):
// THIS IS A DATA RACE BY DESIGN, so the result is nondeterministic (and race detectors will
// report it). Nodes synchronise every clock: node delta = shared copy - value at the start of
// the clock, exchanged and summed in node order, param += sum / (nodes active at that clock).
// Recording or replaying a Hybrid SyncFor is refused with a clear error: the outcome of its
// races is not an ordering decision the seam could log (use BSP or SSP to record).
//
// Reconnaissance (RE). With reconnaissance = false, a worker's copy is the whole parameter
// and whole-parameter deltas are exchanged every clock. With true, the first call at a call
// site (and any call after the parameters, the node's part of `data` or `minibatch` changed)
// first runs the body on every mini-batch of the node, on the driver thread, with parameter
// accesses recorded and writes discarded (the body sees current values; side effects outside
// parameters are not undone). From then on a node's copies, deltas and messages cover only the
// elements its bodies accessed, and the others' updates are applied element by element. The
// body's accesses must not depend on parameter values (static control flow): an access to an
// element the reconnaissance did not see throws UsageError. Results are the same as without
// reconnaissance (BSP: bit for bit, up to the sign of zero deltas).
//
// The serial equivalent of BSP (dual testing, dual_trace.h). A BSP SyncFor on P nodes of T
// threads computes exactly what this serial program computes, and with --sync-workers PxT (or a
// followed --dual-in file written for P x T workers) a run on one node of one thread executes it:
//
//   node p's data is elements [EvenSplit(n, P).begin(p), .end(p)), cut into mini-batches;
//   for each clock c:
//     before = the parameters
//     for p = 0 .. P-1, for t = 0 .. T-1:        // worker (p, t), one after another
//       copy(p, t) = before; run mini-batch c * T + t of node p (if any) on copy(p, t)
//     node_sum(p) = delta(p, 0) + delta(p, 1) + ...    // thread order, active accessing workers
//     sum = node_sum(0) + node_sum(1) + ...            // node order, nodes that have one
//     parameters = before + sum / (workers active at clock c)   // or fn(before, deltas in
//                                                               // (node, thread) order)
//
// i.e. the same additions in the same order as the parallel run (reconnaissance: element by
// element over the nodes that access it, as above). It is bit-identical for any P and T, and
// differs between different P x T (floating-point addition is not associative).
//
// Test mode (--test-mode, RuntimeOptions::test_mode) runs SSP(s) and Hybrid as BSP: their
// results depend on timing, so no serial execution is equivalent to them. Node 0 notes the
// change on stderr once per call site.
//
// Every wait for another node is bounded by RuntimeOptions::timeout. All communication is
// done by the driver thread, between clocks. SyncFor is collective: every node calls it.
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
#include <vector>

#include "strads/dvector.h"
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
// Stale synchronous parallel with staleness bound `staleness` >= 0 (see the definition above).
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

namespace internal {

enum class ScalarKind : uint8_t { kFloat, kDouble };

// A custom aggregation on raw elements: out = fn(before, deltas[0], ..., deltas[count - 1]).
using RawAggregation = std::function<void(const std::byte* before, const std::byte* deltas,
                                          size_t count, std::byte* out)>;

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
// Runs the clocks; run(begin, end) runs the body on data.local()[begin, end).
void RunSyncFor(Runtime& rt, DdsBase& data, int64_t local_count, int64_t minibatch,
                FunctionRef<void(int64_t, int64_t)> run, SyncOption option, bool reconnaissance,
                SyncSite site);

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
// (see the top of this file for when it runs and the order of `deltas`). Declares `param` a
// parameter; it is made current on every node at the next SyncFor. Call it on every node.
template <class P, class Fn>
void RegisterAggregationFunc(dvector<P>& param, Fn fn) {
  static_assert(SyncElement<P>::value,
                "strads::SyncFor parameters must have elements of type float, double or "
                "std::array<float|double, N> (the engine subtracts, adds and divides them)");
  static_assert(std::is_convertible_v<std::invoke_result_t<Fn&, const P&, std::span<const P>>, P>,
                "RegisterAggregationFunc: fn must be callable as "
                "P fn(const P& before, std::span<const P> deltas)");
  // The engine passes suitably aligned buffers of P (implicitly created objects).
  internal::RawAggregation raw = [fn = std::move(fn)](const std::byte* before,
                                                      const std::byte* deltas, size_t count,
                                                      std::byte* out) mutable {
    const P result = fn(*reinterpret_cast<const P*>(before),
                        std::span<const P>(reinterpret_cast<const P*>(deltas), count));
    std::memcpy(out, &result, sizeof(P));
  };
  internal::DeclareSyncParameter(Runtime::Current(), param, internal::KindOf<P>(), std::move(raw));
}

// Runs body(std::span<const T> batch) on every mini-batch of every node's part of `data`,
// with parameters synchronised as `option` says. Collective: every node calls it.
template <class T, class F>
void SyncFor(const dvector<T>& data, int64_t minibatch, F&& body, SyncOption option,
             bool reconnaissance = false,
             std::source_location where = std::source_location::current()) {
  Runtime& rt = Runtime::Current();
  auto& d = const_cast<dvector<T>&>(data);
  const std::span<const T> local = d.local();
  internal::RunSyncFor(
      rt, d, static_cast<int64_t>(local.size()), minibatch,
      [&](int64_t begin, int64_t end) {
        body(local.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin)));
      },
      option, reconnaissance, {where.file_name(), static_cast<uint32_t>(where.line())});
}

}  // namespace strads
