#include "async_loop.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>

#include "access_check.h"
#include "node_context.h"
#include "recon_hook.h"
#include "reconnaissance.h"
#include "schedule_report.h"
#include "strads/errors.h"
#include "strads/internal/dds.h"
#include "strads/operators.h"

namespace strads {

namespace {

constexpr int64_t kBinsPerBlock = 64;

UnplannedAccessHook unplanned_hook;

bool SharesBlock(const std::vector<BlockKey>& a, const std::vector<BlockKey>& b) {
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) return true;
    a[i] < b[j] ? ++i : ++j;
  }
  return false;
}

// STRADS_INJECT_BUG=conflicting-round (tests only): moves the first group of round 1 that
// conflicts with a group of round 0 into round 0, on a worker of another node (or another
// thread) than that group. The reported serial order still lists rounds in order, so it no
// longer matches what runs.
void InjectConflictingRound(Schedule& s, const std::vector<std::vector<BlockKey>>& signatures,
                            int threads, int workers) {
  if (s.rounds.size() < 2) return;
  std::vector<Group>& r0 = s.rounds[0];
  std::vector<Group>& r1 = s.rounds[1];
  for (size_t j = 0; j < r1.size(); ++j)
    for (const Group& g0 : r0) {
      if (!SharesBlock(signatures.at(g0.cell), signatures.at(r1[j].cell))) continue;
      Group moved = std::move(r1[j]);
      moved.worker = (g0.worker + threads) % workers;
      if (moved.worker == g0.worker) moved.worker = (g0.worker + 1) % workers;
      r1.erase(r1.begin() + static_cast<std::ptrdiff_t>(j));
      r0.push_back(std::move(moved));
      if (r1.empty()) s.rounds.erase(s.rounds.begin() + 1);
      return;
    }
}

}  // namespace

std::shared_ptr<const std::vector<int64_t>> AsyncLoop::FollowedOrder(Runtime& rt, const char* file,
                                                                     uint32_t line, int64_t first,
                                                                     int64_t last) {
  DualTrace* dual = rt.context().dual();
  if (dual == nullptr || !dual->following() || last < first) return nullptr;
  return dual->NextOrder(std::string(file) + ":" + std::to_string(line), first, last);
}

AsyncLoop& AsyncLoop::At(Runtime& rt, internal::LoopSite where, int64_t first, int64_t last,
                         const std::vector<int64_t>* order) {
  const std::string key = std::string("AsyncFor@") + where.file + ":" + std::to_string(where.line);
  auto* site = dynamic_cast<AsyncSite*>(rt.context().loop_state(key));
  if (site == nullptr) {
    auto fresh = std::make_unique<AsyncSite>();
    fresh->index = rt.context().NextAsyncSiteIndex();
    site = fresh.get();
    rt.context().set_loop_state(key, std::move(fresh));
  }
  auto& plans = site->plans;
  if (where.dynamic) plans.clear();
  const auto same = [&](const std::unique_ptr<AsyncLoop>& p) {
    return p->first_ == first && p->last_ == last && p->ordered_ == (order != nullptr) &&
           (order == nullptr || *order == p->order_);
  };
  if (auto it = std::find_if(plans.begin(), plans.end(), same); it != plans.end()) {
    plans.splice(plans.begin(), plans, it);
    return *plans.front();
  }
  auto fresh = std::make_unique<AsyncLoop>();
  fresh->file_ = where.file;
  fresh->line_ = where.line;
  fresh->first_ = first;
  fresh->last_ = last;
  fresh->ordered_ = order != nullptr;
  if (order) fresh->order_ = *order;
  fresh->site_ = site;
  plans.push_front(std::move(fresh));
  if (plans.size() > AsyncSite::kPlansPerSite) plans.pop_back();
  ++site->plans_made;
  return *plans.front();
}

