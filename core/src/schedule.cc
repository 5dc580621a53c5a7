#include "schedule.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace strads {

namespace {

// The positions of a round's groups, largest first (ties: in order).
std::vector<size_t> LargestFirst(const std::vector<Group>& round) {
  std::vector<size_t> by_size(round.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return round[a].size > round[b].size; });
  return by_size;
}

// Largest group first onto the least loaded worker (ties: lower worker), then back in order.
void PlaceGroups(std::vector<Group>& round, int workers) {
  std::vector<int64_t> load(workers, 0);
  for (size_t g : LargestFirst(round)) {
    const int w = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    round[g].worker = w;
    load[w] += round[g].size;
  }
}

// Places the rounds of a schedule in order, remembering which node holds each written block
// (ScheduleInput::block_home). A group goes to the least loaded worker of the node holding most
// of its blocks' bytes when that worker stays within an eighth above the round's fair share
// (its largest group, or its bodies over the workers), and to the least loaded worker otherwise.
class Placer {
 public:
  explicit Placer(const ScheduleInput& in)
      : in_(in),
        nodes_(in.threads > 0 ? in.workers / in.threads : 1),
        by_node_(nodes_ > 1 && !in.block_home.empty()) {}

  void Place(std::vector<Group>& round) {
    if (!by_node_) return PlaceGroups(round, in_.workers);
    int64_t total = 0, largest = 0;
    for (const Group& g : round) total += g.size, largest = std::max(largest, g.size);
    const int64_t fair = std::max(largest, (total + in_.workers - 1) / in_.workers);
    const int64_t bound = fair + fair / 8;
    std::vector<int64_t> load(in_.workers, 0);
    std::vector<int64_t> bytes_on(nodes_);
    const auto least_loaded = [&](int begin, int end) {
      return static_cast<int>(std::min_element(load.begin() + begin, load.begin() + end) -
                              load.begin());
    };
    for (size_t gi : LargestFirst(round)) {
      Group& g = round[gi];
      std::fill(bytes_on.begin(), bytes_on.end(), 0);
      for (BlockKey key : in_.signatures[g.cell]) bytes_on[Holder(key)] += Bytes(key);
      const int node =
          static_cast<int>(std::max_element(bytes_on.begin(), bytes_on.end()) - bytes_on.begin());
      int w = least_loaded(node * in_.threads, (node + 1) * in_.threads);
      if (load[w] + g.size > bound) w = least_loaded(0, in_.workers);
      g.worker = w;
      load[w] += g.size;
      for (BlockKey key : in_.signatures[g.cell]) holder_[key] = w / in_.threads;
    }
  }

 private:
  int Holder(BlockKey key) const {
    if (auto it = holder_.find(key); it != holder_.end()) return it->second;
    const uint32_t d = BlockKeyDds(key);
    const auto b = static_cast<size_t>(BlockKeyBlock(key));
    if (d >= in_.block_home.size() || b >= in_.block_home[d].size()) return 0;
    return std::clamp(in_.block_home[d][b], 0, nodes_ - 1);
  }
  int64_t Bytes(BlockKey key) const {
    const uint32_t d = BlockKeyDds(key);
    const auto b = static_cast<size_t>(BlockKeyBlock(key));
    return d < in_.block_bytes.size() && b < in_.block_bytes[d].size() ? in_.block_bytes[d][b] : 1;
  }

  const ScheduleInput& in_;
  const int nodes_;
  const bool by_node_;
  std::unordered_map<BlockKey, int> holder_;
};

// A group of cell c with its size; its body list is filled afterwards (FillBodies).
Group GroupOf(const std::vector<int64_t>& sizes, int32_t c) {
  Group g;
  g.cell = c;
  g.size = sizes[c];
  return g;
}

