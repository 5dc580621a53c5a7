// The data-parallel engine behind SyncFor (sync_for.h).
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "strads/bytes.h"
#include "strads/errors.h"
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
  void Take(DdsBase& dds, uint64_t now) {
    const size_t want = static_cast<size_t>(dds.size()) * dds.element_bytes();
    if (bytes != want || !storage) {
      storage = std::make_unique_for_overwrite<double[]>((want + sizeof(double) - 1) /
                                                         sizeof(double));
      bytes = want;
    }
    if (want != 0) std::memcpy(data(), dds.raw(), want);
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
class SyncEngine : public LoopState {
 public:
  std::vector<Param> params;  // by DDS id
  std::vector<Worker> workers;
  std::vector<std::unique_ptr<SharedCopy>> shared;  // by DDS id (Hybrid)
  std::map<std::string, uint64_t> invocations;
  uint64_t stamp = 0;  // bumped every clock
};

SyncEngine& EngineOf(Runtime& rt) {
  static const std::string key = "SyncFor#engine";
  auto* engine = dynamic_cast<SyncEngine*>(rt.loop_state(key));
  if (engine == nullptr) {
    auto fresh = std::make_unique<SyncEngine>();
    engine = fresh.get();
    rt.set_loop_state(key, std::move(fresh));
  }
  const size_t n = rt.dds_count();
  if (engine->params.size() < n) engine->params.resize(n);
  if (engine->shared.size() < n) engine->shared.resize(n);
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
    if (hybrid_) {
      SharedCopy& s = *engine_.shared[dds.id()];
      if (s.stamp.load(std::memory_order_acquire) != now) {
        std::lock_guard<std::mutex> lock(s.mu);
        if (s.stamp.load(std::memory_order_relaxed) != now) {
          s.copy.Take(dds, now);
          s.stamp.store(now, std::memory_order_release);
        }
      }
      return s.copy.data() + offset;
    }
    Worker* w = current_worker;
    if (w == nullptr)
      throw UsageError("SyncFor parameter '" + dds.name() +
                       "' accessed outside the loop's worker threads");
    Copy& c = w->copies[dds.id()];
    if (c.stamp != now) c.Take(dds, now);
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

// Restores the driver hook on every DDS when SyncFor ends, normally or not.
class HookGuard {
 public:
  explicit HookGuard(Runtime& rt) : rt_(rt) {}
  ~HookGuard() {
    for (uint32_t d = 0; d < rt_.dds_count(); ++d) rt_.dds(d).set_hook(rt_.driver_hook());
  }

 private:
  Runtime& rt_;
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

// Copies a byte range into a buffer aligned for doubles.
std::unique_ptr<double[]> Aligned(const std::byte* data, size_t bytes) {
  auto buf = std::make_unique_for_overwrite<double[]>((bytes + sizeof(double) - 1) / sizeof(double));
  if (bytes != 0) std::memcpy(buf.get(), data, bytes);
  return buf;
}

// One SyncFor invocation.
class Invocation {
 public:
  Invocation(Runtime& rt, SyncEngine& engine, int64_t local_count, int64_t minibatch,
      FunctionRef<void(int64_t, int64_t)> body, SyncOption option, SyncSite site)
      : rt_(rt),
        e_(engine),
        local_count_(local_count),
        minibatch_(minibatch),
        body_(body),
        option_(option),
        site_(site),
        threads_(rt.threads()),
        nodes_(rt.nodes()),
        me_(rt.node()) {
    for (uint32_t d = 0; d < e_.params.size(); ++d)
      if (e_.params[d].declared) ids_.push_back(d);
    touched_.assign(ids_.size(), false);
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
    return static_cast<size_t>(rt_.dds(d).size()) * rt_.dds(d).element_bytes();
  }
  size_t Scalars(uint32_t d) const { return Bytes(d) / ScalarBytes(e_.params[d].kind); }

  void RunClock(int64_t c);
  // This node's update of the clock just run: [for each parameter: present, payload].
  std::vector<std::byte> NodeUpdate(int64_t c);
  // Applies updates. `updates[k]` is node `sources[k]`'s, or null (nothing from it).
  void ApplyBsp(int64_t c, const std::vector<std::vector<std::byte>>& updates);
  void ApplySsp(int source, int64_t c, const std::vector<std::byte>& update);
  void ReceiveOneSsp(std::vector<int64_t>& applied);

  Runtime& rt_;
  SyncEngine& e_;
  int64_t local_count_, minibatch_;
  FunctionRef<void(int64_t, int64_t)> body_;
  SyncOption option_;
  SyncSite site_;
  int threads_, nodes_, me_;
  std::vector<uint32_t> ids_;  // declared parameters, by id
  std::vector<bool> touched_;  // per ids_ entry: updated by some node during this call
  std::vector<int64_t> batches_;
};

void Invocation::RunClock(int64_t c) {
  ++e_.stamp;
  const int64_t first = c * threads_;
  const int64_t mine = Batches(me_);
  rt_.pool().RunOnAll([&](int t) {
    const int64_t m = first + t;
    if (m >= mine) return;
    WorkerScope scope(&e_.workers[static_cast<size_t>(t)]);
    body_(m * minibatch_, std::min(local_count_, (m + 1) * minibatch_));
  });
}

std::vector<std::byte> Invocation::NodeUpdate(int64_t c) {
  ByteWriter w;
  const int64_t active = Active(me_, c);
  const bool hybrid = option_.mode == SyncOption::Mode::kHybrid;
  for (size_t k = 0; k < ids_.size(); ++k) {
    const uint32_t d = ids_[k];
    const Param& param = e_.params[d];
    const std::byte* base = rt_.dds(d).raw();
    const size_t bytes = Bytes(d), n = Scalars(d);
    // The copies accessed this clock, in thread order.
    std::vector<std::byte*> copies(static_cast<size_t>(active), nullptr);
    bool any = false;
    if (hybrid) {
      SharedCopy* s = e_.shared[d].get();
      if (active > 0 && s != nullptr && s->stamp.load() == e_.stamp) {
        copies.assign(1, s->copy.data());
        any = true;
      }
    } else {
      for (int64_t t = 0; t < active; ++t) {
        Copy& copy = e_.workers[static_cast<size_t>(t)].copies[d];
        if (copy.stamp == e_.stamp) copies[static_cast<size_t>(t)] = copy.data(), any = true;
      }
    }
    w.Put<uint8_t>(any ? 1 : 0);
    if (!any) continue;
    std::vector<std::byte> out;
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      if (param.custom && !hybrid) {
        // Every active worker's delta, in thread order (zeros if it did not access d).
        out.assign(bytes * static_cast<size_t>(active), std::byte{0});
        for (int64_t t = 0; t < active; ++t)
          if (copies[static_cast<size_t>(t)] != nullptr)
            Sub<S>(out.data() + bytes * static_cast<size_t>(t), copies[static_cast<size_t>(t)],
                   base, n);
      } else {
        // The sum of the deltas in thread order, starting from the first.
        out.resize(bytes);
        bool first = true;
        for (std::byte* copy : copies) {
          if (copy == nullptr) continue;
          if (first)
            Sub<S>(out.data(), copy, base, n), first = false;
          else
            AddSub<S>(out.data(), copy, base, n);
        }
      }
    });
    w.PutRaw(out.data(), out.size());
  }
  return w.Take();
}

void Invocation::ApplyBsp(int64_t c, const std::vector<std::vector<std::byte>>& updates) {
  const bool hybrid = option_.mode == SyncOption::Mode::kHybrid;
  const int64_t count = hybrid ? ActiveNodes(c) : ActiveWorkers(c);
  // Where each node's payload of each parameter starts (null: absent).
  std::vector<std::vector<const std::byte*>> at(ids_.size(),
                                                std::vector<const std::byte*>(nodes_, nullptr));
  for (int p = 0; p < nodes_; ++p) {
    ByteReader r(updates[p]);
    const int64_t active = Active(p, c);
    for (size_t k = 0; k < ids_.size(); ++k) {
      if (r.Get<uint8_t>() == 0) continue;
      const uint32_t d = ids_[k];
      const bool per_worker = e_.params[d].custom && !hybrid;
      at[k][p] = r.Skip(Bytes(d) * static_cast<size_t>(per_worker ? active : 1));
    }
    if (r.remaining() != 0) throw std::runtime_error("SyncFor: malformed update message");
  }
  for (size_t k = 0; k < ids_.size(); ++k) {
    const uint32_t d = ids_[k];
    if (std::all_of(at[k].begin(), at[k].end(), [](const std::byte* b) { return b == nullptr; }))
      continue;
    touched_[k] = true;
    const Param& param = e_.params[d];
    DdsBase& dds = rt_.dds(d);
    const size_t bytes = Bytes(d), n = Scalars(d), eb = dds.element_bytes();
    if (param.custom) {
      // deltas per element, in (node, thread) order; zeros for workers that did not access d.
      std::vector<std::unique_ptr<double[]>> owned;
      std::vector<const std::byte*> from;  // per worker: its delta array or null
      for (int p = 0; p < nodes_; ++p) {
        const int64_t workers = hybrid ? (Active(p, c) > 0 ? 1 : 0) : Active(p, c);
        for (int64_t t = 0; t < workers; ++t) {
          const std::byte* src = at[k][p] ? at[k][p] + bytes * static_cast<size_t>(t) : nullptr;
          if (src != nullptr) {
            owned.push_back(Aligned(src, bytes));
            src = reinterpret_cast<const std::byte*>(owned.back().get());
          }
          from.push_back(src);
        }
      }
      const size_t w = from.size();
      auto deltas = std::make_unique<double[]>((w * eb + sizeof(double) - 1) / sizeof(double) + 1);
      auto* dbytes = reinterpret_cast<std::byte*>(deltas.get());
      auto before = std::make_unique<double[]>((eb + sizeof(double) - 1) / sizeof(double));
      auto* bbytes = reinterpret_cast<std::byte*>(before.get());
      for (int64_t i = 0; i < dds.size(); ++i) {
        const size_t off = static_cast<size_t>(i) * eb;
        for (size_t k2 = 0; k2 < w; ++k2) {
          if (from[k2] != nullptr)
            std::memcpy(dbytes + k2 * eb, from[k2] + off, eb);
          else
            std::memset(dbytes + k2 * eb, 0, eb);
        }
        std::memcpy(bbytes, dds.raw_element(i), eb);
        param.custom(bbytes, dbytes, w, dds.raw_element(i));
      }
      continue;
    }
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      std::unique_ptr<double[]> sum;
      for (int p = 0; p < nodes_; ++p) {
        if (at[k][p] == nullptr) continue;
        if (!sum) {
          sum = Aligned(at[k][p], bytes);
        } else {
          auto aligned = Aligned(at[k][p], bytes);
          Add<S>(reinterpret_cast<std::byte*>(sum.get()),
                 reinterpret_cast<const std::byte*>(aligned.get()), n);
        }
      }
      ApplyAverage<S>(dds.raw(), reinterpret_cast<const std::byte*>(sum.get()), n, count);
    });
  }
}

