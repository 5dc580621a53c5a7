// dmultimap<K, V>: a distributed multimap, partitioned over nodes like dmap (by the FNV-1a hash
// of the key's bytes, modulo the number of nodes; see dmap.h for the partitioning, the
// requirements on K and V, the registry, and why maps are not DdsBase).
//
// All pairs are kept. Order: by key (Compare), and pairs with equal keys in the order of the
// concatenation of all nodes' contributions (source node, then position in its vector). That
// order does not depend on the number of nodes as long as the concatenation does not.
//
//  - size() is global, local() this node's own pairs in that order (no communication).
//  - Get(key) (all values of a key), count(key), contains(key) and Gather() are COLLECTIVE
//    driver accesses: every node calls them with the same key in the same order.
//  - No operator[] (no single value to refer to). No access from AsyncFor / SyncFor bodies.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strads/dmap.h"

namespace strads {

template <class K, class V, class Compare = std::less<K>>
class dmultimap : public MapBase {
  static_assert(std::is_trivially_copyable_v<K>, "dmultimap keys must be trivially copyable");
  static_assert(std::is_trivially_copyable_v<V>, "dmultimap values must be trivially copyable");
  static_assert(
      std::has_unique_object_representations_v<K>,
      "dmultimap keys need a unique object representation (no padding, no floating point)");

 public:
  using key_type = K;
  using mapped_type = V;
  using key_compare = Compare;
  using local_type = std::vector<std::pair<K, V>>;

  // Used by the operators; user code gets multimaps from MakeDMultimap or Join.
  dmultimap(Runtime& rt, uint32_t id, std::string name) : MapBase(rt, id, std::move(name)) {}

  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t local_size() const { return static_cast<int64_t>(local_.size()); }
  int owner(const K& key) const { return KeyOwner(key, nodes()); }
  bool owns(const K& key) const { return owner(key) == node(); }

  // This node's own pairs, sorted by key, equal keys in contribution order.
  const local_type& local() const { return local_; }
  // The own pairs of `key` (empty unless owned here): [first, last) of local().
  std::pair<typename local_type::const_iterator, typename local_type::const_iterator> local_range(
      const K& key) const {
    const auto lo =
        std::lower_bound(local_.begin(), local_.end(), key,
                         [](const auto& kv, const K& k) { return Compare()(kv.first, k); });
    const auto hi = std::upper_bound(
        lo, local_.end(), key, [](const K& k, const auto& kv) { return Compare()(k, kv.first); });
    return {lo, hi};
  }
  // f(const K&, V&) on every own pair in order (no communication): local updates.
  template <class F>
  void ForEachLocal(F f) {
    for (auto& [k, v] : local_) f(static_cast<const K&>(k), v);
  }

  // Collective: all values of `key`, in order, on every node (empty if missing).
  std::vector<V> Get(const K& key) {
    CheckDriver("Get");
    const int o = owner(key);
    std::vector<V> values;
    if (o == node()) {
      const auto [lo, hi] = local_range(key);
      for (auto it = lo; it != hi; ++it) values.push_back(it->second);
    }
    if (nodes() == 1) return values;
    ByteWriter w;
    if (o == node()) w.PutVector(values);
    const auto bytes = internal::Broadcast(runtime(), o, w.Take());
    ByteReader r(bytes);
    return r.GetVector<V>();
  }
  // Collective: the number of values of `key`, on every node.
  int64_t count(const K& key) {
    CheckDriver("count");
    const int o = owner(key);
    std::optional<int64_t> mine;
    if (o == node()) {
      const auto [lo, hi] = local_range(key);
      mine = static_cast<int64_t>(hi - lo);
    }
    return internal::BroadcastOptional(runtime(), o, mine).value_or(0);
  }
  bool contains(const K& key) { return count(key) != 0; }

  // Collective: all pairs in order (by key, equal keys in contribution order), on every node.
  std::vector<std::pair<K, V>> Gather() {
    CheckDriver("Gather");
    return internal::GatherSorted(runtime(), local_, Compare());
  }
  // Collective: FNV-1a over (key bytes, value bytes) of Gather(); see dmap::Checksum.
  uint64_t Checksum() { return internal::HashPairs(Gather()); }

  // For the operators: installs this node's pairs, already in order. Collective.
  void AdoptLocal(local_type pairs) {
    local_ = std::move(pairs);
    size_ = internal::SumOverNodes(runtime(), static_cast<int64_t>(local_.size()));
  }

  void SaveLocal(ByteWriter& out) const override {
    out.Put(size_);
    internal::PutPairs(out, local_);
  }
  void RestoreLocal(ByteReader& in) override {
    const auto size = in.Get<int64_t>();
    local_type pairs;
    internal::GetPairs(in, pairs);
    local_ = std::move(pairs);
    size_ = size;
  }

 private:
  local_type local_;
  int64_t size_ = 0;
};

// Collective: a dmultimap of all pairs all nodes contribute (each node passes its own share).
template <class K, class V, class Compare = std::less<K>>
dmultimap<K, V, Compare>& MakeDMultimap(Runtime& rt,
                                        const std::vector<std::pair<K, V>>& local_pairs,
                                        const std::string& name = "dmultimap") {
  auto received = internal::RouteByKey(rt, local_pairs);
  std::stable_sort(received.begin(), received.end(),
                   [](const auto& a, const auto& b) { return Compare()(a.first, b.first); });
  auto& m = internal::MapRegistry::Of(rt).Create<dmultimap<K, V, Compare>>(rt, name);
  m.AdoptLocal(std::move(received));
  return m;
}

}  // namespace strads