// Every signature one block of the same two DDSs, both cut into the same number of blocks?
bool IsTwoDimensional(const ScheduleInput& in, const std::vector<int64_t>& sizes, uint32_t* d1,
                      uint32_t* d2, int64_t* blocks) {
  bool seen = false;
  for (size_t c = 0; c < in.signatures.size(); ++c) {
    const auto& s = in.signatures[c];
    if (sizes[c] == 0 || s.empty()) continue;
    if (s.size() != 2 || BlockKeyDds(s[0]) == BlockKeyDds(s[1])) return false;
    if (!seen) {
      *d1 = BlockKeyDds(s[0]);
      *d2 = BlockKeyDds(s[1]);
      seen = true;
    } else if (BlockKeyDds(s[0]) != *d1 || BlockKeyDds(s[1]) != *d2) {
      return false;
    }
  }
  if (!seen) return false;
  *blocks = in.blocks_of_dds.at(*d1);
  return in.blocks_of_dds.at(*d2) == *blocks;
}

Schedule Rotation(const ScheduleInput& in, const std::vector<int64_t>& sizes, int64_t b) {
  Schedule s;
  s.rotation = true;
  s.rounds.resize(b);
  // Round r holds cells (a, (a + r) mod b), in order of a; free cells join round 0.
  std::vector<std::vector<std::pair<int64_t, int32_t>>> cells(b);
  for (size_t c = 0; c < in.signatures.size(); ++c) {
    if (sizes[c] == 0) continue;
    const auto& sig = in.signatures[c];
    if (sig.empty()) {
      cells[0].push_back({b + static_cast<int64_t>(c), static_cast<int32_t>(c)});
      continue;
    }
    const int64_t a = BlockKeyBlock(sig[0]), col = BlockKeyBlock(sig[1]);
    cells[((col - a) % b + b) % b].push_back({a, static_cast<int32_t>(c)});
  }
  for (int64_t r = 0; r < b; ++r) {
    std::sort(cells[r].begin(), cells[r].end());
    for (auto [a, c] : cells[r]) {
      Group g = GroupOf(sizes, c);
      // Block row a stays on one worker in every round: only column blocks move.
      g.worker = static_cast<int32_t>(a < b ? a % in.workers : 0);
      s.rounds[r].push_back(std::move(g));
    }
  }
  if (!s.rounds.empty() && s.rounds[0].size() > static_cast<size_t>(b))
    PlaceGroups(s.rounds[0], in.workers);
  return s;
}

Schedule FirstFit(const ScheduleInput& in, const std::vector<int64_t>& sizes) {
  std::vector<int32_t> cells;
  for (size_t c = 0; c < sizes.size(); ++c)
    if (sizes[c] != 0) cells.push_back(static_cast<int32_t>(c));
  std::stable_sort(cells.begin(), cells.end(),
                   [&](int32_t a, int32_t b) { return sizes[a] > sizes[b]; });
  // Each cell goes to the first round none of its blocks is used in. Per block, the rounds it
  // is used in (a bitset) and the lowest round it is free in: a cell's search starts at the
  // highest of its blocks' lowest free rounds and tests a bit per block and round. Searching
  // every round from 0 with a set of blocks per round cost cells x rounds set look-ups: sgdmf
  // with --blocks 65536 (1.85 M cells, 14 811 rounds) planned for minutes.
  std::unordered_map<BlockKey, uint32_t> block_id;
  std::vector<std::vector<uint64_t>> rounds_of_block;
  std::vector<size_t> lowest_free;
  const auto used = [&](uint32_t b, size_t r) {
    const std::vector<uint64_t>& bits = rounds_of_block[b];
    return r / 64 < bits.size() && (bits[r / 64] >> (r % 64) & 1) != 0;
  };
  std::vector<std::vector<int32_t>> round_cells;
  std::vector<uint32_t> ids;
  for (int32_t c : cells) {
    ids.clear();
    size_t r = 0;
    for (BlockKey k : in.signatures[c]) {
      const auto [it, fresh] = block_id.try_emplace(k, static_cast<uint32_t>(lowest_free.size()));
      if (fresh) rounds_of_block.emplace_back(), lowest_free.push_back(0);
      ids.push_back(it->second);
      r = std::max(r, lowest_free[it->second]);
    }
    while (std::any_of(ids.begin(), ids.end(), [&](uint32_t b) { return used(b, r); })) ++r;
    if (r >= round_cells.size()) round_cells.resize(r + 1);
    for (uint32_t b : ids) {
      std::vector<uint64_t>& bits = rounds_of_block[b];
      if (bits.size() <= r / 64) bits.resize(r / 64 + 1, 0);
      bits[r / 64] |= uint64_t{1} << (r % 64);
      while (used(b, lowest_free[b])) ++lowest_free[b];
    }
    round_cells[r].push_back(c);
  }
  Schedule s;
  Placer placer(in);
  for (auto& rc : round_cells) {
    std::sort(rc.begin(), rc.end());
    std::vector<Group> round;
    for (int32_t c : rc) round.push_back(GroupOf(sizes, c));
    placer.Place(round);
    s.rounds.push_back(std::move(round));
  }
  return s;
}

