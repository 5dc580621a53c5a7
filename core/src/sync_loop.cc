// The data-parallel engine behind SyncFor (sync_for.h).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "node_context.h"
#include "reconnaissance.h"  // HookGuard
#include "strads/errors.h"
#include "strads/internal/bytes.h"
#include "strads/operators.h"
#include "strads/sync_for.h"

namespace strads {
namespace internal {

namespace {

// A copy of one parameter: a worker's (BSP, SSP) or a node's (Hybrid).
struct Copy {
  std::unique_ptr<double[]> storage;  // double: aligned for every supported element type
  size_t bytes = 0;
  uint64_t stamp = 0;  // the clock stamp it was taken at; == current stamp: accessed this clock
  std::byte* data() { return reinterpret_cast<std::byte*>(storage.get()); }
  // Copies the whole parameter, or only the elements of `list` (reconnaissance).
  void Take(DdsBase& dds, uint64_t now, const std::vector<int64_t>* list) {
    const size_t want = static_cast<size_t>(dds.size()) * dds.element_bytes();
    if (bytes != want || !storage) {
      storage =
          std::make_unique_for_overwrite<double[]>((want + sizeof(double) - 1) / sizeof(double));
      bytes = want;
    }
    if (list == nullptr) {
      if (want != 0) std::memcpy(data(), dds.raw(), want);
    } else {
      const size_t eb = dds.element_bytes();
      for (int64_t i : *list)
        std::memcpy(data() + static_cast<size_t>(i) * eb, dds.raw_element(i), eb);
    }
    stamp = now;
  }
};

struct SharedCopy {
  Copy copy;
  std::atomic<uint64_t> stamp{0};
  std::mutex mu;
};

struct Param {
  bool declared = false;
  ScalarKind kind = ScalarKind::kFloat;
  RawAggregation custom;
  uint64_t synced_version = ~uint64_t{0};  // the version at which all nodes last agreed
};

struct Worker {
  std::vector<Copy> copies;  // by DDS id
};

thread_local Worker* current_worker = nullptr;

class WorkerScope {
 public:
  explicit WorkerScope(Worker* w) { current_worker = w; }
  ~WorkerScope() { current_worker = nullptr; }
};

// The per-runtime state of the engine: parameters, copies, invocation counts.
class SyncEngine : public internal::LoopState {
 public:
  std::vector<Param> params;  // by DDS id
  std::vector<Worker> workers;
  std::vector<std::unique_ptr<SharedCopy>> shared;  // by DDS id (Hybrid)
  std::map<std::string, uint64_t> invocations;
  std::set<std::string> noted_test_mode;  // sites whose mode test mode changed (noted once)
  uint64_t stamp = 0;                     // bumped every clock
  std::vector<std::byte> update;          // this node's update of the current clock
  std::unique_ptr<double[]> sum;          // the sum of the node updates
  size_t sum_bytes = 0;
  // During a call with reconnaissance, by DDS id: the elements this node's bodies access
  // (null: the whole parameter) and the same as a bitmap.
  std::vector<const std::vector<int64_t>*> take;
  std::vector<const std::vector<uint8_t>*> allowed;
};

// The reconnaissance plan of one call site: which elements of each parameter the bodies of
// each node access (static control flow: the same in every call).
class SitePlan : public internal::LoopState {
 public:
  bool valid = false;
  std::vector<uint32_t> ids;  // the parameters at planning time
  int64_t local_count = -1, minibatch = -1;
  std::vector<std::vector<std::vector<int64_t>>> need;  // [parameter k][node p]: sorted
  std::vector<std::vector<int64_t>> all;                // [k]: union over nodes, sorted
  // [p][k]: need[k][p] as a bitmap, for this node only (others empty); for every virtual node
  // when SyncFor emulates P x T workers on one node.
  std::vector<std::vector<std::vector<uint8_t>>> mine;
  SyncTopology topology;  // the topology at planning time
};

// Reconnaissance: records which parameter elements a body accesses and hands out scratch
// copies of their current values, so that nothing is committed.
class RecordHook : public AccessHook {
 public:
  explicit RecordHook(std::vector<std::vector<uint8_t>*> marks) : marks_(std::move(marks)) {}
  std::byte* Access(DdsBase& dds, int64_t index, bool) override {
    (*marks_[dds.id()])[static_cast<size_t>(index)] = 1;
    const size_t eb = dds.element_bytes();
    const size_t words = (eb + sizeof(double) - 1) / sizeof(double);
    for (;;) {
      if (chunk_ == chunks_.size()) {
        caps_.push_back(std::max(words, kChunkWords));
        chunks_.push_back(std::make_unique<double[]>(caps_.back()));
        used_ = 0;
      }
      if (used_ + words <= caps_[chunk_]) break;
      ++chunk_, used_ = 0;
    }
    std::byte* scratch = reinterpret_cast<std::byte*>(chunks_[chunk_].get() + used_);
    used_ += words;
    std::memcpy(scratch, dds.raw_element(index), eb);
    return scratch;
  }
  // A new mini-batch: the scratch of the previous one is free again.
  void Reset() { chunk_ = 0, used_ = 0; }

