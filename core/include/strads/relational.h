// Relational operators on distributed maps and dvectors (paper Table 2: join, sort, reduce).
// All are collective: every node calls them in the same order. Their results never depend on
// the number of nodes: maps are folded in key order, equal keys in contribution order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "strads/dmap.h"
#include "strads/dmultimap.h"
#include "strads/dvector.h"
#include "strads/runtime.h"

namespace strads {

// The value of a joined pair. Not std::pair, which is not trivially copyable in libstdc++
// (map values travel between nodes as bytes); same member names.
template <class A, class B>
struct Joined {
  A first;
  B second;
  friend bool operator==(const Joined&, const Joined&) = default;
};

// Inner join: a pair (k, {a[k], b[k]}) for every key in both maps. Both maps are partitioned
// by the same key hash, so the join is local (no communication except the global size).
template <class K, class V1, class V2, class Compare>
dmap<K, Joined<V1, V2>, Compare>& Join(Runtime& rt, dmap<K, V1, Compare>& a,
                                       dmap<K, V2, Compare>& b, const std::string& name = "join") {
  using Out = dmap<K, Joined<V1, V2>, Compare>;
  typename Out::local_type local;
  const Compare less;
  auto ia = a.local().begin(), ib = b.local().begin();
  while (ia != a.local().end() && ib != b.local().end()) {
    if (less(ia->first, ib->first)) {
      ++ia;
    } else if (less(ib->first, ia->first)) {
      ++ib;
    } else {
      local.emplace_hint(local.end(), ia->first, Joined<V1, V2>{ia->second, ib->second});
      ++ia, ++ib;
    }
  }
  auto& out = internal::MapRegistry::Of(rt).Create<Out>(rt, name);
  out.AdoptLocal(std::move(local));
  return out;
}

// Inner join of a multimap with a map: (k, {v, b[k]}) for every pair (k, v) of `a` whose key is
// in `b`, in a's order. Local, like the join of two maps.
template <class K, class V1, class V2, class Compare>
dmultimap<K, Joined<V1, V2>, Compare>& Join(Runtime& rt, dmultimap<K, V1, Compare>& a,
                                            dmap<K, V2, Compare>& b,
                                            const std::string& name = "join") {
  using Out = dmultimap<K, Joined<V1, V2>, Compare>;
  typename Out::local_type local;
  const Compare less;
  auto ib = b.local().begin();
  for (const auto& [k, v] : a.local()) {
    while (ib != b.local().end() && less(ib->first, k)) ++ib;
    if (ib != b.local().end() && !less(k, ib->first))
      local.emplace_back(k, Joined<V1, V2>{v, ib->second});
  }
  auto& out = internal::MapRegistry::Of(rt).Create<Out>(rt, name);
  out.AdoptLocal(std::move(local));
  return out;
}

// Folds map(k, v) with combine over all pairs in key order: R total = identity, then
// total = combine(total, map(k, v)) for each pair, on every node. Costs an all-gather of one
// (key, R) per pair: every node receives size() of them.
template <class R, class K, class V, class Compare, class MapFn, class CombineFn>
R Reduce(Runtime& rt, dmap<K, V, Compare>& m, R identity, MapFn map, CombineFn combine) {
  static_assert(std::is_trivially_copyable_v<R>);
  std::vector<std::pair<K, R>> mine;
  mine.reserve(m.local().size());
  for (const auto& [k, v] : m.local()) mine.emplace_back(k, map(k, v));
  R total = identity;
  for (const auto& [k, r] : internal::GatherSorted(rt, mine, Compare())) total = combine(total, r);
  return total;
}

// Per key of a multimap: the fold identity, combine(acc, v) over its values in order, as a
// dmap<K, R>. Local (the values of a key all live on its owner).
template <class R, class K, class V, class Compare, class CombineFn>
dmap<K, R, Compare>& ReduceByKey(Runtime& rt, dmultimap<K, V, Compare>& m, R identity,
                                 CombineFn combine, const std::string& name = "reduce_by_key") {
  using Out = dmap<K, R, Compare>;
  typename Out::local_type local;
  const Compare less;
  const auto& pairs = m.local();
  for (size_t i = 0; i < pairs.size();) {
    R acc = identity;
    size_t j = i;
    for (; j < pairs.size() && !less(pairs[i].first, pairs[j].first); ++j)
      acc = combine(acc, pairs[j].second);
    local.emplace_hint(local.end(), pairs[i].first, acc);
    i = j;
  }
  auto& out = internal::MapRegistry::Of(rt).Create<Out>(rt, name);
  out.AdoptLocal(std::move(local));
  return out;
}

// Sorts `v` in place, globally and stably by `less` (equal elements keep their index order);
// v keeps its partitioning. Simple rather than scalable: every node all-gathers the whole
// dvector (each node receives size() elements: O(n * nodes) bytes on the wire, O(n) memory per
// node), stable-sorts it (O(n log n) on every node) and keeps its own range.
template <class T, class Less>
void Sort(Runtime& rt, dvector<T>& v, Less less) {
  std::vector<std::byte> mine(v.raw_element(v.owned_begin()), v.raw_element(v.owned_end()));
  std::vector<T> all;
  all.reserve(static_cast<size_t>(v.size()));
  for (const auto& bytes : internal::AllGather(rt, std::move(mine))) {
    const size_t n = bytes.size() / sizeof(T);
    const size_t at = all.size();
    all.resize(at + n);
    if (n != 0) std::memcpy(static_cast<void*>(all.data() + at), bytes.data(), n * sizeof(T));
  }
  if (static_cast<int64_t>(all.size()) != v.size())
    throw std::runtime_error("Sort '" + v.name() + "': gathered the wrong number of elements");
  std::stable_sort(all.begin(), all.end(), less);
  std::copy(all.begin() + v.owned_begin(), all.begin() + v.owned_end(), v.data() + v.owned_begin());
  v.bump_version();
}

template <class T>
void Sort(Runtime& rt, dvector<T>& v) {
  Sort(rt, v, std::less<T>());
}

}  // namespace strads