// Keeps `order` for conflicting bodies: a body goes to the earliest round after every round
// that used one of its blocks, or joins its own cell's group in the latest such round when that
// group was the last user of all of those blocks.
Schedule Ordered(const ScheduleInput& in) {
  const int64_t n = static_cast<int64_t>(in.cell_of_body.size());
  if (const std::string error = OrderPermutationError(in.first, in.first + n - 1, *in.order);
      !error.empty())
    throw std::invalid_argument("ordered schedule: the order is not a permutation: " + error);
  struct Last {
    int64_t round;
    int32_t group;
  };
  std::map<BlockKey, Last> last;
  std::vector<std::map<int32_t, int32_t>> group_of_cell;  // per round: cell -> group
  Schedule s;
  s.first = in.first;
  for (int64_t index : *in.order) {
    const int64_t k = index - in.first;
    const int32_t cell = in.cell_of_body[k];
    const auto& sig = in.signatures[cell];
    int64_t r = -1;
    for (BlockKey b : sig)
      if (auto it = last.find(b); it != last.end()) r = std::max(r, it->second.round);
    int64_t target = r < 0 ? 0 : r;
    if (r >= 0) {
      // May join round r only as its own cell's group, and only if that group last used
      // every block of the signature that round r touched.
      auto it = group_of_cell[r].find(cell);
      bool join = it != group_of_cell[r].end();
      for (BlockKey b : sig) {
        auto l = last.find(b);
        if (join && l != last.end() && l->second.round == r && l->second.group != it->second)
          join = false;
      }
      if (!join) target = r + 1;
    }
    if (target >= static_cast<int64_t>(s.rounds.size()))
      s.rounds.emplace_back(), group_of_cell.emplace_back();
    auto [git, inserted] =
        group_of_cell[target].try_emplace(cell, static_cast<int32_t>(s.rounds[target].size()));
    if (inserted) {
      Group g;
      g.cell = cell;
      s.rounds[target].push_back(std::move(g));
    }
    Group& g = s.rounds[target][git->second];
    g.bodies.push_back(static_cast<uint32_t>(k));
    ++g.size;
    for (BlockKey b : sig) last[b] = {target, git->second};
  }
  Placer placer(in);
  for (auto& round : s.rounds) placer.Place(round);
  return s;
}

// Every group's body list from the cells of the bodies, in index order.
void FillBodies(const ScheduleInput& in, Schedule& s) {
  std::vector<std::vector<uint32_t>> bodies(in.signatures.size());
  for (size_t k = 0; k < in.cell_of_body.size(); ++k)
    bodies.at(in.cell_of_body[k]).push_back(static_cast<uint32_t>(k));
  for (auto& round : s.rounds)
    for (Group& g : round) g.bodies = std::move(bodies[g.cell]);
}

}  // namespace