void Invocation::ApplySsp(int source, int64_t c, const std::vector<std::byte>& update) {
  ByteReader r(update);
  const int64_t active = Active(source, c);
  for (size_t k = 0; k < ids_.size(); ++k) {
    if (r.Get<uint8_t>() == 0) continue;
    const uint32_t d = ids_[k];
    const Param& param = e_.params[d];
    DdsBase& dds = rt_.dds(d);
    const size_t bytes = Bytes(d), n = Scalars(d), eb = dds.element_bytes();
    touched_[k] = true;
    if (param.custom) {
      auto all = Aligned(r.Skip(bytes * static_cast<size_t>(active)),
                         bytes * static_cast<size_t>(active));
      const auto* src = reinterpret_cast<const std::byte*>(all.get());
      const size_t w = static_cast<size_t>(active);
      auto deltas = std::make_unique<double[]>((w * eb + sizeof(double) - 1) / sizeof(double) + 1);
      auto* dbytes = reinterpret_cast<std::byte*>(deltas.get());
      auto before = std::make_unique<double[]>((eb + sizeof(double) - 1) / sizeof(double));
      auto* bbytes = reinterpret_cast<std::byte*>(before.get());
      for (int64_t i = 0; i < dds.size(); ++i) {
        const size_t off = static_cast<size_t>(i) * eb;
        for (size_t t = 0; t < w; ++t) std::memcpy(dbytes + t * eb, src + t * bytes + off, eb);
        std::memcpy(bbytes, dds.raw_element(i), eb);
        param.custom(bbytes, dbytes, w, dds.raw_element(i));
      }
      continue;
    }
    auto sum = Aligned(r.Skip(bytes), bytes);
    WithScalar(param.kind, [&](auto zero) {
      using S = decltype(zero);
      ApplyAverage<S>(dds.raw(), reinterpret_cast<const std::byte*>(sum.get()), n,
                      ActiveWorkers(c));
    });
  }
  if (r.remaining() != 0) throw std::runtime_error("SyncFor: malformed SSP update message");
}