void AsyncLoop::Prepare(Runtime& rt, Body body) {
  if (prepared_ || last_ < first_) return;
  const int nodes = rt.nodes(), me = rt.node();
  const int64_t n = last_ - first_ + 1;
  const size_t dds_count = rt.context().dds_count();

  // 1. Reconnaissance; which DDSs the loop writes and which it only reads.
  ReconResult recon = Reconnoitre(rt, file_ + ":" + std::to_string(line_), first_, last_, body);
  const auto& where = recon.where;
  const auto& touches = recon.touches;
  const auto& flags = recon.flags;
  written_dds_ = recon.written;
  read_only_dds_ = recon.read_only;
  const int64_t mine_begin = recon.share_begin, mine_count = recon.share_count;

  // 3. Blocks of the written DDSs, balanced by how often their elements are accessed.
  std::vector<std::vector<int64_t>> counts(dds_count);
  for (uint32_t d : written_dds_) {
    const int64_t size = rt.context().dds(d).size();
    counts[d].assign(std::min<int64_t>(size, kBinsPerBlock * rt.options().blocks), 0);
  }
  for (const Touch& t : touches)
    if (flags[t.dds] & 2) {
      const EvenSplit bins(rt.context().dds(t.dds).size(),
                           static_cast<int64_t>(counts[t.dds].size()));
      ++counts[t.dds][bins.part_of(t.index)];
    }
  PlanBlocks(rt, counts);

  // 4. Cells: bodies with the same written blocks. Gather them from every node.
  std::map<std::vector<BlockKey>, int32_t> local_cells;
  std::vector<std::vector<BlockKey>> local_signatures;
  std::vector<int32_t> local_cell_of_body(mine_count);
  for (int64_t k = 0; k < mine_count; ++k) {
    std::vector<BlockKey> sig;
    for (uint32_t t = 0; t < where[k].second; ++t) {
      const Touch& touch = touches[where[k].first + t];
      if (!(flags[touch.dds] & 2)) continue;
      const auto& b = bounds_[touch.dds];
      const int64_t block = std::upper_bound(b.begin(), b.end(), touch.index) - b.begin() - 1;
      sig.push_back(MakeBlockKey(touch.dds, block));
    }
    std::sort(sig.begin(), sig.end());
    sig.erase(std::unique(sig.begin(), sig.end()), sig.end());
    auto [it, inserted] = local_cells.try_emplace(sig, static_cast<int32_t>(local_cells.size()));
    if (inserted) local_signatures.push_back(sig);
    local_cell_of_body[k] = it->second;
  }
  ScheduleInput input;
  input.first = first_;
  input.workers = nodes * rt.threads();
  input.order = ordered_ ? &order_ : nullptr;
  input.blocks_of_dds.assign(dds_count, 0);
  for (uint32_t d : written_dds_)
    input.blocks_of_dds[d] = static_cast<int64_t>(bounds_[d].size()) - 1;
  {
    ByteWriter w;
    w.Put<uint64_t>(local_signatures.size());
    for (const auto& sig : local_signatures) w.PutVector(sig);
    w.PutVector(local_cell_of_body);
    std::map<std::vector<BlockKey>, int32_t> global;
    input.cell_of_body.reserve(n);
    for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
      ByteReader r(bytes);
      const uint64_t cells = r.Get<uint64_t>();
      std::vector<int32_t> to_global;
      for (uint64_t c = 0; c < cells; ++c) {
        auto sig = r.GetVector<BlockKey>();
        auto [it, inserted] = global.try_emplace(sig, static_cast<int32_t>(global.size()));
        if (inserted) input.signatures.push_back(sig);
        to_global.push_back(it->second);
      }
      for (int32_t c : r.GetVector<int32_t>()) input.cell_of_body.push_back(to_global.at(c));
    }
  }
  schedule_ = BuildSchedule(input);
  if (rt.context().inject_bug() == internal::InjectedBug::kConflictingRound)
    InjectConflictingRound(schedule_, input.signatures, rt.threads(), input.workers);
  if (rt.options().schedule_report && rt.leader())
    std::fprintf(stderr, "schedule: %s\n",
                 DescribeSchedule(file_ + ":" + std::to_string(line_), first_, last_,
                                  Summarize(schedule_, input.workers))
                     .c_str());
  signatures_ = std::move(input.signatures);
  serial_order_ = std::make_shared<const std::vector<int64_t>>(schedule_.SerialOrder());

  const int threads = rt.threads();
  mine_.assign(schedule_.rounds.size(), std::vector<std::vector<MyGroup>>(threads));
  std::vector<int32_t> executor(mine_count, -1);
  for (size_t r = 0; r < schedule_.rounds.size(); ++r)
    for (const Group& g : schedule_.rounds[r]) {
      const int node = g.worker / threads;
      if (node == me) mine_[r][g.worker % threads].push_back({&g, {}, {}});
      for (int64_t i : g.bodies) {
        const int64_t k = i - first_ - mine_begin;
        if (k >= 0 && k < mine_count) executor[k] = node;
      }
    }

  // 5. Read-only elements: ask each owner to serve them to the node that runs the body, and
  // tell that node the first one of each body, for software prefetch, and (access checking)
  // the digest of each body's accesses.
  {
    const bool checked = rt.options().access_check != AccessCheck::kOff;
    // Per executor, in body order: it knows which of this node's share it runs.
    std::vector<std::vector<uint64_t>> digests(nodes);
    if (checked)
      for (int64_t k = 0; k < mine_count; ++k)
        digests[executor[k]].push_back(
            AccessDigest(std::span(touches).subspan(where[k].first, where[k].second)));
    std::vector<std::vector<std::pair<int64_t, ElementRef>>> firsts(nodes);
    {
      std::vector<int64_t> per_node(nodes, 0);
      for (int64_t k = 0; k < mine_count; ++k) ++per_node[executor[k]];
      for (int p = 0; p < nodes; ++p) firsts[p].reserve(static_cast<size_t>(per_node[p]));
    }
    for (int64_t k = 0; k < mine_count; ++k)
      for (uint32_t t = 0; t < where[k].second; ++t) {
        const Touch& touch = touches[where[k].first + t];
        if (flags[touch.dds] & 2) continue;
        firsts[executor[k]].push_back({first_ + mine_begin + k, {touch.dds, touch.index}});
        break;
      }
    std::vector<std::vector<std::byte>> out(nodes);
    for (int p = 0; p < nodes; ++p) {
      ByteWriter w;
      w.PutVector(firsts[p]);
      w.PutVector(digests[p]);
      digests[p] = {};
      out[p] = w.Take();
    }
    std::vector<std::pair<int64_t, ElementRef>> mine;
    std::vector<std::vector<uint64_t>> digests_from(nodes);  // per reconnoitring node
    const auto in = rt.context().collectives().AllToAll(std::move(out));
    for (int p = 0; p < nodes; ++p) {
      ByteReader r(in[p]);
      auto theirs = r.GetVector<std::pair<int64_t, ElementRef>>();
      mine.insert(mine.end(), theirs.begin(), theirs.end());
      digests_from[p] = r.GetVector<uint64_t>();
    }
    PlanPrefetchAhead(rt, mine, digests_from);
  }
  {
    std::vector<std::vector<ElementRef>> ask(nodes);  // per owner, tagged with executor
    std::vector<std::vector<int32_t>> ask_for(nodes);
    for (int64_t k = 0; k < mine_count; ++k)
      for (uint32_t t = 0; t < where[k].second; ++t) {
        const Touch& touch = touches[where[k].first + t];
        if (flags[touch.dds] & 2) continue;
        const int owner = rt.context().dds(touch.dds).owner(touch.index);
        if (owner == executor[k]) continue;
        ask[owner].push_back({touch.dds, touch.index});
        ask_for[owner].push_back(executor[k]);
      }
    std::vector<std::vector<std::byte>> out(nodes);
    for (int p = 0; p < nodes; ++p) {
      ByteWriter w;
      w.PutVector(ask[p]);
      w.PutVector(ask_for[p]);
      out[p] = w.Take();
    }
    serve_.assign(nodes, {});
    for (const auto& bytes : rt.context().collectives().AllToAll(std::move(out))) {
      ByteReader r(bytes);
      auto needs = r.GetVector<ElementRef>();
      auto fors = r.GetVector<int32_t>();
      for (size_t i = 0; i < needs.size() && i < fors.size(); ++i)
        serve_.at(fors[i]).push_back(needs[i]);
    }
    for (auto& list : serve_) {
      std::sort(list.begin(), list.end(), [](const ElementRef& a, const ElementRef& b) {
        return a.dds != b.dds ? a.dds < b.dds : a.index < b.index;
      });
      list.erase(std::unique(list.begin(), list.end(),
                             [](const ElementRef& a, const ElementRef& b) {
                               return a.dds == b.dds && a.index == b.index;
                             }),
                 list.end());
    }
  }

  PlanExchanges(rt);
  WriteOrder(rt);
  prepared_ = true;
}