 private:
  static constexpr size_t kChunkWords = 1 << 13;
  std::vector<std::vector<uint8_t>*> marks_;  // by DDS id
  std::vector<std::unique_ptr<double[]>> chunks_;
  std::vector<size_t> caps_;  // words per chunk
  size_t chunk_ = 0, used_ = 0;
};

SyncEngine& EngineOf(Runtime& rt) {
  static const std::string key = "SyncFor#engine";
  auto* engine = dynamic_cast<SyncEngine*>(rt.context().loop_state(key));
  if (engine == nullptr) {
    auto fresh = std::make_unique<SyncEngine>();
    engine = fresh.get();
    rt.context().set_loop_state(key, std::move(fresh));
  }
  const size_t n = rt.context().dds_count();
  if (engine->params.size() < n) engine->params.resize(n);
  if (engine->shared.size() < n) engine->shared.resize(n);
  if (engine->take.size() < n) engine->take.resize(n, nullptr);
  if (engine->allowed.size() < n) engine->allowed.resize(n, nullptr);
  // Never shrinks: an emulating Invocation may have grown it to the emulated threads.
  if (engine->workers.size() < static_cast<size_t>(rt.threads()))
    engine->workers.resize(static_cast<size_t>(rt.threads()));
  for (Worker& w : engine->workers)
    if (w.copies.size() < n) w.copies.resize(n);
  return *engine;
}

class ParamHook : public AccessHook {
 public:
  ParamHook(SyncEngine& engine, bool hybrid) : engine_(engine), hybrid_(hybrid) {}
  std::byte* Access(DdsBase& dds, int64_t index, bool) override {
    const size_t offset = static_cast<size_t>(index) * dds.element_bytes();
    const uint64_t now = engine_.stamp;
    const uint32_t id = dds.id();
    if (const std::vector<uint8_t>* allowed = engine_.allowed[id];
        allowed != nullptr && (*allowed)[static_cast<size_t>(index)] == 0) [[unlikely]]
      throw UsageError("SyncFor parameter '" + dds.name() + "' element " + std::to_string(index) +
                       " accessed, but no body of this node accessed it during reconnaissance: "
                       "the loop's control flow is not static");
    if (hybrid_) {
      SharedCopy& s = *engine_.shared[id];
      if (s.stamp.load(std::memory_order_acquire) != now) {
        std::lock_guard<std::mutex> lock(s.mu);
        if (s.stamp.load(std::memory_order_relaxed) != now) {
          s.copy.Take(dds, now, engine_.take[id]);
          s.stamp.store(now, std::memory_order_release);
        }
      }
      return s.copy.data() + offset;
    }
    Worker* w = current_worker;
    if (w == nullptr)
      throw UsageError("SyncFor parameter '" + dds.name() +
                       "' accessed outside the loop's worker threads");
    Copy& c = w->copies[id];
    if (c.stamp != now) c.Take(dds, now, engine_.take[id]);
    return c.data() + offset;
  }

 private:
  SyncEngine& engine_;
  bool hybrid_;
};

class NotAParameterHook : public AccessHook {
 public:
  std::byte* Access(DdsBase& dds, int64_t index, bool) override {
    throw UsageError("DDS '" + dds.name() + "' element " + std::to_string(index) +
                     " accessed in a SyncFor body, but it is not a SyncFor parameter: declare "
                     "parameters with strads::Replicate(rt, v) before the loop, and read the "
                     "input through the batch span");
  }
};

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

// One SyncFor invocation.
class Invocation {
 public:
  Invocation(Runtime& rt, SyncEngine& engine, int64_t local_count, int64_t minibatch,
             FunctionRef<void(int64_t, int64_t)> body, SyncOption option, SyncSite site,
             SitePlan* plan)
      : rt_(rt),
        e_(engine),
        local_count_(local_count),
        minibatch_(minibatch),
        body_(body),
        option_(option),
        site_(site),
        threads_(rt.threads()),
        nodes_(rt.nodes()),
        me_(rt.node()),
        recon_(plan) {
    for (uint32_t d = 0; d < e_.params.size(); ++d)
      if (e_.params[d].declared) ids_.push_back(d);
    touched_.assign(ids_.size(), false);
    const SyncTopology topology = rt.context().sync_topology();
    if (topology != SyncTopology{nodes_, threads_}) {
      // Emulation (sync_for.h): this single node plays every (node, thread) worker in turn.
      virtual_ = true;
      nodes_ = topology.nodes;
      threads_ = topology.threads;
      const EvenSplit split(local_count_, nodes_);
      for (int p = 0; p < nodes_; ++p) virtual_begin_.push_back(split.begin(p));
      virtual_begin_.push_back(local_count_);
      if (e_.workers.size() < static_cast<size_t>(threads_)) {
        e_.workers.resize(static_cast<size_t>(threads_));
        for (Worker& w : e_.workers) w.copies.resize(rt.context().dds_count());
      }
    }
    for (int p = 0; p < nodes_; ++p) node_order_.push_back(p);
    if (!virtual_ && rt.context().inject_bug() == internal::InjectedBug::kAggregationOrder)
      std::reverse(node_order_.begin(), node_order_.end());
  }

