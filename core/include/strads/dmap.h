// dmap<K, V>: a distributed map, partitioned over nodes by a hash of the key (design.md
// section 3). dmultimap<K, V> (dmultimap.h) shares the partitioning and the machinery here.
//
// Partitioning: the owner of a key is KeyOwner(key, nodes) = Fnv1a(the sizeof(K) bytes of the
// key's object representation) % nodes (fnv1a.h, 64 bit). Not std::hash, which may differ
// between processes and standard libraries. So K must have a unique object representation
// (no padding bytes, and equal keys have equal bytes: no float or double keys), which is
// checked at compile time; V must be trivially copyable. Keys are ordered by Compare
// (std::less<K> by default) for every iteration and fold, so that nothing depends on the hash
// or on the number of nodes: local() is sorted by key, Gather() returns all pairs sorted by key.
// Compare must be a stateless strict weak order (it is default-constructed where needed), and
// keys equivalent under it must have equal bytes.
//
// Why not DdsBase: DdsBase models an indexed array (EvenSplit ownership of [0, size), a raw
// full-length element array, element access through AccessHook by index), and the loop engines
// iterate over every registered DdsBase by id. A hash-partitioned map fits none of that, and
// registering maps as DDS would shift the ids of the dvectors created after them. So maps have
// their own small base, MapBase (id, name, node), and their own registry with its own ids
// (creation order among maps, identical on every node): the runtime owns them, and they die
// with it, through one LoopState entry under the key "strads.maps" (runtime.h has no other
// per-runtime slot that this header could use without changing the runtime).
//
// Creation (collective: every node calls it, in the same order as every other operator):
//   auto& m = strads::MakeDMap<K, V>(rt, local_pairs);   // local_pairs: this node's share
// Each node contributes pairs; each pair is sent to its key's owner. Duplicate keys: the value
// kept is the first occurrence in node order, then in the order of each node's vector (that is,
// the first in the concatenation of all nodes' vectors), whatever owns the key.
//
// Access:
//  - size() is the global number of pairs, kept on every node (no communication).
//  - local() is this node's own pairs, sorted by key (no communication).
//  - Get(key), contains(key), operator[](key) and Gather() are COLLECTIVE driver accesses:
//    every node calls them with the same key in the same order (control replication), the
//    owner answers by broadcast, and every node returns the owner's answer. operator[] inserts a
//    value-initialised V when the key is missing (like std::map) and returns a reference: on the
//    owner to the stored value, elsewhere to a driver-side copy, so that a statement such as
//    `m[k] += 1` run on every node updates the owner's value exactly once.
//  - Not supported: any access from inside AsyncFor / SyncFor bodies (maps are not DDS, the
//    engines neither record nor prefetch them). Collective accesses from a thread other than
//    the one that created the map throw UsageError; other misuse (a body running on the driver
//    thread) is not detected.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "strads/errors.h"
#include "strads/fnv1a.h"
#include "strads/internal/bytes.h"
#include "strads/internal/node_services.h"
#include "strads/runtime.h"

namespace strads {

// FNV-1a (64 bit) of the key's bytes: the fixed hash behind map partitioning.
template <class K>
uint64_t KeyHash(const K& key) {
  static_assert(std::has_unique_object_representations_v<K>,
                "map keys need a unique object representation (no padding, no floating point)");
  Fnv1a hash;
  hash.Update(&key, sizeof(K));
  return hash.digest();
}

// The node owning `key` among `nodes`.
template <class K>
int KeyOwner(const K& key, int nodes) {
  return static_cast<int>(KeyHash(key) % static_cast<uint64_t>(nodes > 0 ? nodes : 1));
}

// What every distributed map has: identity (its own id space, see the top of this file).
class MapBase {
 public:
  MapBase(Runtime& rt, uint32_t id, std::string name)
      : rt_(&rt), id_(id), name_(std::move(name)), driver_(std::this_thread::get_id()) {}
  virtual ~MapBase() = default;
  MapBase(const MapBase&) = delete;
  MapBase& operator=(const MapBase&) = delete;

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  int node() const { return rt_->node(); }
  int nodes() const { return rt_->nodes(); }
  Runtime& runtime() const { return *rt_; }

  // Checkpoints (docs/checkpoints.md): this node's own pairs and the global size, written and
  // read through the map's accessors. Not collective: RestoreLocal reads what SaveLocal wrote
  // on the same node of a run with as many nodes. By default a kind cannot be checkpointed.
  virtual void SaveLocal(ByteWriter&) const {
    throw UsageError("map '" + name_ + "' cannot be checkpointed: its kind has no SaveLocal");
  }
  virtual void RestoreLocal(ByteReader&) {
    throw UsageError("map '" + name_ + "' cannot be restored: its kind has no RestoreLocal");
  }

 protected:
  // Throws UsageError unless called on the thread that created the map (the driver).
  void CheckDriver(const char* what) const;