void AsyncLoop::PlanPrefetchAhead(Runtime& rt,
                                  const std::vector<std::pair<int64_t, ElementRef>>& firsts,
                                  const std::vector<std::vector<uint64_t>>& digests_from) {
  static const std::byte dummy[64] = {};
  // Indexed by body - first_: bodies are a dense range.
  std::vector<const std::byte*> address(static_cast<size_t>(last_ - first_ + 1), dummy);
  for (const auto& [body, need] : firsts) {
    if (need.dds >= rt.context().dds_count() || need.index < 0 ||
        need.index >= rt.context().dds(need.dds).size() || body < first_ || body > last_)
      throw std::runtime_error("AsyncFor planning: bad element reference in a message");
    address[static_cast<size_t>(body - first_)] =
        rt.context().dds(need.dds).raw_element(need.index);
  }
  // Digests, indexed by body - first_: node p sent those of the bodies of its share that this
  // node runs, in body order.
  std::vector<uint64_t> digest;
  if (rt.options().access_check != AccessCheck::kOff) {
    std::vector<bool> runs_here(address.size(), false);
    for (const auto& round : mine_)
      for (const auto& groups : round)
        for (const MyGroup& g : groups)
          for (int64_t i : g.group->bodies) runs_here[static_cast<size_t>(i - first_)] = true;
    digest.assign(address.size(), 0);
    const EvenSplit share(last_ - first_ + 1, rt.nodes());
    for (int p = 0; p < rt.nodes(); ++p) {
      size_t next = 0;
      for (int64_t k = share.begin(p); k < share.end(p); ++k) {
        if (!runs_here[static_cast<size_t>(k)]) continue;
        if (next == digests_from[p].size())
          throw std::runtime_error("AsyncFor planning: node " + std::to_string(p) +
                                   " sent too few access digests");
        digest[static_cast<size_t>(k)] = digests_from[p][next++];
      }
    }
  }
  for (auto& round : mine_)
    for (auto& groups : round)
      for (MyGroup& g : groups) {
        g.ahead.reserve(g.group->bodies.size() + kPrefetchDistance);
        for (int64_t i : g.group->bodies) {
          g.ahead.push_back(address[static_cast<size_t>(i - first_)]);
          if (!digest.empty()) g.digests.push_back(digest[static_cast<size_t>(i - first_)]);
        }
        g.ahead.insert(g.ahead.end(), kPrefetchDistance, dummy);
      }
}

