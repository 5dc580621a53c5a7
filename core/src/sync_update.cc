#include "sync_update.h"

#include <cstring>
#include <memory>
#include <stdexcept>

#include "node_context.h"
#include "sync_plan.h"
#include "thread_pool.h"

namespace strads {
namespace internal {

namespace {

// The element arithmetic, on the parameter's scalar type S.
template <class Fn>
void WithScalar(ScalarKind kind, Fn&& fn) {
  if (kind == ScalarKind::kFloat)
    fn(float{});
  else
    fn(double{});
}

// out = a - b, over n scalars.
template <class S>
void Sub(std::byte* out, const std::byte* a, const std::byte* b, size_t n) {
  S* o = reinterpret_cast<S*>(out);
  const S* x = reinterpret_cast<const S*>(a);
  const S* y = reinterpret_cast<const S*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = x[i] - y[i];
}
// acc += a - b.
template <class S>
void AddSub(std::byte* acc, const std::byte* a, const std::byte* b, size_t n) {
  S* o = reinterpret_cast<S*>(acc);
  const S* x = reinterpret_cast<const S*>(a);
  const S* y = reinterpret_cast<const S*>(b);
  for (size_t i = 0; i < n; ++i) o[i] += x[i] - y[i];
}
// acc += a.
template <class S>
void Add(std::byte* acc, const std::byte* a, size_t n) {
  S* o = reinterpret_cast<S*>(acc);
  const S* x = reinterpret_cast<const S*>(a);
  for (size_t i = 0; i < n; ++i) o[i] += x[i];
}
// out = the sum of (copy - base) over the non-null copies in thread order, starting from the
// first, over n scalars at byte offset off. The order is the serial emulation's; every path that
// sums workers' deltas goes through here so that they agree bit for bit.
template <class S>
void SumDeltas(std::byte* out, const std::vector<std::byte*>& copies, const std::byte* base,
               size_t off, size_t n) {
  bool first = true;
  for (std::byte* copy : copies) {
    if (copy == nullptr) continue;
    if (first)
      Sub<S>(out, copy + off, base + off, n), first = false;
    else
      AddSub<S>(out, copy + off, base + off, n);
  }
}
// param += sum / count.
template <class S>
void ApplyAverage(std::byte* param, const std::byte* sum, size_t n, int64_t count) {
  S* p = reinterpret_cast<S*>(param);
  const S* s = reinterpret_cast<const S*>(sum);
  const S c = static_cast<S>(count);
  for (size_t i = 0; i < n; ++i) p[i] += s[i] / c;
}

size_t ScalarBytes(ScalarKind kind) {
  return kind == ScalarKind::kFloat ? sizeof(float) : sizeof(double);
}

// Message payloads are 8-aligned (vector storage is aligned for any scalar).
size_t Pad8(size_t n) { return (n + 7) / 8 * 8; }

// Where the deltas stand in an update (see sync_update.h). Node p's deltas of parameter k
// travel as Units(k, p) units of UnitBytes(k) each, unit j being the bytes at Offset(k, p, j)
// of the parameter: without reconnaissance one unit, the whole parameter; with it, one unit per
// element node p's bodies access.
class UpdateLayout {
 public:
  explicit UpdateLayout(const SyncCall& call) : call_(call), plan_(call.plan) {}

  // Whether parameter k travels as one delta per worker (custom aggregation, BSP and SSP).
  bool PerWorker(size_t k) const { return Param(k).custom && !call_.hybrid(); }
  size_t Units(size_t k, int p) const { return plan_ ? plan_->need[k][p].size() : 1; }
  size_t UnitBytes(size_t k) const {
    return plan_ ? call_.rt.context().dds(call_.ids[k]).element_bytes() : call_.Bytes(call_.ids[k]);
  }
  size_t UnitScalars(size_t k) const { return UnitBytes(k) / ScalarBytes(Param(k).kind); }
  size_t Offset(size_t k, int p, size_t j) const {
    return plan_ ? static_cast<size_t>(plan_->need[k][p][j]) *
                       call_.rt.context().dds(call_.ids[k]).element_bytes()
                 : 0;
  }
  size_t PayloadBytes(size_t k, int p, int64_t active) const {
    return Units(k, p) * UnitBytes(k) * static_cast<size_t>(PerWorker(k) ? active : 1);
  }
  // The payload of each parameter in node `source`'s update of clock c (null: absent).
  std::vector<const std::byte*> Parse(std::span<const std::byte> update, int source,
                                      int64_t c) const;