 private:
  Runtime* rt_;
  uint32_t id_;
  std::string name_;
  std::thread::id driver_;
};

namespace internal {

// The runtime's maps (one LoopState entry, "strads.maps"); ids are creation order.
class MapRegistry : public internal::LoopState {
 public:
  static MapRegistry& Of(Runtime& rt);

  template <class M>
  M& Create(Runtime& rt, const std::string& name) {
    auto map = std::make_unique<M>(rt, static_cast<uint32_t>(maps_.size()), name);
    M& ref = *map;
    maps_.push_back(std::move(map));
    return ref;
  }
  size_t size() const { return maps_.size(); }
  MapBase& at(uint32_t id) { return *maps_.at(id); }

 private:
  std::vector<std::unique_ptr<MapBase>> maps_;
};

template <class K, class V>
void PutPairs(ByteWriter& w, const std::vector<std::pair<K, V>>& pairs) {
  w.Put<uint64_t>(pairs.size());
  for (const auto& [k, v] : pairs) {
    w.Put(k);
    w.Put(v);
  }
}

template <class K, class V>
void GetPairs(ByteReader& r, std::vector<std::pair<K, V>>& out) {
  const auto n = r.Get<uint64_t>();
  if (n > r.remaining() / (sizeof(K) + sizeof(V)))
    throw std::runtime_error("strads: internal map message too short");
  out.reserve(out.size() + n);
  for (uint64_t i = 0; i < n; ++i) {
    const K k = r.Get<K>();
    const V v = r.Get<V>();
    out.emplace_back(k, v);
  }
}

// Collective: sends every pair to its key's owner. Returns the pairs this node received, in
// the order of the concatenation of all nodes' vectors (source node, then position).
template <class K, class V>
std::vector<std::pair<K, V>> RouteByKey(Runtime& rt, const std::vector<std::pair<K, V>>& pairs) {
  const int nodes = rt.nodes();
  std::vector<std::vector<std::pair<K, V>>> to(nodes);
  for (const auto& kv : pairs) to[KeyOwner(kv.first, nodes)].push_back(kv);
  std::vector<std::vector<std::byte>> out(nodes);
  for (int p = 0; p < nodes; ++p) {
    ByteWriter w;
    PutPairs(w, to[p]);
    out[p] = w.Take();
  }
  std::vector<std::pair<K, V>> received;
  for (const auto& bytes : internal::AllToAll(rt, std::move(out))) {
    ByteReader r(bytes);
    GetPairs(r, received);
  }
  return received;
}

// Collective: every node's `mine`, concatenated in node order, then stably sorted by key.
template <class K, class V, class Compare>
std::vector<std::pair<K, V>> GatherSorted(Runtime& rt, const std::vector<std::pair<K, V>>& mine,
                                          const Compare& less) {
  ByteWriter w;
  PutPairs(w, mine);
  std::vector<std::pair<K, V>> all;
  for (const auto& bytes : internal::AllGather(rt, w.Take())) {
    ByteReader r(bytes);
    GetPairs(r, all);
  }
  std::stable_sort(all.begin(), all.end(),
                   [&less](const auto& a, const auto& b) { return less(a.first, b.first); });
  return all;
}

// Collective: the owner's `value` (present or not) on every node.
template <class V>
std::optional<V> BroadcastOptional(Runtime& rt, int owner, const std::optional<V>& value) {
  if (rt.nodes() == 1) return value;
  ByteWriter w;
  if (owner == rt.node()) {
    w.Put<uint8_t>(value.has_value() ? 1 : 0);
    if (value) w.Put(*value);
  }
  const auto bytes = internal::Broadcast(rt, owner, w.Take());
  ByteReader r(bytes);
  if (r.Get<uint8_t>() == 0) return std::nullopt;
  return r.Get<V>();
}

// FNV-1a over key bytes then value bytes of every pair, in the order given.
template <class K, class V>
uint64_t HashPairs(const std::vector<std::pair<K, V>>& pairs) {
  Fnv1a hash;
  for (const auto& [k, v] : pairs) {
    hash.Update(&k, sizeof(K));
    hash.Update(&v, sizeof(V));
  }
  return hash.digest();
}

// Throws UsageError if this node's `pairs` pairs, about `pair_bytes` each in the map's tree,
// on every node of the process at once, exceed nine tenths of what the process can still use
// (the machine, its cgroup, --memory-limit: memory_headroom.h). Called before a node builds its
// map from what it received: skewed keys can send one node most of the pairs.
void CheckPairsFitInMemory(Runtime& rt, const char* kind, const std::string& name, int64_t pairs,
                           size_t pair_bytes);

}  // namespace internal

template <class K, class V, class Compare = std::less<K>>
class dmap : public MapBase {
  static_assert(std::is_trivially_copyable_v<K>, "dmap keys must be trivially copyable");
  static_assert(std::is_trivially_copyable_v<V>, "dmap values must be trivially copyable");
  static_assert(std::has_unique_object_representations_v<K>,
                "dmap keys need a unique object representation (no padding, no floating point)");