void AsyncLoop::RunRoundChecked(Runtime& rt, size_t r, GroupRunner run_group) {
  AccessCheckHook check(rt, file_ + ":" + std::to_string(line_), site_->invocations);
  for (uint32_t d : written_dds_) rt.context().dds(d).set_hook(&check);
  for (uint32_t d : read_only_dds_) rt.context().dds(d).set_hook(&check);
  const auto& mine = mine_[r];
  rt.context().pool().RunOnAll([&](int t) {
    for (const MyGroup& g : mine[t])
      for (size_t k = 0; k < g.group->bodies.size(); ++k) {
        check.Begin();
        run_group(std::span(g.group->bodies).subspan(k, 1), g.ahead.data() + k);
        check.Verify(g.group->bodies[k], g.digests.at(k));
      }
  });
  for (uint32_t d : written_dds_) rt.context().dds(d).set_hook(nullptr);
  for (uint32_t d : read_only_dds_) rt.context().dds(d).set_hook(nullptr);
}

void AsyncLoop::PlanBlocks(Runtime& rt, const std::vector<std::vector<int64_t>>& local_counts) {
  const size_t dds_count = rt.context().dds_count();
  bounds_.assign(dds_count, {});
  for (uint32_t d : written_dds_) {
    std::vector<int64_t> counts(local_counts[d].size(), 0);
    ByteWriter w;
    w.PutVector(local_counts[d]);
    for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
      ByteReader r(bytes);
      auto theirs = r.GetVector<int64_t>();
      for (size_t b = 0; b < counts.size() && b < theirs.size(); ++b) counts[b] += theirs[b];
    }
    const int64_t size = rt.context().dds(d).size();
    const int64_t bins = static_cast<int64_t>(counts.size());
    const int64_t blocks = std::min<int64_t>(rt.options().blocks, bins);
    const EvenSplit bin_split(size, std::max<int64_t>(bins, 1));
    const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
    std::vector<int64_t>& b = bounds_[d];
    b.push_back(0);
    // Cut k goes after the first bin where the running count reaches k/blocks of the total,
    // keeping at least one bin per block.
    int64_t running = 0, bin = 0;
    for (int64_t k = 1; k < blocks; ++k) {
      const int64_t min_bin = k - 1, max_bin = bins - (blocks - k) - 1;
      int64_t cut_bin = std::max(bin, min_bin);
      if (total > 0) {
        while (cut_bin < max_bin && (running + counts[cut_bin]) * blocks < k * total)
          running += counts[cut_bin++];
        running += counts[cut_bin];
      } else {
        cut_bin = std::clamp(k * bins / blocks - 1, min_bin, max_bin);
      }
      b.push_back(bin_split.end(cut_bin));
      bin = cut_bin + 1;
    }
    b.push_back(size);
  }
}