 private:
  const SyncParam& Param(size_t k) const { return call_.engine.params[call_.ids[k]]; }

  const SyncCall& call_;
  const SitePlan* plan_;
};

std::vector<const std::byte*> UpdateLayout::Parse(std::span<const std::byte> update, int source,
                                                  int64_t c) const {
  const int64_t active = call_.Active(source, c);
  const size_t parameters = call_.ids.size();
  std::vector<const std::byte*> at(parameters, nullptr);
  size_t pos = Pad8(parameters);
  if (update.size() < pos) throw std::runtime_error("SyncFor: malformed update message");
  for (size_t k = 0; k < parameters; ++k) {
    if (update[k] == std::byte{0}) continue;
    at[k] = update.data() + pos;
    pos += Pad8(PayloadBytes(k, source, active));
    if (pos > update.size()) throw std::runtime_error("SyncFor: malformed update message");
  }
  if (pos != update.size()) throw std::runtime_error("SyncFor: malformed update message");
  return at;
}

// Runs part(begin, end) on contiguous parts of [0, n) units, one per thread of the node, when the
// node runs its own threads (not an emulation) and n repays waking them (at least
// `min_per_thread` units a thread); else part(0, n) here. Part boundaries are multiples of
// `align` units. For work on each unit apart from the others, whose result does not depend on
// the split.
template <class Part>
void SplitOverThreads(SyncCall& call, size_t n, size_t min_per_thread, size_t align, Part&& part) {
  const size_t threads = static_cast<size_t>(call.threads);
  if (call.serial || threads < 2 || n < threads * min_per_thread) return part(0, n);
  call.rt.context().pool().RunOnAll([&](int t) {
    const size_t i = static_cast<size_t>(t);
    const size_t begin = n * i / threads / align * align;
    const size_t end = i + 1 == threads ? n : n * (i + 1) / threads / align * align;
    part(begin, end);
  });
}

// Scalars a thread must get before a node's threads share element-wise work at a clock's end.
constexpr size_t kMinScalarsPerThread = size_t{1} << 14;

struct WorkerDelta {
  int node;
  const std::byte* block;  // the worker's units (see UpdateLayout); null: zero deltas
};

// Calls the custom aggregation of parameter k on every element of `targets` (null: all),
// with one delta per entry of `workers`, in their order.
void ApplyCustom(SyncCall& call, size_t k, const std::vector<int64_t>* targets,
                 const std::vector<WorkerDelta>& workers) {
  const SyncParam& param = call.engine.params[call.ids[k]];
  DdsBase& dds = call.rt.context().dds(call.ids[k]);
  const size_t eb = dds.element_bytes(), w = workers.size();
  const SitePlan* plan = call.plan;
  if (plan == nullptr) {
    // Every node's deltas cover the whole parameter: a run per thread of the node (fn is pure,
    // so its calls on different elements may overlap), each with the blocks from its start.
    const size_t n = static_cast<size_t>(dds.size());
    const size_t scalars = std::max<size_t>(1, eb / ScalarBytes(param.kind));
    SplitOverThreads(call, n, (kMinScalarsPerThread + scalars - 1) / scalars, 1,
                     [&](size_t begin, size_t end) {
                       if (begin == end) return;
                       std::vector<const std::byte*> from(w);
                       for (size_t j = 0; j < w; ++j)
                         from[j] = workers[j].block ? workers[j].block + begin * eb : nullptr;
                       std::byte* at = dds.raw() + begin * eb;
                       param.custom(at, from.data(), w, end - begin, at);
                     });
    return;
  }
  // Node p's deltas list the elements plan->need[k][p]: element i is at its position there.
  std::vector<const std::byte*> blocks(w);
  const int nodes = call.nodes;
  std::vector<size_t> cursor(nodes, 0);
  std::vector<int64_t> pos(nodes, -1);  // element i's unit in each node's deltas, or -1
  for (int64_t i : *targets) {
    for (int p = 0; p < nodes; ++p) {
      const std::vector<int64_t>& list = plan->need[k][p];
      while (cursor[p] < list.size() && list[cursor[p]] < i) ++cursor[p];
      pos[p] =
          cursor[p] < list.size() && list[cursor[p]] == i ? static_cast<int64_t>(cursor[p]) : -1;
    }
    for (size_t j = 0; j < w; ++j) {
      const WorkerDelta& from = workers[j];
      blocks[j] = from.block != nullptr && pos[from.node] >= 0
                      ? from.block + static_cast<size_t>(pos[from.node]) * eb
                      : nullptr;
    }
    param.custom(dds.raw_element(i), blocks.data(), w, 1, dds.raw_element(i));
  }
}

}  // namespace

std::vector<std::byte>& EncodeNodeUpdate(SyncCall& call, int64_t c, size_t front) {
  const UpdateLayout layout(call);
  const int me = call.me;
  const int64_t active = call.Active(me, c);
  const size_t parameters = call.ids.size();
  // Which copies each parameter has from this clock, in thread order (null: not accessed).
  std::vector<std::vector<std::byte*>> copies(parameters);
  size_t total = front + Pad8(parameters);
  for (size_t k = 0; k < parameters; ++k) {
    copies[k] = call.engine.CopiesThisClock(call.ids[k], active, call.hybrid());
    if (!copies[k].empty()) total += Pad8(layout.PayloadBytes(k, me, active));
  }
  std::vector<std::byte>& buf = call.engine.update;
  buf.resize(total);
  // The buffer may be an earlier update or a received one (SSP reuses them): every byte of the
  // update is written, presence bytes and padding included. With no parameter and no front (a
  // SyncFor that only adds to accumulators) buf is empty and its data() may be null, which
  // memset must not get even for 0 bytes (UBSan).
  if (total > front) std::memset(buf.data() + front, 0, Pad8(parameters));
  size_t at = front + Pad8(parameters);
  for (size_t k = 0; k < parameters; ++k) {
    if (copies[k].empty()) continue;
    buf[front + k] = std::byte{1};
    const uint32_t d = call.ids[k];
    const SyncParam& param = call.engine.params[d];
    const std::byte* base = call.rt.context().dds(d).raw();
    const size_t units = layout.Units(k, me), ub = layout.UnitBytes(k), us = layout.UnitScalars(k);
    std::byte* out = buf.data() + at;
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      // Scalars [s0, s1) of every unit: each scalar's arithmetic is independent of the others.
      auto encode = [&](size_t s0, size_t s1) {
        const size_t skip = s0 * sizeof(S), n = s1 - s0;
        if (layout.PerWorker(k)) {
          // Every active worker's delta, in thread order (zeros if it did not access d).
          for (size_t t = 0; t < copies[k].size(); ++t)
            for (size_t j = 0; j < units; ++j) {
              std::byte* to = out + (t * units + j) * ub + skip;
              const size_t off = layout.Offset(k, me, j) + skip;
              if (copies[k][t] != nullptr)
                Sub<S>(to, copies[k][t] + off, base + off, n);
              else
                std::memset(to, 0, n * sizeof(S));
            }
        } else {
          // The sum of the deltas in thread order, unit by unit.
          for (size_t j = 0; j < units; ++j)
            SumDeltas<S>(out + j * ub + skip, copies[k], base, layout.Offset(k, me, j) + skip, n);
        }
      };
      // One unit is the whole parameter (no reconnaissance): split it over the node's threads.
      // Boundaries on multiples of 16 scalars, so that no two threads write one cache line.
      if (units == 1)
        SplitOverThreads(call, us, kMinScalarsPerThread, 16, encode);
      else
        encode(0, us);
    });
    const size_t bytes = layout.PayloadBytes(k, me, active);
    std::memset(out + bytes, 0, Pad8(bytes) - bytes);
    at += Pad8(bytes);
  }
  return buf;
}