  void Execute();

 private:
  // Mini-batches of node p, and the workers of node p active at clock c.
  int64_t Batches(int p) const { return batches_[p]; }
  int64_t Active(int p, int64_t c) const {
    return std::clamp<int64_t>(Batches(p) - c * threads_, 0, threads_);
  }
  int64_t ActiveWorkers(int64_t c) const {
    int64_t w = 0;
    for (int p = 0; p < nodes_; ++p) w += Active(p, c);
    return w;
  }
  int64_t ActiveNodes(int64_t c) const {
    int64_t n = 0;
    for (int p = 0; p < nodes_; ++p) n += Active(p, c) > 0;
    return n;
  }
  size_t Bytes(uint32_t d) const {
    return static_cast<size_t>(rt_.context().dds(d).size()) * rt_.context().dds(d).element_bytes();
  }
  size_t Scalars(uint32_t d) const { return Bytes(d) / ScalarBytes(e_.params[d].kind); }

  // Makes node p the one whose workers run and whose update is built (p == me_ unless emulating).
  void PlayNode(int p);
  void RunClock(int64_t c);
  // Whether parameter k travels as one delta per worker (custom aggregation, BSP and SSP).
  bool PerWorker(size_t k) const {
    return e_.params[ids_[k]].custom && option_.mode != SyncOption::Mode::kHybrid;
  }
  // How node p's deltas of parameter k travel: Units(k, p) units of UnitBytes(k) each, unit j
  // being the bytes at Offset(k, p, j) of the parameter. Without reconnaissance a unit is the
  // whole parameter; with it, a unit is one of the elements node p's bodies access.
  size_t Units(size_t k, int p) const { return plan_ ? plan_->need[k][p].size() : 1; }
  size_t UnitBytes(size_t k) const {
    return plan_ ? rt_.context().dds(ids_[k]).element_bytes() : Bytes(ids_[k]);
  }
  size_t UnitScalars(size_t k) const { return UnitBytes(k) / ScalarBytes(e_.params[ids_[k]].kind); }
  size_t Offset(size_t k, int p, size_t j) const {
    return plan_ ? static_cast<size_t>(plan_->need[k][p][j]) *
                       rt_.context().dds(ids_[k]).element_bytes()
                 : 0;
  }
  size_t PayloadBytes(size_t k, int p, int64_t active) const {
    return Units(k, p) * UnitBytes(k) * static_cast<size_t>(PerWorker(k) ? active : 1);
  }
  // This node's update of the clock just run (in e_.update): a presence byte per parameter,
  // padded to 8 bytes, then each present parameter's payload, padded to 8 bytes: the node sum
  // of the deltas, or (PerWorker) every active worker's delta in thread order.
  std::vector<std::byte>& NodeUpdate(int64_t c);
  // The payload of each parameter in node `source`'s update of clock c (null: absent).
  std::vector<const std::byte*> Parse(const std::byte* data, size_t size, int source,
                                      int64_t c) const;
  struct WorkerDelta {
    int node;
    const std::byte* block;  // the worker's units (see Units); null: zero deltas
  };
  // Calls the custom aggregation of parameter k on every element of `targets` (null: all),
  // with one delta per entry of `workers`, in their order.
  void ApplyCustom(size_t k, const std::vector<int64_t>* targets,
                   const std::vector<WorkerDelta>& workers);
  // Reconnaissance: which elements of each parameter each node's bodies access.
  void Plan();
  void ApplyBsp(int64_t c, const std::vector<std::span<const std::byte>>& updates);
  void ApplySsp(int source, int64_t c, const std::byte* data, size_t size);
  void ReceiveOneSsp(std::vector<int64_t>& applied);