void AsyncLoop::PlanExchanges(Runtime& rt) {
  const size_t rounds = schedule_.rounds.size();
  phases_.assign(rounds + 1, {});
  // Moves the parts of a block between `node` and the parts' owners, in either direction.
  auto with_owners = [&](std::vector<Transfer>& phase, BlockKey key, int node, bool to_owners) {
    const uint32_t d = BlockKeyDds(key);
    const int64_t block = BlockKeyBlock(key);
    DdsBase& dds = rt.context().dds(d);
    const int64_t end = bounds_[d][block + 1];
    for (int64_t begin = bounds_[d][block]; begin < end;) {
      const int owner = dds.owner(begin);
      const int64_t stop = std::min(end, dds.owners().end(owner));
      if (owner != node)
        phase.push_back(to_owners ? Transfer{node, owner, {d, begin, stop}}
                                  : Transfer{owner, node, {d, begin, stop}});
      begin = stop;
    }
  };
  std::map<BlockKey, int> holder;  // absent: every part of the block is at its owner
  for (size_t r = 0; r < rounds; ++r)
    for (const Group& g : schedule_.rounds[r]) {
      const int node = g.worker / rt.threads();
      for (BlockKey key : signatures_.at(g.cell)) {
        auto it = holder.find(key);
        if (it == holder.end()) {
          with_owners(phases_[r], key, node, /*to_owners=*/false);
          holder[key] = node;
        } else if (it->second != node) {
          const uint32_t d = BlockKeyDds(key);
          const int64_t block = BlockKeyBlock(key);
          phases_[r].push_back({it->second, node, {d, bounds_[d][block], bounds_[d][block + 1]}});
          it->second = node;
        }
      }
    }
  for (const auto& [key, node] : holder)
    with_owners(phases_[rounds], key, node, /*to_owners=*/true);
}