void ApplyBsp(SyncCall& call, int64_t c, const std::vector<std::span<const std::byte>>& updates) {
  const UpdateLayout layout(call);
  const SitePlan* plan = call.plan;
  const int nodes = call.nodes;
  const bool hybrid = call.hybrid();
  const int64_t count = hybrid ? call.ActiveNodes(c) : call.ActiveWorkers(c);
  std::vector<std::vector<const std::byte*>> at(nodes);  // [node][parameter]
  for (int p = 0; p < nodes; ++p) at[p] = layout.Parse(updates[p], p, c);
  for (size_t k = 0; k < call.ids.size(); ++k) {
    const uint32_t d = call.ids[k];
    int present = 0, last = -1;
    for (int p = 0; p < nodes; ++p)
      if (at[p][k] != nullptr) ++present, last = p;
    if (present == 0) continue;
    call.touched[k] = true;
    const SyncParam& param = call.engine.params[d];
    DdsBase& dds = call.rt.context().dds(d);
    const size_t bytes = call.Bytes(d), n = bytes / ScalarBytes(param.kind);
    if (param.custom) {
      // Deltas in (node, thread) order; null (zeros) for workers that did not access d.
      std::vector<WorkerDelta> from;
      for (int p = 0; p < nodes; ++p) {
        const int64_t workers = hybrid ? (call.Active(p, c) > 0 ? 1 : 0) : call.Active(p, c);
        for (int64_t t = 0; t < workers; ++t)
          from.push_back({p, at[p][k] ? at[p][k] + static_cast<size_t>(t) * layout.Units(k, p) *
                                                       layout.UnitBytes(k)
                                      : nullptr});
      }
      ApplyCustom(call, k, plan ? &plan->all[k] : nullptr, from);
      continue;
    }
    if (plan != nullptr) {
      // Element by element over the union of the nodes' elements; each node's deltas of
      // element i (if it has them) in node order, starting from the first.
      const size_t eb = dds.element_bytes(), us = layout.UnitScalars(k);
      auto sum = std::make_unique<double[]>(eb / sizeof(float) + 1);
      auto* total = reinterpret_cast<std::byte*>(sum.get());
      std::vector<size_t> cursor(nodes, 0);
      WithScalar(param.kind, [&](auto zero) {
        using S = decltype(zero);
        for (int64_t i : plan->all[k]) {
          bool first = true;
          for (int p : call.node_order) {
            const std::vector<int64_t>& list = plan->need[k][p];
            if (cursor[p] == list.size() || list[cursor[p]] != i) continue;
            if (at[p][k] != nullptr) {
              const std::byte* delta = at[p][k] + cursor[p] * eb;
              if (first)
                std::memcpy(total, delta, eb), first = false;
              else
                Add<S>(total, delta, us);
            }
            ++cursor[p];
          }
          if (!first) ApplyAverage<S>(dds.raw_element(i), total, us, count);
        }
      });
      continue;
    }
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      const std::byte* total = at[last][k];
      if (present > 1) {
        // The node sums in node order, starting from the first.
        SyncEngine& e = call.engine;
        if (e.sum_bytes < bytes) {
          e.sum = std::make_unique_for_overwrite<double[]>(bytes / sizeof(double) + 1);
          e.sum_bytes = bytes;
        }
        auto* sum = reinterpret_cast<std::byte*>(e.sum.get());
        bool first = true;
        for (int p : call.node_order) {
          if (at[p][k] == nullptr) continue;
          if (first)
            std::memcpy(sum, at[p][k], bytes), first = false;
          else
            Add<S>(sum, at[p][k], n);
        }
        total = sum;
      }
      ApplyAverage<S>(dds.raw(), total, n, count);
    });
  }
}