  Runtime& rt_;
  SyncEngine& e_;
  int64_t local_count_, minibatch_;
  FunctionRef<void(int64_t, int64_t)> body_;
  SyncOption option_;
  SyncSite site_;
  int threads_, nodes_, me_;  // when emulating: the emulated ones; me_ the node being played
  bool virtual_ = false;      // emulating another topology on this one node of one thread
  std::vector<int64_t> virtual_begin_;  // emulated node p's data: [begin[p], begin[p + 1])
  // The order BSP sums node updates in: 0, 1, ... (STRADS_INJECT_BUG=aggregation-order
  // reverses it on a real multi-node run, a bug dual testing must catch).
  std::vector<int> node_order_;
  std::vector<uint32_t> ids_;  // declared parameters, by id
  std::vector<bool> touched_;  // per ids_ entry: updated by some node during this call
  std::vector<int64_t> batches_;
  SitePlan* recon_;           // this site's plan if the call asked for reconnaissance
  SitePlan* plan_ = nullptr;  // recon_ once it is valid for this call
};

void Invocation::PlayNode(int p) {
  me_ = p;
  for (size_t k = 0; k < ids_.size(); ++k) {
    e_.take[ids_[k]] = plan_ ? &plan_->need[k][p] : nullptr;
    e_.allowed[ids_[k]] = plan_ ? &plan_->mine[p][k] : nullptr;
  }
}

void Invocation::RunClock(int64_t c) {
  ++e_.stamp;
  const int64_t first = c * threads_;
  const int64_t mine = Batches(me_);
  if (virtual_) {
    // The emulated node me_'s threads one after another, on the driver thread.
    const int64_t base = virtual_begin_[me_], end = virtual_begin_[me_ + 1];
    for (int t = 0; t < threads_; ++t) {
      const int64_t m = first + t;
      if (m >= mine) break;
      WorkerScope scope(&e_.workers[static_cast<size_t>(t)]);
      body_(base + m * minibatch_, std::min(end, base + (m + 1) * minibatch_));
    }
    return;
  }
  rt_.context().pool().RunOnAll([&](int t) {
    const int64_t m = first + t;
    if (m >= mine) return;
    WorkerScope scope(&e_.workers[static_cast<size_t>(t)]);
    body_(m * minibatch_, std::min(local_count_, (m + 1) * minibatch_));
  });
}

std::vector<std::byte>& Invocation::NodeUpdate(int64_t c) {
  const int64_t active = Active(me_, c);
  const bool hybrid = option_.mode == SyncOption::Mode::kHybrid;
  // Which copies each parameter has from this clock, in thread order (null: not accessed).
  std::vector<std::vector<std::byte*>> copies(ids_.size());
  size_t total = Pad8(ids_.size());
  for (size_t k = 0; k < ids_.size(); ++k) {
    const uint32_t d = ids_[k];
    bool any = false;
    if (hybrid) {
      SharedCopy* s = e_.shared[d].get();
      if (active > 0 && s != nullptr && s->stamp.load() == e_.stamp) {
        copies[k].assign(1, s->copy.data());
        any = true;
      }
    } else {
      copies[k].assign(static_cast<size_t>(active), nullptr);
      for (int64_t t = 0; t < active; ++t) {
        Copy& copy = e_.workers[static_cast<size_t>(t)].copies[d];
        if (copy.stamp == e_.stamp) copies[k][static_cast<size_t>(t)] = copy.data(), any = true;
      }
    }
    if (!any)
      copies[k].clear();
    else
      total += Pad8(PayloadBytes(k, me_, active));
  }
  std::vector<std::byte>& buf = e_.update;
  buf.resize(total);
  std::memset(buf.data(), 0, Pad8(ids_.size()));
  size_t at = Pad8(ids_.size());
  for (size_t k = 0; k < ids_.size(); ++k) {
    if (copies[k].empty()) continue;
    buf[k] = std::byte{1};
    const uint32_t d = ids_[k];
    const Param& param = e_.params[d];
    const std::byte* base = rt_.context().dds(d).raw();
    const size_t units = Units(k, me_), ub = UnitBytes(k), us = UnitScalars(k);
    std::byte* out = buf.data() + at;
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      if (PerWorker(k)) {
        // Every active worker's delta, in thread order (zeros if it did not access d).
        for (size_t t = 0; t < copies[k].size(); ++t)
          for (size_t j = 0; j < units; ++j) {
            std::byte* to = out + (t * units + j) * ub;
            const size_t off = Offset(k, me_, j);
            if (copies[k][t] != nullptr)
              Sub<S>(to, copies[k][t] + off, base + off, us);
            else
              std::memset(to, 0, ub);
          }
      } else {
        // The sum of the deltas in thread order, starting from the first.
        bool first = true;
        for (std::byte* copy : copies[k]) {
          if (copy == nullptr) continue;
          for (size_t j = 0; j < units; ++j) {
            const size_t off = Offset(k, me_, j);
            if (first)
              Sub<S>(out + j * ub, copy + off, base + off, us);
            else
              AddSub<S>(out + j * ub, copy + off, base + off, us);
          }
          first = false;
        }
      }
    });
    at += Pad8(PayloadBytes(k, me_, active));
  }
  return buf;
}

std::vector<const std::byte*> Invocation::Parse(const std::byte* data, size_t size, int source,
                                                int64_t c) const {
  const int64_t active = Active(source, c);
  std::vector<const std::byte*> at(ids_.size(), nullptr);
  size_t pos = Pad8(ids_.size());
  if (size < pos) throw std::runtime_error("SyncFor: malformed update message");
  for (size_t k = 0; k < ids_.size(); ++k) {
    if (data[k] == std::byte{0}) continue;
    at[k] = data + pos;
    pos += Pad8(PayloadBytes(k, source, active));
    if (pos > size) throw std::runtime_error("SyncFor: malformed update message");
  }
  if (pos != size) throw std::runtime_error("SyncFor: malformed update message");
  return at;
}

void Invocation::ApplyCustom(size_t k, const std::vector<int64_t>* targets,
                             const std::vector<WorkerDelta>& workers) {
  const Param& param = e_.params[ids_[k]];
  DdsBase& dds = rt_.context().dds(ids_[k]);
  const size_t eb = dds.element_bytes(), w = workers.size();
  auto deltas = std::make_unique<double[]>((w * eb + sizeof(double) - 1) / sizeof(double) + 1);
  auto* dbytes = reinterpret_cast<std::byte*>(deltas.get());
  auto before = std::make_unique<double[]>((eb + sizeof(double) - 1) / sizeof(double));
  auto* bbytes = reinterpret_cast<std::byte*>(before.get());
  std::vector<size_t> cursor(nodes_, 0);
  std::vector<int64_t> pos(nodes_, -1);  // element i's unit in each node's deltas, or -1
  auto visit = [&](int64_t i) {
    for (int p = 0; p < nodes_; ++p) {
      if (plan_ == nullptr) {
        pos[p] = i;
        continue;
      }
      const std::vector<int64_t>& list = plan_->need[k][p];
      while (cursor[p] < list.size() && list[cursor[p]] < i) ++cursor[p];
      pos[p] =
          cursor[p] < list.size() && list[cursor[p]] == i ? static_cast<int64_t>(cursor[p]) : -1;
    }
    for (size_t j = 0; j < w; ++j) {
      const WorkerDelta& from = workers[j];
      if (from.block != nullptr && pos[from.node] >= 0)
        std::memcpy(dbytes + j * eb, from.block + static_cast<size_t>(pos[from.node]) * eb, eb);
      else
        std::memset(dbytes + j * eb, 0, eb);
    }
    std::memcpy(bbytes, dds.raw_element(i), eb);
    param.custom(bbytes, dbytes, w, dds.raw_element(i));
  };
  if (targets != nullptr) {
    for (int64_t i : *targets) visit(i);
  } else {
    for (int64_t i = 0; i < dds.size(); ++i) visit(i);
  }
}

void Invocation::ApplyBsp(int64_t c, const std::vector<std::span<const std::byte>>& updates) {
  const bool hybrid = option_.mode == SyncOption::Mode::kHybrid;
  const int64_t count = hybrid ? ActiveNodes(c) : ActiveWorkers(c);
  std::vector<std::vector<const std::byte*>> at(nodes_);  // [node][parameter]
  for (int p = 0; p < nodes_; ++p) at[p] = Parse(updates[p].data(), updates[p].size(), p, c);
  for (size_t k = 0; k < ids_.size(); ++k) {
    const uint32_t d = ids_[k];
    int present = 0, last = -1;
    for (int p = 0; p < nodes_; ++p)
      if (at[p][k] != nullptr) ++present, last = p;
    if (present == 0) continue;
    touched_[k] = true;
    const Param& param = e_.params[d];
    DdsBase& dds = rt_.context().dds(d);
    const size_t bytes = Bytes(d), n = Scalars(d);
    if (param.custom) {
      // Deltas in (node, thread) order; null (zeros) for workers that did not access d.
      std::vector<WorkerDelta> from;
      for (int p = 0; p < nodes_; ++p) {
        const int64_t workers = hybrid ? (Active(p, c) > 0 ? 1 : 0) : Active(p, c);
        for (int64_t t = 0; t < workers; ++t)
          from.push_back({p, at[p][k]
                                 ? at[p][k] + static_cast<size_t>(t) * Units(k, p) * UnitBytes(k)
                                 : nullptr});
      }
      ApplyCustom(k, plan_ ? &plan_->all[k] : nullptr, from);
      continue;
    }
    if (plan_ != nullptr) {
      // Element by element over the union of the nodes' elements; each node's deltas of
      // element i (if it has them) in node order, starting from the first.
      const size_t eb = dds.element_bytes(), us = UnitScalars(k);
      auto sum = std::make_unique<double[]>(eb / sizeof(float) + 1);
      auto* total = reinterpret_cast<std::byte*>(sum.get());
      std::vector<size_t> cursor(nodes_, 0);
      WithScalar(param.kind, [&](auto zero) {
        using S = decltype(zero);
        for (int64_t i : plan_->all[k]) {
          bool first = true;
          for (int p : node_order_) {
            const std::vector<int64_t>& list = plan_->need[k][p];
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
        if (e_.sum_bytes < bytes) {
          e_.sum = std::make_unique_for_overwrite<double[]>(bytes / sizeof(double) + 1);
          e_.sum_bytes = bytes;
        }
        auto* sum = reinterpret_cast<std::byte*>(e_.sum.get());
        bool first = true;
        for (int p : node_order_) {
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

void Invocation::ApplySsp(int source, int64_t c, const std::byte* data, size_t size) {
  const std::vector<const std::byte*> at = Parse(data, size, source, c);
  for (size_t k = 0; k < ids_.size(); ++k) {
    if (at[k] == nullptr) continue;
    touched_[k] = true;
    const uint32_t d = ids_[k];
    const Param& param = e_.params[d];
    const size_t units = Units(k, source), ub = UnitBytes(k);
    if (param.custom) {
      std::vector<WorkerDelta> from;
      for (int64_t t = 0; t < Active(source, c); ++t)
        from.push_back({source, at[k] + static_cast<size_t>(t) * units * ub});
      ApplyCustom(k, plan_ ? &plan_->need[k][source] : nullptr, from);
      continue;
    }
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      for (size_t j = 0; j < units; ++j)
        ApplyAverage<S>(rt_.context().dds(d).raw() + Offset(k, source, j), at[k] + j * ub,
                        UnitScalars(k), ActiveWorkers(c));
    });
  }
}

void Invocation::Plan() {
  SitePlan& plan = *recon_;
  plan.valid = false;
  // Runs node p's mini-batches with parameter accesses recorded: a bitmap per parameter.
  auto reconnoitre = [&](int p) {
    std::vector<std::vector<uint8_t>> marks(ids_.size());
    std::vector<std::vector<uint8_t>*> by_id(rt_.context().dds_count(), nullptr);
    for (size_t k = 0; k < ids_.size(); ++k) {
      marks[k].assign(static_cast<size_t>(rt_.context().dds(ids_[k]).size()), 0);
      by_id[ids_[k]] = &marks[k];
    }
    HookGuard guard(rt_);
    NotAParameterHook not_a_parameter;
    RecordHook record(by_id);
    for (uint32_t d = 0; d < rt_.context().dds_count(); ++d)
      rt_.context().dds(d).set_hook(&not_a_parameter);
    for (uint32_t d : ids_) rt_.context().dds(d).set_hook(&record);
    const int64_t base = virtual_ ? virtual_begin_[p] : 0;
    const int64_t end = virtual_ ? virtual_begin_[p + 1] : local_count_;
    for (int64_t m = 0; m < Batches(p); ++m) {
      record.Reset();
      body_(base + m * minibatch_, std::min(end, base + (m + 1) * minibatch_));
    }
    return marks;
  };
  auto list_of = [](const std::vector<uint8_t>& marks) {
    std::vector<int64_t> list;
    for (size_t i = 0; i < marks.size(); ++i)
      if (marks[i]) list.push_back(static_cast<int64_t>(i));
    return list;
  };
  plan.need.assign(ids_.size(), std::vector<std::vector<int64_t>>(nodes_));
  plan.mine.assign(nodes_, {});
  if (virtual_) {
    for (int p = 0; p < nodes_; ++p) {
      plan.mine[p] = reconnoitre(p);
      for (size_t k = 0; k < ids_.size(); ++k) plan.need[k][p] = list_of(plan.mine[p][k]);
    }
  } else {
    plan.mine[me_] = reconnoitre(me_);
    ByteWriter w;
    for (size_t k = 0; k < ids_.size(); ++k) w.PutVector(list_of(plan.mine[me_][k]));
    const auto all = rt_.context().collectives().AllGather(w.Take());
    for (int p = 0; p < nodes_; ++p) {
      ByteReader r(all[p]);
      for (size_t k = 0; k < ids_.size(); ++k) {
        plan.need[k][p] = r.GetVector<int64_t>();
        for (int64_t i : plan.need[k][p])
          if (i < 0 || i >= rt_.context().dds(ids_[k]).size())
            throw std::runtime_error("SyncFor: bad element index in a reconnaissance message");
      }
    }
  }
  plan.all.assign(ids_.size(), {});
  for (size_t k = 0; k < ids_.size(); ++k) {
    std::vector<uint8_t> any(static_cast<size_t>(rt_.context().dds(ids_[k]).size()), 0);
    for (int p = 0; p < nodes_; ++p)
      for (int64_t i : plan.need[k][p]) any[static_cast<size_t>(i)] = 1;
    plan.all[k] = list_of(any);
  }
  plan.ids = ids_;
  plan.local_count = local_count_;
  plan.minibatch = minibatch_;
  plan.topology = {nodes_, threads_};
  plan.valid = true;
}

void Invocation::ReceiveOneSsp(std::vector<int64_t>& applied) {
  Message m = DeliverNext(rt_.context().transport(), rt_.context().ordering(), Tag::kSyncFor,
                          rt_.options().timeout);
  if (m.source < 0 || m.source >= nodes_ || m.source == me_)
    throw std::runtime_error("SyncFor: SSP update from an unexpected node");
  ByteReader r(m.payload);
  const int64_t clock = r.Get<int64_t>();
  if (clock != applied[m.source])
    throw std::runtime_error("SyncFor: SSP update of clock " + std::to_string(clock) +
                             " from node " + std::to_string(m.source) + ", expected clock " +
                             std::to_string(applied[m.source]));
  ApplySsp(m.source, clock, m.payload.data() + sizeof(int64_t), m.payload.size() - sizeof(int64_t));
  ++applied[m.source];
}

void Invocation::Execute() {
  // 1. Parameters whose contents changed since all nodes last agreed: make them current.
  {
    std::vector<uint8_t> stale(ids_.size(), 0);
    for (size_t k = 0; k < ids_.size(); ++k) {
      const Param& p = e_.params[ids_[k]];
      stale[k] = p.synced_version != rt_.context().dds(ids_[k]).version();
    }
    // A plan is made again if anything it depends on changed on any node.
    const bool replan =
        recon_ != nullptr &&
        (!recon_->valid || recon_->ids != ids_ || recon_->local_count != local_count_ ||
         recon_->minibatch != minibatch_ || recon_->topology != SyncTopology{nodes_, threads_});
    ByteWriter w;
    w.PutVector(stale);
    w.Put<int64_t>((local_count_ + minibatch_ - 1) / minibatch_);
    w.Put<uint8_t>(replan ? 1 : 0);
    std::vector<uint8_t> any(ids_.size(), 0);
    bool any_replan = false;
    for (const auto& bytes : rt_.context().collectives().AllGather(w.Take())) {
      ByteReader r(bytes);
      const auto theirs = r.GetVector<uint8_t>();
      if (theirs.size() != ids_.size())
        throw UsageError("SyncFor at " + std::string(site_.file) + ":" +
                         std::to_string(site_.line) +
                         ": the nodes declared different SyncFor parameters");
      for (size_t k = 0; k < any.size(); ++k) any[k] |= theirs[k];
      batches_.push_back(r.Get<int64_t>());
      any_replan |= r.Get<uint8_t>() != 0;
    }
    if (virtual_) {
      batches_.clear();
      for (int p = 0; p < nodes_; ++p)
        batches_.push_back((virtual_begin_[p + 1] - virtual_begin_[p] + minibatch_ - 1) /
                           minibatch_);
    }
    for (size_t k = 0; k < ids_.size(); ++k)
      if (any[k]) ReplicateRaw(rt_, rt_.context().dds(ids_[k]));
    if (recon_ != nullptr) {
      if (any_replan) Plan();
      plan_ = recon_;
    }
  }
  PlayNode(me_);
  int64_t clocks = 0;
  for (int p = 0; p < nodes_; ++p)
    clocks = std::max(clocks, (Batches(p) + threads_ - 1) / threads_);

  // 2. The clocks.
  {
    HookGuard guard(rt_);  // the driver hook on every DDS again at the end, even on errors
    NotAParameterHook not_a_parameter;
    ParamHook hook(e_, option_.mode == SyncOption::Mode::kHybrid);
    for (uint32_t d = 0; d < rt_.context().dds_count(); ++d)
      rt_.context().dds(d).set_hook(&not_a_parameter);
    for (uint32_t d : ids_) {
      rt_.context().dds(d).set_hook(&hook);
      if (option_.mode == SyncOption::Mode::kHybrid && !e_.shared[d])
        e_.shared[d] = std::make_unique<SharedCopy>();
    }
    if (virtual_) {
      // Every emulated node's clock, one after another, then the BSP aggregation of them all.
      std::vector<std::vector<std::byte>> updates(static_cast<size_t>(nodes_));
      for (int64_t c = 0; c < clocks; ++c) {
        for (int p = 0; p < nodes_; ++p) {
          PlayNode(p);
          RunClock(c);
          updates[p] = NodeUpdate(c);
        }
        PlayNode(0);
        ApplyBsp(c, std::vector<std::span<const std::byte>>(updates.begin(), updates.end()));
      }
    } else if (option_.mode != SyncOption::Mode::kSsp) {
      for (int64_t c = 0; c < clocks; ++c) {
        RunClock(c);
        std::vector<std::byte>& update = NodeUpdate(c);
        if (nodes_ == 1) {
          ApplyBsp(c, {std::span<const std::byte>(update)});
        } else {
          const auto all = rt_.context().collectives().AllGather(update);
          ApplyBsp(c, std::vector<std::span<const std::byte>>(all.begin(), all.end()));
        }
      }
    } else {
      std::vector<int64_t> applied(nodes_, 0);  // clocks of each node applied here
      auto min_others = [&] {
        int64_t m = clocks;
        for (int p = 0; p < nodes_; ++p)
          if (p != me_) m = std::min(m, applied[p]);
        return m;
      };
      const int64_t s = option_.staleness;
      for (int64_t c = 0; c < clocks; ++c) {
        // Clock c needs every node's updates of clocks <= c - s - 1: c - s of them.
        while (min_others() < c - s) ReceiveOneSsp(applied);
        // Updates that have already arrived are applied too (the reads may see them): how
        // many have is a matter of timing, hence a choice of the seam at every poll.
        while (nodes_ > 1 &&
               rt_.context().ordering().Choose(
                   ChoicePoint::kSspPoll,
                   rt_.context().transport().Poll(kAnySource, Tag::kSyncFor) ? 1 : 0) != 0)
          ReceiveOneSsp(applied);
        RunClock(c);
        const std::vector<std::byte>& update = NodeUpdate(c);
        ApplySsp(me_, c, update.data(), update.size());
        ++applied[me_];
        if (nodes_ > 1) {
          ByteWriter w;
          w.Put<int64_t>(c);
          w.PutRaw(update.data(), update.size());
          std::vector<std::byte> message = w.Take();
          for (int p = 0; p < nodes_; ++p)
            if (p != me_) rt_.context().transport().Send(p, Tag::kSyncFor, message);
        }
      }
      while (min_others() < clocks) ReceiveOneSsp(applied);
      // Updates were applied in different orders on different nodes: take the owners' values.
      for (size_t k = 0; k < ids_.size(); ++k)
        if (touched_[k]) ReplicateRaw(rt_, rt_.context().dds(ids_[k]));
    }
  }
  for (size_t k = 0; k < ids_.size(); ++k) {
    DdsBase& dds = rt_.context().dds(ids_[k]);
    if (touched_[k]) dds.bump_version();
    e_.params[ids_[k]].synced_version = dds.version();
  }
}

}  // namespace

void DeclareSyncParameter(Runtime& rt, DdsBase& v, ScalarKind kind, RawAggregation custom) {
  SyncEngine& engine = EngineOf(rt);
  Param& p = engine.params.at(v.id());
  if (!p.declared) {
    p.declared = true;
    p.synced_version = ~uint64_t{0};
  }
  p.kind = kind;
  if (custom) p.custom = std::move(custom);
}

void ReplicateRaw(Runtime& rt, DdsBase& v) {
  std::vector<std::byte> mine(v.raw_element(v.owned_begin()), v.raw_element(v.owned_end()));
  const auto all = rt.context().collectives().AllGather(std::move(mine));
  for (int p = 0; p < rt.nodes(); ++p) {
    if (p == rt.node()) continue;
    const int64_t b = v.owners().begin(p), e = v.owners().end(p);
    const size_t bytes = static_cast<size_t>(e - b) * v.element_bytes();
    if (all[p].size() != bytes) throw std::runtime_error("Replicate: message of the wrong size");
    if (bytes != 0) std::memcpy(v.raw_element(b), all[p].data(), bytes);
  }
  SyncEngine& engine = EngineOf(rt);
  if (v.id() < engine.params.size() && engine.params[v.id()].declared)
    engine.params[v.id()].synced_version = v.version();
}

void RunSyncFor(Runtime& rt, DdsBase& data, int64_t local_count, int64_t minibatch,
                FunctionRef<void(int64_t, int64_t)> run, SyncOption option, bool reconnaissance,
                SyncSite site) {
  const std::string where = std::string(site.file) + ":" + std::to_string(site.line);
  SyncEngine& engine = EngineOf(rt);
  if (rt.options().test_mode && option.mode != SyncOption::Mode::kBsp) {
    // SSP and Hybrid results depend on timing: no serial execution is equivalent to them.
    if (rt.leader() && engine.noted_test_mode.insert(where).second)
      std::fprintf(stderr, "strads: test mode: SyncFor at %s runs %s as BSP\n", where.c_str(),
                   option.mode == SyncOption::Mode::kSsp
                       ? ("SSP(" + std::to_string(option.staleness) + ")").c_str()
                       : "Hybrid");
    option = BSP();
  }
  if (const SyncTopology topology = rt.context().sync_topology();
      topology != SyncTopology{rt.nodes(), rt.threads()} && (rt.nodes() != 1 || rt.threads() != 1))
    throw CollectiveUsageError(
        "SyncFor at " + where + ": this run has " + std::to_string(rt.nodes()) + " node(s) of " +
        std::to_string(rt.threads()) + " thread(s), but " + rt.options().dual_in +
        " was written for " + std::to_string(topology.nodes) + "x" +
        std::to_string(topology.threads) + " workers: run with --nodes " +
        std::to_string(topology.nodes) + " --threads " + std::to_string(topology.threads) +
        ", or on one node of one thread");
  if (engine.params.at(data.id()).declared)
    throw UsageError("SyncFor at " + where + ": the input '" + data.name() +
                     "' is also a SyncFor parameter");
  if (minibatch < 1)
    throw UsageError("SyncFor at " + where + ": mini-batch size " + std::to_string(minibatch) +
                     " must be at least 1");
  if (option.mode == SyncOption::Mode::kSsp && option.staleness < 0)
    throw UsageError("SyncFor at " + where + ": SSP staleness " + std::to_string(option.staleness) +
                     " must be >= 0");
  // Hybrid's lock-free updates are data races: no log of ordering decisions can reproduce them.
  if (option.mode == SyncOption::Mode::kHybrid &&
      std::string(rt.context().ordering().mode()) != "live")
    throw CollectiveUsageError("SyncFor at " + where + ": Hybrid cannot be " +
                               rt.context().ordering().mode() +
                               "ed: its lock-free updates inside a node are data races that no "
                               "ordering log captures; use BSP or SSP(s) for a recorded run");
  uint64_t& invocation = engine.invocations[where];
  const OperatorSite op{"SyncFor", site.file, site.line, invocation};
  rt.context().BeginOperator(op);
  SitePlan* plan = nullptr;
  if (reconnaissance) {
    const std::string key = "SyncFor-RE@" + where + "#" + std::to_string(data.id());
    plan = dynamic_cast<SitePlan*>(rt.context().loop_state(key));
    if (plan == nullptr) {
      auto fresh = std::make_unique<SitePlan>();
      plan = fresh.get();
      rt.context().set_loop_state(key, std::move(fresh));
    }
  }
  Invocation(rt, engine, local_count, minibatch, run, option, site, plan).Execute();
  ++invocation;
  rt.context().EndOperator(op);
  if (DualTrace* dual = rt.context().dual()) {
    std::vector<DdsBase*> params;
    for (uint32_t d = 0; d < engine.params.size(); ++d)
      if (engine.params[d].declared) params.push_back(&rt.context().dds(d));
    const uint64_t state = Checksum(rt, params);  // collective
    dual->RecordSyncFor(where, state);
  }
}

}  // namespace internal
}  // namespace strads