std::string OrderPermutationError(int64_t first, int64_t last, const std::vector<int64_t>& order) {
  const int64_t n = std::max<int64_t>(0, last - first + 1);  // an empty range takes no index
  std::vector<char> seen(static_cast<size_t>(n), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t index = order[k];
    const auto at = [&] {
      return "index " + std::to_string(index) + " at position " + std::to_string(k);
    };
    if (index < first || index > last) return at() + " is outside the loop";
    if (seen[static_cast<size_t>(index - first)]) {
      const auto before = std::find(order.begin(), order.end(), index) - order.begin();
      return at() + " is listed before, at position " + std::to_string(before);
    }
    seen[static_cast<size_t>(index - first)] = 1;
  }
  // Every listed index is distinct and inside, so a shorter order misses one.
  const auto missing = std::find(seen.begin(), seen.end(), 0) - seen.begin();
  if (missing < n)
    return "index " + std::to_string(first + missing) + " is missing (the order lists " +
           std::to_string(order.size()) + " of " + std::to_string(n) + ")";
  return "";
}

std::vector<int64_t> Schedule::SerialOrder() const {
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(bodies()));
  for (const auto& round : rounds)
    for (const auto& g : round)
      for (uint32_t k : g.bodies) order.push_back(first + k);
  return order;
}

int64_t Schedule::bodies() const {
  int64_t n = 0;
  for (const auto& round : rounds)
    for (const auto& g : round) n += g.size;
  return n;
}