void EndClockOnOneNode(SyncCall& call, int64_t c, bool another_clock) {
  SyncEngine& engine = call.engine;
  const int64_t active = call.Active(call.me, c), count = call.ActiveWorkers(c);
  for (size_t k = 0; k < call.ids.size(); ++k) {
    const uint32_t d = call.ids[k];
    const std::vector<std::byte*> copies = engine.CopiesThisClock(d, active, /*hybrid=*/false);
    if (copies.empty()) continue;
    call.touched[k] = true;
    const SyncParam& param = engine.params[d];
    DdsBase& dds = call.rt.context().dds(d);
    std::byte* const values = dds.raw();
    const size_t eb = dds.element_bytes(), n = static_cast<size_t>(dds.size());
    const size_t scalars = std::max<size_t>(1, eb / ScalarBytes(param.kind));
    // About 4 KB of a parameter a piece: its deltas are still in L1 when they are used.
    const size_t piece = std::max<size_t>(1, 4096 / eb);
    // Parts of whole cache lines where elements tile them: no two threads write one line.
    const size_t align = eb < 64 && 64 % eb == 0 ? 64 / eb : 1;
    const size_t deltas = param.custom ? copies.size() : 1;  // per-worker deltas or their sum
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      const auto part = [&](size_t begin, size_t end) {
        const size_t stride = piece * eb;
        const auto scratch = std::make_unique_for_overwrite<double[]>(
            (deltas * stride + sizeof(double) - 1) / sizeof(double));
        auto* const delta = reinterpret_cast<std::byte*>(scratch.get());
        std::vector<const std::byte*> from(copies.size(), nullptr);
        for (size_t i = begin; i < end; i += piece) {
          const size_t m = std::min(piece, end - i), at = i * eb, s = m * eb / sizeof(S);
          if (param.custom) {
            // Each worker's delta; a worker that did not access d gives zeros (null).
            for (size_t t = 0; t < copies.size(); ++t) {
              if (copies[t] == nullptr) continue;
              Sub<S>(delta + t * stride, copies[t] + at, values + at, s);
              from[t] = delta + t * stride;
            }
            param.custom(values + at, from.data(), copies.size(), m, values + at);
          } else {
            SumDeltas<S>(delta, copies, values, at, s);
            ApplyAverage<S>(values + at, delta, s, count);
          }
          if (another_clock)
            for (std::byte* copy : copies)
              if (copy != nullptr) std::memcpy(copy + at, values + at, m * eb);
        }
      };
      SplitOverThreads(call, n, (kMinScalarsPerThread + scalars - 1) / scalars, align, part);
    });
    if (another_clock)
      for (size_t t = 0; t < copies.size(); ++t)
        if (copies[t] != nullptr) engine.workers[t].copies[d].fresh = engine.stamp + 1;
  }
}

void ApplySsp(SyncCall& call, int source, int64_t c, std::span<const std::byte> update) {
  const UpdateLayout layout(call);
  const SitePlan* plan = call.plan;
  const std::vector<const std::byte*> at = layout.Parse(update, source, c);
  for (size_t k = 0; k < call.ids.size(); ++k) {
    if (at[k] == nullptr) continue;
    call.touched[k] = true;
    const uint32_t d = call.ids[k];
    const SyncParam& param = call.engine.params[d];
    const size_t units = layout.Units(k, source), ub = layout.UnitBytes(k);
    if (param.custom) {
      std::vector<WorkerDelta> from;
      for (int64_t t = 0; t < call.Active(source, c); ++t)
        from.push_back({source, at[k] + static_cast<size_t>(t) * units * ub});
      ApplyCustom(call, k, plan ? &plan->need[k][source] : nullptr, from);
      continue;
    }
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      for (size_t j = 0; j < units; ++j)
        ApplyAverage<S>(call.rt.context().dds(d).raw() + layout.Offset(k, source, j),
                        at[k] + j * ub, layout.UnitScalars(k), call.ActiveWorkers(c));
    });
  }
}

}  // namespace internal
}  // namespace strads