void AsyncLoop::RunPhase(Runtime& rt, size_t phase) {
  const int me = rt.node();
  const auto& transfers = phases_[phase];
  std::map<int, ByteWriter> out;
  std::map<int, size_t> expect;
  for (const Transfer& t : transfers) {
    DdsBase& dds = rt.context().dds(t.range.dds);
    const size_t bytes = static_cast<size_t>(t.range.end - t.range.begin) * dds.element_bytes();
    if (t.from == me) out[t.to].PutRaw(dds.raw_element(t.range.begin), bytes);
    if (t.to == me) expect[t.from] += bytes;
  }
  for (auto& [to, w] : out) rt.context().transport().Send(to, Tag::kExchange, w.Take());
  for (const auto& [from, bytes] : expect) {
    Message m = rt.context().transport().Receive(from, Tag::kExchange, rt.options().timeout);
    if (m.payload.size() != bytes)
      throw std::runtime_error("AsyncFor exchange: node " + std::to_string(from) + " sent " +
                               std::to_string(m.payload.size()) + " bytes, expected " +
                               std::to_string(bytes));
    ByteReader r(m.payload);
    for (const Transfer& t : transfers)
      if (t.from == from && t.to == me) {
        DdsBase& dds = rt.context().dds(t.range.dds);
        r.GetRaw(dds.raw_element(t.range.begin),
                 static_cast<size_t>(t.range.end - t.range.begin) * dds.element_bytes());
      }
  }
}

void AsyncLoop::Prefetch(Runtime& rt) {
  std::vector<uint64_t> versions;
  for (uint32_t d : read_only_dds_) versions.push_back(rt.context().dds(d).version());
  if (prefetched_ && versions == prefetched_versions_) return;
  ServeElements(rt, serve_);
  prefetched_versions_ = std::move(versions);
  prefetched_ = true;
}

void AsyncLoop::SetHooks(Runtime& rt) {
  for (uint32_t d = 0; d < rt.context().dds_count(); ++d)
    rt.context().dds(d).set_hook(&unplanned_hook);
  for (uint32_t d : written_dds_) rt.context().dds(d).set_hook(nullptr);
  for (uint32_t d : read_only_dds_) rt.context().dds(d).set_hook(nullptr);
}

void AsyncLoop::Execute(Runtime& rt, GroupRunner run_group) {
  if (last_ < first_) return;
  const uint64_t invocation = site_->invocations;
  OperatorSite site{"AsyncFor", file_.c_str(), line_, invocation};
  rt.context().BeginOperator(site);
  {
    HookGuard guard(rt);
    Prefetch(rt);
    SetHooks(rt);
    for (size_t r = 0; r < schedule_.rounds.size(); ++r) {
      RunPhase(rt, r);
      if (ChecksRound(rt.options().access_check, executions_, r)) {
        RunRoundChecked(rt, r, run_group);
        continue;
      }
      const auto& mine = mine_[r];
      rt.context().pool().RunOnAll([&](int t) {
        for (const MyGroup& g : mine[t]) run_group(g.group->bodies, g.ahead.data());
      });
    }
    RunPhase(rt, schedule_.rounds.size());
  }
  for (uint32_t d : written_dds_) rt.context().dds(d).bump_version();
  rt.context().set_last_serial_order(serial_order_);
  ++site_->invocations;
  ++executions_;
  rt.context().EndOperator(site, written_dds_);
  if (DualTrace* dual = rt.context().dual()) {
    std::vector<DdsBase*> written;
    for (uint32_t d : written_dds_) written.push_back(&rt.context().dds(d));
    const uint64_t state = Checksum(rt, written);  // collective
    dual->RecordAsyncFor(file_ + ":" + std::to_string(line_), first_, last_, serial_order_, state);
  }
}

void AsyncLoop::WriteOrder(Runtime& rt) const {
  const std::string& base = rt.options().order_out;
  if (base.empty() || !rt.leader()) return;
  const std::string path = site_->index == 0 ? base : base + "." + std::to_string(site_->index);
  std::ofstream out(path);
  for (int64_t i : *serial_order_) out << i << '\n';
  if (!out.flush()) throw UsageError("--order-out: cannot write '" + path + "'");
}

}  // namespace strads