void Invocation::ReceiveOneSsp(std::vector<int64_t>& applied) {
  Message m = DeliverNext(rt_.transport(), rt_.ordering(), Tag::kSyncFor, rt_.options().timeout);
  if (m.source < 0 || m.source >= nodes_ || m.source == me_)
    throw std::runtime_error("SyncFor: SSP update from an unexpected node");
  ByteReader r(m.payload);
  const int64_t clock = r.Get<int64_t>();
  if (clock != applied[m.source])
    throw std::runtime_error("SyncFor: SSP update of clock " + std::to_string(clock) +
                             " from node " + std::to_string(m.source) + ", expected clock " +
                             std::to_string(applied[m.source]));
  std::vector<std::byte> rest(m.payload.begin() + sizeof(int64_t), m.payload.end());
  ApplySsp(m.source, clock, rest);
  ++applied[m.source];
}

void Invocation::Execute() {
  // 1. Parameters whose contents changed since all nodes last agreed: make them current.
  {
    std::vector<uint8_t> stale(ids_.size(), 0);
    for (size_t k = 0; k < ids_.size(); ++k) {
      const Param& p = e_.params[ids_[k]];
      stale[k] = p.synced_version != rt_.dds(ids_[k]).version();
    }
    ByteWriter w;
    w.PutVector(stale);
    w.Put<int64_t>((local_count_ + minibatch_ - 1) / minibatch_);
    std::vector<uint8_t> any(ids_.size(), 0);
    for (const auto& bytes : rt_.collectives().AllGather(w.Take())) {
      ByteReader r(bytes);
      const auto theirs = r.GetVector<uint8_t>();
      if (theirs.size() != ids_.size())
        throw UsageError("SyncFor at " + std::string(site_.file) + ":" +
                         std::to_string(site_.line) +
                         ": the nodes declared different SyncFor parameters");
      for (size_t k = 0; k < any.size(); ++k) any[k] |= theirs[k];
      batches_.push_back(r.Get<int64_t>());
    }
    for (size_t k = 0; k < ids_.size(); ++k)
      if (any[k]) ReplicateRaw(rt_, rt_.dds(ids_[k]));
  }
  int64_t clocks = 0;
  for (int p = 0; p < nodes_; ++p)
    clocks = std::max(clocks, (Batches(p) + threads_ - 1) / threads_);

  // 2. The clocks.
  {
    HookGuard guard(rt_);
    NotAParameterHook not_a_parameter;
    ParamHook hook(e_, option_.mode == SyncOption::Mode::kHybrid);
    for (uint32_t d = 0; d < rt_.dds_count(); ++d) rt_.dds(d).set_hook(&not_a_parameter);
    for (uint32_t d : ids_) {
      rt_.dds(d).set_hook(&hook);
      if (option_.mode == SyncOption::Mode::kHybrid && !e_.shared[d])
        e_.shared[d] = std::make_unique<SharedCopy>();
    }
    if (option_.mode != SyncOption::Mode::kSsp) {
      for (int64_t c = 0; c < clocks; ++c) {
        RunClock(c);
        ApplyBsp(c, rt_.collectives().AllGather(NodeUpdate(c)));
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
        if (nodes_ > 1) {
          // Which clocks' values the reads of this clock see (replay may ask for more).
          const auto seen = static_cast<int64_t>(rt_.ordering().Choose(
              ChoicePoint::kSspReadClock, static_cast<uint64_t>(min_others())));
          while (min_others() < std::min(seen, clocks)) ReceiveOneSsp(applied);
        }
        RunClock(c);
        std::vector<std::byte> update = NodeUpdate(c);
        ApplySsp(me_, c, update);
        ++applied[me_];
        if (nodes_ > 1) {
          ByteWriter w;
          w.Put<int64_t>(c);
          w.PutRaw(update.data(), update.size());
          std::vector<std::byte> message = w.Take();
          for (int p = 0; p < nodes_; ++p)
            if (p != me_) rt_.transport().Send(p, Tag::kSyncFor, message);
        }
      }
      while (min_others() < clocks) ReceiveOneSsp(applied);
      // Updates were applied in different orders on different nodes: take the owners' values.
      for (size_t k = 0; k < ids_.size(); ++k)
        if (touched_[k]) ReplicateRaw(rt_, rt_.dds(ids_[k]));
    }
  }
  for (size_t k = 0; k < ids_.size(); ++k) {
    DdsBase& dds = rt_.dds(ids_[k]);
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
  const auto all = rt.collectives().AllGather(std::move(mine));
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
  (void)data;
  (void)reconnaissance;
  const std::string where = std::string(site.file) + ":" + std::to_string(site.line);
  if (minibatch < 1)
    throw UsageError("SyncFor at " + where + ": mini-batch size " + std::to_string(minibatch) +
                     " must be at least 1");
  if (option.mode == SyncOption::Mode::kSsp && option.staleness < 0)
    throw UsageError("SyncFor at " + where + ": SSP staleness " +
                     std::to_string(option.staleness) + " must be >= 0");
  SyncEngine& engine = EngineOf(rt);
  uint64_t& invocation = engine.invocations[where];
  const OperatorSite op{"SyncFor", site.file, site.line, invocation};
  rt.ordering().OperatorBegin(op);
  Invocation(rt, engine, local_count, minibatch, run, option, site).Execute();
  ++invocation;
  rt.ordering().OperatorEnd(op);
}

}  // namespace internal
}  // namespace strads