std::vector<int32_t> MergeCellsApartFrom(const ScheduleInput& in, const std::vector<bool>& alone,
                                         ScheduleInput* merged) {
  const auto is_alone = [&](BlockKey k) {
    const uint32_t d = BlockKeyDds(k);
    return d < alone.size() && alone[d];
  };
  // Planning merges on every call of a loop whose index set changes (Lasso: 100 calls an
  // epoch, about 50 cells each), so a handful of flat arrays, no allocation per cell.
  const size_t cells = in.signatures.size();
  CellSignatures rest;  // each cell's keys apart from `alone` ones
  rest.Reserve(cells, in.signatures.KeyCount());
  std::vector<BlockKey> scratch;
  bool any_alone_only = false;
  for (size_t c = 0; c < cells; ++c) {
    scratch.clear();
    for (BlockKey k : in.signatures[c])
      if (!is_alone(k)) scratch.push_back(k);
    rest.Add(scratch);
    any_alone_only |= scratch.empty() && !in.signatures[c].empty();
  }
  // Each cell's representative: the first cell with the same rest (found among the cells of
  // its rest's hash, which are in cell order); for a cell of `alone` blocks only, the first cell
  // with a rest that holds its first block, if that cell has all of its blocks (it adds no
  // block to it); else itself.
  std::vector<size_t> rep(cells);
  std::iota(rep.begin(), rep.end(), size_t{0});
  std::vector<std::pair<size_t, size_t>> by_hash;  // (hash of the rest, cell)
  by_hash.reserve(cells);
  for (size_t c = 0; c < cells; ++c)
    if (!rest[c].empty()) by_hash.emplace_back(SignatureHash()(rest[c]), c);
  std::sort(by_hash.begin(), by_hash.end());
  for (size_t run = 0; run < by_hash.size();) {
    size_t end = run + 1;
    while (end < by_hash.size() && by_hash[end].first == by_hash[run].first) ++end;
    for (size_t i = run + 1; i < end; ++i)
      for (size_t e = run; e < i; ++e)
        if (std::ranges::equal(rest[by_hash[e].second], rest[by_hash[i].second])) {
          rep[by_hash[i].second] = rep[by_hash[e].second];
          break;
        }
    run = end;
  }
  if (any_alone_only) {
    std::vector<std::pair<BlockKey, size_t>> hosts;  // (`alone` key, a cell with a rest)
    for (size_t c = 0; c < cells; ++c)
      if (!rest[c].empty())
        for (BlockKey k : in.signatures[c])
          if (is_alone(k)) hosts.emplace_back(k, c);
    std::sort(hosts.begin(), hosts.end());
    for (size_t c = 0; c < cells; ++c) {
      const auto sig = in.signatures[c];
      if (sig.empty() || !rest[c].empty()) continue;
      const auto host = std::lower_bound(hosts.begin(), hosts.end(), std::pair(sig[0], size_t{0}));
      if (host == hosts.end() || host->first != sig[0]) continue;
      const auto theirs = in.signatures[host->second];
      if (std::includes(theirs.begin(), theirs.end(), sig.begin(), sig.end()))
        rep[c] = rep[host->second];
    }
  }
  // Numbered in order of first appearance; each merged cell's parts listed together (by a
  // count per merged cell), in cell order.
  std::vector<int32_t> to_merged(cells), number(cells, -1);
  std::vector<size_t> part_ends;
  for (size_t c = 0; c < cells; ++c) {
    int32_t& m = number[rep[c]];
    if (m < 0) m = static_cast<int32_t>(part_ends.size()), part_ends.push_back(0);
    to_merged[c] = m;
    ++part_ends[static_cast<size_t>(m)];
  }
  if (part_ends.size() == cells) return {};
  std::partial_sum(part_ends.begin(), part_ends.end(), part_ends.begin());
  std::vector<size_t> parts(cells);
  for (size_t c = cells; c-- > 0;) parts[--part_ends[static_cast<size_t>(to_merged[c])]] = c;
  merged->first = in.first;
  merged->workers = in.workers;
  merged->threads = in.threads;
  merged->blocks_of_dds = in.blocks_of_dds;
  merged->block_home = in.block_home;
  merged->block_bytes = in.block_bytes;
  merged->signatures = CellSignatures();
  merged->signatures.Reserve(part_ends.size(), in.signatures.KeyCount());
  for (size_t m = 0; m < part_ends.size(); ++m) {
    const size_t begin = part_ends[m], end = m + 1 < part_ends.size() ? part_ends[m + 1] : cells;
    if (end - begin == 1) {
      merged->signatures.Add(in.signatures[parts[begin]]);
      continue;
    }
    scratch.clear();
    for (size_t p = begin; p < end; ++p) {
      const auto sig = in.signatures[parts[p]];
      scratch.insert(scratch.end(), sig.begin(), sig.end());
    }
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    merged->signatures.Add(scratch);
  }
  merged->cell_sizes.clear();
  if (!in.cell_sizes.empty()) {
    merged->cell_sizes.assign(part_ends.size(), 0);
    for (size_t c = 0; c < cells; ++c) merged->cell_sizes[to_merged[c]] += in.cell_sizes[c];
  }
  merged->cell_of_body = in.cell_of_body;
  for (int32_t& c : merged->cell_of_body) c = to_merged.at(c);
  return to_merged;
}

Schedule BuildSchedule(const ScheduleInput& in) {
  if (in.workers < 1) throw std::invalid_argument("BuildSchedule: no workers");
  if (static_cast<int64_t>(in.cell_of_body.size()) > Schedule::kMaxBodies)
    throw std::invalid_argument("BuildSchedule: more than 2^32 - 1 bodies");
  if (in.order != nullptr) return Ordered(in);
  std::vector<int64_t> sizes = in.cell_sizes;
  if (sizes.empty()) {
    sizes.assign(in.signatures.size(), 0);
    for (int32_t c : in.cell_of_body) ++sizes.at(c);
  }
  uint32_t d1 = 0, d2 = 0;
  int64_t blocks = 0;
  Schedule s = IsTwoDimensional(in, sizes, &d1, &d2, &blocks) ? Rotation(in, sizes, blocks)
                                                              : FirstFit(in, sizes);
  s.first = in.first;
  if (!in.cell_of_body.empty()) FillBodies(in, s);
  return s;
}

}  // namespace strads