 public:
  using key_type = K;
  using mapped_type = V;
  using key_compare = Compare;
  using local_type = std::map<K, V, Compare>;

  // Used by the operators; user code gets maps from MakeDMap, Join, ReduceByKey.
  dmap(Runtime& rt, uint32_t id, std::string name) : MapBase(rt, id, std::move(name)) {}

  // Global number of pairs (no communication).
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t local_size() const { return static_cast<int64_t>(local_.size()); }
  int owner(const K& key) const { return KeyOwner(key, nodes()); }
  bool owns(const K& key) const { return owner(key) == node(); }

  // This node's own pairs, sorted by key (no communication).
  const local_type& local() const { return local_; }
  // f(const K&, V&) on every own pair in key order (no communication): local updates.
  template <class F>
  void ForEachLocal(F f) {
    for (auto& [k, v] : local_) f(k, v);
  }

  // Collective: the value of `key`, or nullopt, on every node.
  std::optional<V> Get(const K& key) {
    CheckDriver("Get");
    std::optional<V> mine;
    const int o = owner(key);
    if (o == node()) {
      const auto it = local_.find(key);
      if (it != local_.end()) mine = it->second;
    }
    return internal::BroadcastOptional(runtime(), o, mine);
  }

  // Collective: whether `key` is present, on every node.
  bool contains(const K& key) {
    CheckDriver("contains");
    const int o = owner(key);
    std::optional<uint8_t> mine;
    if (o == node()) mine = local_.count(key) != 0 ? 1 : 0;
    return internal::BroadcastOptional(runtime(), o, mine).value_or(0) != 0;
  }

  // Collective: like std::map::operator[] (inserts V{} if missing); see the top of this file.
  V& operator[](const K& key) {
    CheckDriver("operator[]");
    const int o = owner(key);
    struct Answer {
      bool inserted;
      V value;
    };
    std::optional<Answer> mine;
    V* slot = nullptr;
    if (o == node()) {
      auto [it, inserted] = local_.try_emplace(key);
      slot = &it->second;
      mine = Answer{inserted, *slot};
    }
    const auto answer = internal::BroadcastOptional(runtime(), o, mine);
    if (answer->inserted) ++size_;
    if (slot == nullptr) {
      slot = &cache_[key];
      *slot = answer->value;
    }
    return *slot;
  }

  // Collective: all pairs, sorted by key, on every node. Costs size() pairs on every node.
  std::vector<std::pair<K, V>> Gather() {
    CheckDriver("Gather");
    return internal::GatherSorted(
        runtime(), std::vector<std::pair<K, V>>(local_.begin(), local_.end()), Compare());
  }
  // Collective: FNV-1a over (key bytes, value bytes) of all pairs in key order; equal on every
  // node and for every number of nodes (V's padding bytes, if any, must be deterministic).
  uint64_t Checksum() { return internal::HashPairs(Gather()); }

  // For the operators: installs this node's pairs (each must be owned here). Collective.
  void AdoptLocal(local_type pairs) {
    local_ = std::move(pairs);
    cache_.clear();
    size_ = internal::SumOverNodes(runtime(), static_cast<int64_t>(local_.size()));
  }

  void SaveLocal(ByteWriter& out) const override {
    out.Put(size_);
    internal::PutPairs(out, std::vector<std::pair<K, V>>(local_.begin(), local_.end()));
  }
  void RestoreLocal(ByteReader& in) override {
    const auto size = in.Get<int64_t>();
    std::vector<std::pair<K, V>> pairs;
    internal::GetPairs(in, pairs);
    local_ = local_type(pairs.begin(), pairs.end());
    cache_.clear();
    size_ = size;
  }

 private:
  local_type local_;
  // Driver-side copies of values owned elsewhere, returned by operator[] (stable addresses).
  std::map<K, V, Compare> cache_;
  int64_t size_ = 0;
};

// Collective: a dmap of the pairs all nodes contribute (each node passes its own share).
// Duplicate keys keep the first occurrence in the concatenation of all nodes' vectors.
template <class K, class V, class Compare = std::less<K>>
dmap<K, V, Compare>& MakeDMap(Runtime& rt, const std::vector<std::pair<K, V>>& local_pairs,
                              const std::string& name = "dmap") {
  const auto received = internal::RouteByKey(rt, local_pairs);
  // A tree node: the pair, three links and a colour, and the allocator's header.
  internal::CheckPairsFitInMemory(rt, "dmap", name, static_cast<int64_t>(received.size()),
                                  sizeof(std::pair<const K, V>) + 4 * sizeof(void*) + 16);
  auto& m = internal::MapRegistry::Of(rt).Create<dmap<K, V, Compare>>(rt, name);
  typename dmap<K, V, Compare>::local_type local;
  for (const auto& [k, v] : received) local.emplace(k, v);  // keeps the first
  m.AdoptLocal(std::move(local));
  return m;
}

}  // namespace strads
