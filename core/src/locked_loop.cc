#include "locked_loop.h"

#include <algorithm>
#include <cstring>

#include "access_check.h"
#include "accumulators.h"
#include "memory_report.h"
#include "node_context.h"
#include "reconnaissance.h"
#include "strads/errors.h"
#include "strads/internal/dds.h"
#include "strads/seam/ordered_locks.h"

namespace strads {

LockedLoop& LockedLoop::At(Runtime& rt, internal::LoopSite site, int64_t first, int64_t last) {
  const std::string key =
      std::string("AsyncFor/locks@") + site.file + ":" + std::to_string(site.line);
  auto* loop = dynamic_cast<LockedLoop*>(rt.context().loop_state(key));
  if (loop == nullptr || site.dynamic || loop->first_ != first || loop->last_ != last) {
    auto fresh = std::make_unique<LockedLoop>();
    fresh->file_ = site.file;
    fresh->line_ = site.line;
    if (loop != nullptr) fresh->invocations_ = loop->invocations_;  // the site's count goes on
    fresh->first_ = first;
    fresh->last_ = last;
    loop = fresh.get();
    rt.context().set_loop_state(key, std::move(fresh));
  }
  return *loop;
}

void LockedLoop::Prepare(Runtime& rt, Body body) {
  if (prepared_ || last_ < first_) return;
  Plan(rt, Reconnoitre(rt, file_ + ":" + std::to_string(line_), first_, last_, body));
}

void LockedLoop::Plan(Runtime& rt, ReconResult recon) {
  if (prepared_ || last_ < first_) return;
  share_begin_ = recon.share_begin;
  share_count_ = recon.share_count;
  written_dds_ = recon.written;
  read_only_dds_ = recon.read_only;
  const int nodes = rt.nodes(), me = rt.node();

  // Locks per body; what this node needs from others.
  std::vector<uint64_t> lock_offsets(1, 0);  // body k's: lock_keys[offsets[k] .. offsets[k + 1])
  digests_ = std::move(recon.digests);
  std::vector<std::vector<ElementRef>> need_written(nodes), need_read(nodes);
  std::vector<ElementRef> lock_keys;  // body_locks_ as elements, until the locks exist
  for (int64_t k = 0; k < share_count_; ++k) {
    const size_t begin = lock_keys.size();
    for (const PackedTouch& touch : recon.of_body(k)) {
      const ElementRef e{touch.dds(), touch.index()};
      const int owner = rt.context().dds(e.dds).owner(e.index);
      if (recon.flags[e.dds] & 2) {
        lock_keys.push_back(e);
        if (owner != me) need_written[owner].push_back(e);
      } else if (owner != me) {
        need_read[owner].push_back(e);
      }
    }
    std::sort(lock_keys.begin() + static_cast<long>(begin), lock_keys.end());
    lock_keys.erase(std::unique(lock_keys.begin() + static_cast<long>(begin), lock_keys.end()),
                    lock_keys.end());
    lock_offsets.push_back(lock_keys.size());
  }
  // Tell each owner what to serve; remember the written replicas for the deltas.
  auto exchange = [&](std::vector<std::vector<ElementRef>>& need) {
    std::vector<std::vector<std::byte>> out(nodes);
    for (int p = 0; p < nodes; ++p) {
      std::sort(need[p].begin(), need[p].end());
      need[p].erase(std::unique(need[p].begin(), need[p].end()), need[p].end());
      ByteWriter w;
      w.PutVector(need[p]);
      out[p] = w.Take();
    }
    std::vector<std::vector<ElementRef>> serve(nodes);
    auto in = rt.context().collectives().AllToAll(std::move(out));
    for (int p = 0; p < nodes; ++p) serve[p] = ByteReader(in[p]).GetVector<ElementRef>();
    return serve;
  };
  serve_written_ = exchange(need_written);
  serve_read_ = exchange(need_read);
  for (const auto& list : need_written) replica_.insert(replica_.end(), list.begin(), list.end());
  std::vector<ElementRef> mine_touched;
  for (const ElementRef& e : lock_keys)
    if (rt.context().dds(e.dds).owner(e.index) == me) mine_touched.push_back(e);
  std::sort(mine_touched.begin(), mine_touched.end());
  mine_touched.erase(std::unique(mine_touched.begin(), mine_touched.end()), mine_touched.end());
  owned_touched_ = mine_touched;
  for (const auto& list : serve_written_)
    owned_touched_.insert(owned_touched_.end(), list.begin(), list.end());
  std::sort(owned_touched_.begin(), owned_touched_.end());
  owned_touched_.erase(std::unique(owned_touched_.begin(), owned_touched_.end()),
                       owned_touched_.end());
  for (const ElementRef& e : owned_touched_)
    touched_here_.push_back(std::binary_search(mine_touched.begin(), mine_touched.end(), e));

  locks_.resize(rt.context().dds_count());
  lock_counts_.assign(rt.context().dds_count(), 0);
  for (uint32_t d : written_dds_) {
    lock_counts_[d] = static_cast<size_t>(rt.context().dds(d).size());
    locks_[d] = std::make_unique<SeamLock[]>(lock_counts_[d]);
  }
  body_locks_.reserve(lock_keys.size());
  for (const ElementRef& e : lock_keys) body_locks_.push_back({&locks_[e.dds][e.index], LockId(e)});
  body_bounds_.clear();
  body_bounds_.reserve(lock_offsets.size());
  for (uint64_t offset : lock_offsets) body_bounds_.push_back(body_locks_.data() + offset);
  prepared_ = true;
}

size_t LockedLoop::HeldBytes() const {
  size_t bytes = HeapBytes(body_bounds_) + HeapBytes(body_locks_) + HeapBytes(replica_) +
                 HeapBytes(owned_touched_) + HeapBytes(touched_here_) + HeapBytes(owned_start_) +
                 HeapBytes(serve_written_) + HeapBytes(serve_read_) + HeapBytes(digests_) +
                 HeapBytes(thread_runs_);
  for (uint32_t d : written_dds_) bytes += lock_counts_[d] * sizeof(SeamLock);
  return bytes;
}

template <class Take, class Give, class Gave>
void LockedLoop::RunLocked(int64_t begin, int64_t end, Body body, const Take& take,
                           const Give& give, const Gave& gave) {
  // The tables in locals: a member read through `this` after a lock's atomic instruction would
  // wait for it (the body call keeps the compiler from assuming they did not change). And few
  // values kept across the body call, so that the ordered protocol's own (the grant, the
  // thread's bits, the check's bound) do not push the loop's into memory: pointers to each
  // body's first lock, the body's lock range read again after the call.
  const LockRef* const* bounds = body_bounds_.data() + begin;
  const LockRef* const* const bounds_end = body_bounds_.data() + end;
  for (int64_t task = first_ + share_begin_ + begin; bounds != bounds_end; ++bounds, ++task) {
    const LockRef* const hi = bounds[1];
    for (const LockRef* l = bounds[0]; l != hi; ++l) take(*l->lock, l->id, task);
    body(task);
    const LockRef* const lo = bounds[0];
    for (const LockRef* l = bounds[1]; l != lo; --l) give(*l[-1].lock, l[-1].id);
    gave();
  }
}

void LockedLoop::Execute(Runtime& rt, Body unchecked_body) {
  if (last_ < first_) return;
  // A checked execution runs every body between Begin and Verify, with the hook on every DDS
  // the loop touches; the others with no hook.
  const bool checked = ChecksRound(rt.options().access_check, executions_, 0);
  AccessCheckHook check(rt, file_ + ":" + std::to_string(line_), invocations_);
  auto checked_body = [&](int64_t task) {
    check.Begin();
    unchecked_body(task);
    check.Verify(task, digests_.at(static_cast<size_t>(task - first_ - share_begin_)));
  };
  const Body body = checked ? Body(checked_body) : unchecked_body;
  OperatorSite site{"AsyncFor/locks", file_.c_str(), line_, invocations_};
  rt.context().BeginOperator(site);
  AccumulatorCall accumulators(rt);
  // Current values of the written elements this node touches; read-only ones when changed.
  ServeElements(rt, serve_written_);
  std::vector<uint64_t> versions;
  for (uint32_t d : read_only_dds_) versions.push_back(rt.context().dds(d).version());
  if (!read_served_ || versions != read_versions_) {
    ServeElements(rt, serve_read_);
    read_versions_ = std::move(versions);
    read_served_ = true;
  }
  owned_start_.clear();
  for (const ElementRef& e : owned_touched_) {
    const std::byte* p = rt.context().dds(e.dds).raw_element(e.index);
    owned_start_.insert(owned_start_.end(), p, p + rt.context().dds(e.dds).element_bytes());
  }
  {
    HookGuard guard(rt);
    for (uint32_t d = 0; d < rt.context().dds_count(); ++d) rt.context().dds(d).set_hook(nullptr);
    if (checked) {
      for (uint32_t d : written_dds_) rt.context().dds(d).set_hook(&check);
      for (uint32_t d : read_only_dds_) rt.context().dds(d).set_hook(&check);
    }
    OrderingPolicy& order = rt.context().ordering();
    const int threads = rt.threads();
    const OrderingPolicy::InlineLocks how = order.inline_locks();
    if (how.kind == OrderingPolicy::InlineLocks::kOrdered)
      thread_runs_.resize(static_cast<size_t>(threads));
    rt.context().pool().RunOnAll([&](int t) {
      if (threads == 1) {
        // One thread: nothing to exclude and no order to decide (the bodies run in index
        // order), so neither locks nor ordering events.
        for (int64_t k = 0; k < share_count_; ++k) body(first_ + share_begin_ + k);
        return;
      }
      const EvenSplit chunk(share_count_, threads);
      if (how.kind == OrderingPolicy::InlineLocks::kOrdered) {
        // The ordered protocol inline, its state in registers for the whole operator; without
        // the check for a logged grant when none is ahead (Record; Replay past its last). The
        // thread's digest folds its acquires, which the plan fixes, at once: nothing per grant.
        ThreadRun& acquires = thread_runs_[static_cast<size_t>(t)];
        if (!acquires.made) {
          RunLocked(
              chunk.begin(t), chunk.end(t), [](int64_t) {},
              [&](SeamLock&, const uint64_t& id, int64_t task) {
                acquires.run.Add(id, static_cast<uint64_t>(task));
              },
              [](SeamLock&, uint64_t) {});
          acquires.made = true;
        }
        const auto run = [&]<class Thread>(Thread& me) {
          RunLocked(
              chunk.begin(t), chunk.end(t), body,
              [&](SeamLock& lock, const uint64_t& id, int64_t task) { me.Acquire(lock, id, task); },
              [&](SeamLock& lock, uint64_t) { me.Release(lock); }, [&] { me.Publish(); });
          me.Fold(acquires.run);
        };
        if (how.ordered->state(t).next_logged == 0) {
          OrderedLocks::UnloggedInlineThread me(*how.ordered, t);
          run(me);
        } else {
          OrderedLocks::InlineThread me(*how.ordered, t);
          run(me);
        }
      } else if (how.kind == OrderingPolicy::InlineLocks::kPlain) {
        RunLocked(
            chunk.begin(t), chunk.end(t), body,
            [](SeamLock& lock, const uint64_t&, int64_t) {
              if (!lock.TrySet()) [[unlikely]]
                lock.TakeWhenReleased();
            },
            [](SeamLock& lock, uint64_t) { lock.ClearHeld(); });
      } else {
        RunLocked(
            chunk.begin(t), chunk.end(t), body,
            [&](SeamLock& lock, const uint64_t& id, int64_t task) {
              order.Acquire(lock, id, t, task);
            },
            [&](SeamLock& lock, uint64_t id) { order.Release(lock, id, t); });
      }
    });
  }
  PushDeltas(rt);
  accumulators.Flush();
  for (uint32_t d : written_dds_) rt.context().dds(d).bump_version();
  rt.context().set_last_serial_order(nullptr);  // no serial order: this engine is not serializable
  ++invocations_;
  ++executions_;
  rt.context().EndOperator(site, written_dds_);
}

void LockedLoop::PushDeltas(Runtime& rt) {
  const int nodes = rt.nodes(), me = rt.node();
  std::vector<ByteWriter> out(nodes);
  for (const ElementRef& e : replica_) {
    DdsBase& dds = rt.context().dds(e.dds);
    ByteWriter& w = out[dds.owner(e.index)];
    w.Put(e);
    w.PutRaw(dds.raw_element(e.index), dds.element_bytes());
  }
  for (int p = 0; p < nodes; ++p)
    if (p != me) rt.context().transport().Send(p, Tag::kDelta, out[p].Take());
  // Final values per owned element: this node's own first, then in delivery order, which is a
  // real ordering decision (it changes floating-point sums): through the seam.
  std::vector<std::vector<std::byte>> afters(owned_touched_.size());
  size_t at = 0;
  for (size_t k = 0; k < owned_touched_.size(); ++k) {
    const ElementRef& e = owned_touched_[k];
    const size_t bytes = rt.context().dds(e.dds).element_bytes();
    if (touched_here_[k]) {
      const std::byte* p = rt.context().dds(e.dds).raw_element(e.index);
      afters[k].assign(p, p + bytes);
    }
    at += bytes;
  }
  for (int received = 0; received < nodes - 1; ++received) {
    Message m = DeliverNext(rt.context().transport(), rt.context().ordering(), Tag::kDelta,
                            rt.options().timeout);
    ByteReader r(m.payload);
    while (r.remaining() > 0) {
      const auto e = r.Get<ElementRef>();
      auto it = std::lower_bound(owned_touched_.begin(), owned_touched_.end(), e);
      if (it == owned_touched_.end() || !(*it == e))
        throw std::runtime_error("AsyncFor/locks: node " + std::to_string(m.source) +
                                 " sent a change of an element this node did not expect");
      const size_t bytes = rt.context().dds(e.dds).element_bytes();
      const std::byte* p = r.Skip(bytes);
      auto& list = afters[static_cast<size_t>(it - owned_touched_.begin())];
      list.insert(list.end(), p, p + bytes);
    }
  }
  at = 0;
  for (size_t k = 0; k < owned_touched_.size(); ++k) {
    const ElementRef& e = owned_touched_[k];
    DdsBase& dds = rt.context().dds(e.dds);
    const size_t bytes = dds.element_bytes();
    dds.MergeChanges(e.index, owned_start_.data() + at, afters[k].data(), afters[k].size() / bytes);
    at += bytes;
  }
}

}  // namespace strads
