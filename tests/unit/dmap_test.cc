// dmap / dmultimap (dmap.h, dmultimap.h) and the relational operators (relational.h): building,
// collective access, Join, ReduceByKey, Reduce, Sort. Every result must be the same for every
// number of nodes. Drivers only record into per-node slots; the checks run afterwards.
#include "strads/dmap.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "strads/dmultimap.h"
#include "strads/dvector.h"
#include "strads/errors.h"
#include "strads/fnv1a.h"
#include "strads/internal/even_split.h"
#include "strads/internal/node_services.h"
#include "strads/operators.h"
#include "strads/relational.h"
#include "strads/runtime.h"
#include "test_nodes.h"

namespace {

using strads::Runtime;
using strads::testing::RunNodes;
using KV = std::pair<int64_t, int64_t>;

constexpr int kNodeCounts[] = {1, 2, 4};

// The global input: pair i is contributed by the node whose EvenSplit share holds i.
std::vector<KV> Input(int64_t n, int64_t keys, int64_t salt) {
  std::vector<KV> all;
  for (int64_t i = 0; i < n; ++i)
    all.emplace_back((i * 7919 + salt) % keys - keys / 3, i * 3 + salt);
  return all;
}

template <class T>
std::vector<T> ShareOf(const std::vector<T>& all, const Runtime& rt) {
  const strads::EvenSplit split(static_cast<int64_t>(all.size()), rt.nodes());
  return {all.begin() + split.begin(rt.node()), all.begin() + split.end(rt.node())};
}

// std::map semantics: the first occurrence of a key wins.
std::map<int64_t, int64_t> FirstWins(const std::vector<KV>& all) {
  std::map<int64_t, int64_t> m;
  for (const auto& [k, v] : all) m.emplace(k, v);
  return m;
}

std::vector<KV> StableByKey(std::vector<KV> all) {
  std::stable_sort(all.begin(), all.end(),
                   [](const KV& a, const KV& b) { return a.first < b.first; });
  return all;
}

template <class K, class V>
uint64_t PairsHash(const std::vector<std::pair<K, V>>& pairs) {
  strads::Fnv1a h;
  for (const auto& [k, v] : pairs) {
    h.Update(&k, sizeof k);
    h.Update(&v, sizeof v);
  }
  return h.digest();
}

uint64_t Bits(double x) { return std::bit_cast<uint64_t>(x); }

}  // namespace

TEST_CASE("dmap: building keeps the first occurrence, partitions by FNV-1a of the key") {
  const auto input = Input(2000, 501, 0);
  const auto serial = FirstWins(input);
  const std::vector<KV> expect(serial.begin(), serial.end());
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<int64_t> sizes(p), local_sizes(p);
    std::vector<std::vector<KV>> gathered(p);
    std::vector<uint64_t> sums(p);
    // char, not bool: in-process nodes write their own entries at once, and vector<bool>'s share
    // a word (a data race TSan found).
    std::vector<char> placed_right(p, 0), sorted(p, 0);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& m = strads::MakeDMap<int64_t, int64_t>(rt, ShareOf(input, rt));
      const int me = rt.node();
      sizes[me] = m.size();
      local_sizes[me] = m.local_size();
      bool ok = true;
      for (const auto& [k, v] : m.local()) {
        strads::Fnv1a h;
        h.Update(&k, sizeof k);
        ok = ok && m.owns(k) && static_cast<int>(h.digest() % static_cast<uint64_t>(p)) == me;
      }
      placed_right[me] = ok;
      sorted[me] = std::is_sorted(m.local().begin(), m.local().end());
      gathered[me] = m.Gather();
      sums[me] = m.Checksum();
    });
    REQUIRE(rc == 0);
    int64_t total = 0;
    for (int q = 0; q < p; ++q) {
      CHECK(sizes[q] == static_cast<int64_t>(expect.size()));
      CHECK(placed_right[q]);
      CHECK(sorted[q]);
      CHECK(gathered[q] == expect);
      CHECK(sums[q] == PairsHash(expect));
      total += local_sizes[q];
    }
    CHECK(total == static_cast<int64_t>(expect.size()));
  }
}

TEST_CASE("dmap: collective Get, contains and subscript from every node") {
  const auto input = Input(300, 97, 5);
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<std::vector<int64_t>> seen(p);
    std::vector<std::vector<KV>> final_pairs(p);
    std::vector<int64_t> final_size(p);
    auto script = [](auto& m, auto&& get, auto&& contains, std::vector<int64_t>& log) {
      for (int64_t k = -40; k < 80; k += 3) {  // present and missing keys
        const std::optional<int64_t> v = get(m, k);
        log.push_back(v.has_value() ? *v : -999);
        log.push_back(contains(m, k) ? 1 : 0);
      }
      log.push_back(static_cast<int64_t>(m.size()));
      log.push_back(m[1000]);  // missing: inserts 0
      log.push_back(static_cast<int64_t>(m.size()));
      m[1] += 5;
      m[1001] = m[2] + m[3];  // several references alive at once
      const int64_t x = m[4] + m[5] + m[1];
      log.push_back(x);
      for (int64_t k = 0; k < 40; ++k) m[k] = m[k] * 2 + m[k + 1];
      log.push_back(m[1001]);
      log.push_back(static_cast<int64_t>(m.size()));
    };
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& m = strads::MakeDMap<int64_t, int64_t>(rt, ShareOf(input, rt));
      script(
          m, [](auto& d, int64_t k) { return d.Get(k); },
          [](auto& d, int64_t k) { return d.contains(k); }, seen[rt.node()]);
      final_pairs[rt.node()] = m.Gather();
      final_size[rt.node()] = m.size();
    });
    REQUIRE(rc == 0);
    // The same script on a std::map.
    auto serial = FirstWins(input);
    std::vector<int64_t> expect_log;
    script(
        serial,
        [](auto& d, int64_t k) {
          const auto it = d.find(k);
          return it == d.end() ? std::nullopt : std::optional<int64_t>(it->second);
        },
        [](auto& d, int64_t k) { return d.count(k) != 0; }, expect_log);
    const std::vector<KV> expect(serial.begin(), serial.end());
    for (int q = 0; q < p; ++q) {
      CHECK(seen[q] == expect_log);
      CHECK(final_pairs[q] == expect);
      CHECK(final_size[q] == static_cast<int64_t>(expect.size()));
    }
  }
}

TEST_CASE("dmultimap: all pairs, by key then contribution order; Get, count, ReduceByKey") {
  const auto input = Input(1500, 211, 3);
  const auto expect = StableByKey(input);
  // ReduceByKey with an order-sensitive fold.
  std::map<int64_t, double> folded;
  for (const auto& [k, v] : input) {
    auto [it, fresh] = folded.try_emplace(k, 0.25);
    it->second = it->second * 0.5 + static_cast<double>(v);
  }
  const std::vector<std::pair<int64_t, double>> expect_folded(folded.begin(), folded.end());
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<std::vector<KV>> gathered(p);
    std::vector<std::vector<std::vector<int64_t>>> gets(p);
    std::vector<std::vector<int64_t>> counts(p);
    std::vector<int64_t> sizes(p);
    std::vector<uint64_t> sums(p);
    std::vector<std::vector<std::pair<int64_t, double>>> reduced(p);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& mm = strads::MakeDMultimap<int64_t, int64_t>(rt, ShareOf(input, rt));
      const int me = rt.node();
      sizes[me] = mm.size();
      gathered[me] = mm.Gather();
      sums[me] = mm.Checksum();
      for (int64_t k = -80; k < 150; k += 7) {
        gets[me].push_back(mm.Get(k));
        counts[me].push_back(mm.count(k) + (mm.contains(k) ? 1000 : 0));
      }
      auto& r = strads::ReduceByKey(
          rt, mm, 0.25, [](double acc, int64_t v) { return acc * 0.5 + static_cast<double>(v); });
      reduced[me] = r.Gather();
    });
    REQUIRE(rc == 0);
    for (int q = 0; q < p; ++q) {
      CHECK(sizes[q] == static_cast<int64_t>(input.size()));
      CHECK(gathered[q] == expect);
      CHECK(sums[q] == PairsHash(expect));
      CHECK(reduced[q] == expect_folded);
      size_t probe = 0;
      for (int64_t k = -80; k < 150; k += 7, ++probe) {
        std::vector<int64_t> values;
        for (const auto& [kk, v] : expect)
          if (kk == k) values.push_back(v);
        CHECK(gets[q][probe] == values);
        CHECK(counts[q][probe] ==
              static_cast<int64_t>(values.size()) + (values.empty() ? 0 : 1000));
      }
    }
  }
}

TEST_CASE("Join: dmap with dmap and dmultimap with dmap, identical for every node count") {
  const auto in1 = Input(900, 300, 1);
  std::vector<std::pair<int64_t, double>> in2;
  for (int64_t i = 0; i < 700; ++i)
    in2.emplace_back((i * 3) % 450 - 100, static_cast<double>(i) * 0.5);
  const auto m1 = FirstWins(in1);
  std::map<int64_t, double> m2;
  for (const auto& [k, v] : in2) m2.emplace(k, v);
  using J = strads::Joined<int64_t, double>;
  std::vector<std::pair<int64_t, J>> expect_map, expect_multi;
  for (const auto& [k, v] : m1)
    if (m2.count(k)) expect_map.emplace_back(k, J{v, m2.at(k)});
  for (const auto& [k, v] : StableByKey(in1))
    if (m2.count(k)) expect_multi.emplace_back(k, J{v, m2.at(k)});
  REQUIRE(!expect_map.empty());
  REQUIRE(expect_multi.size() > expect_map.size());
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<std::vector<std::pair<int64_t, J>>> joined(p), joined_multi(p);
    std::vector<int64_t> sizes(p);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& a = strads::MakeDMap<int64_t, int64_t>(rt, ShareOf(in1, rt));
      auto& b = strads::MakeDMap<int64_t, double>(rt, ShareOf(in2, rt));
      auto& am = strads::MakeDMultimap<int64_t, int64_t>(rt, ShareOf(in1, rt));
      auto& j = strads::Join(rt, a, b);
      auto& jm = strads::Join(rt, am, b);
      sizes[rt.node()] = j.size();
      joined[rt.node()] = j.Gather();
      joined_multi[rt.node()] = jm.Gather();
    });
    REQUIRE(rc == 0);
    for (int q = 0; q < p; ++q) {
      CHECK(sizes[q] == static_cast<int64_t>(expect_map.size()));
      CHECK(joined[q] == expect_map);
      CHECK(joined_multi[q] == expect_multi);
    }
  }
}

TEST_CASE("Reduce over a dmap folds in key order, identically for every node count") {
  std::vector<std::pair<int64_t, double>> input;
  const double pattern[] = {1e16, 1.0, -1e16, 1.0, 3.5, -2.0};
  for (int64_t i = 0; i < 600; ++i) input.emplace_back((i * 37) % 601, pattern[(i * 5) % 6]);
  std::map<int64_t, double> serial;
  for (const auto& [k, v] : input) serial.emplace(k, v);
  double expect = 0, reversed = 0;
  for (const auto& [k, v] : serial) expect += v * 1.0;
  for (auto it = serial.rbegin(); it != serial.rend(); ++it) reversed += it->second;
  REQUIRE(Bits(expect) != Bits(reversed));  // the data detect a wrong order
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<double> sums(p), empty_sums(p);
    std::vector<int64_t> empty_sizes(p);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& m = strads::MakeDMap<int64_t, double>(rt, ShareOf(input, rt));
      sums[rt.node()] = strads::Reduce(
          rt, m, 0.0, [](int64_t, double v) { return v * 1.0; },
          [](double a, double b) { return a + b; });
      auto& none = strads::MakeDMap<int64_t, double>(rt, {});
      empty_sizes[rt.node()] = none.size() + (none.Get(3).has_value() ? 100 : 0);
      empty_sums[rt.node()] = strads::Reduce(
          rt, none, 42.0, [](int64_t, double v) { return v; },
          [](double a, double b) { return a + b; });
    });
    REQUIRE(rc == 0);
    for (int q = 0; q < p; ++q) {
      CHECK(Bits(sums[q]) == Bits(expect));
      CHECK(empty_sizes[q] == 0);
      CHECK(empty_sums[q] == 42.0);
    }
  }
}

namespace {
struct Item {
  int32_t key;
  int32_t index;
  friend bool operator==(const Item&, const Item&) = default;
};
}  // namespace

TEST_CASE("Sort: global and stable, identical for every node count") {
  for (int64_t n : {0, 1, 5, 1003}) {
    std::vector<Item> expect(n);
    for (int64_t i = 0; i < n; ++i)
      expect[i] = {static_cast<int32_t>((i * 37) % 17), static_cast<int32_t>(i)};
    auto by_key = [](const Item& a, const Item& b) { return a.key < b.key; };
    std::stable_sort(expect.begin(), expect.end(), by_key);
    for (int p : kNodeCounts) {
      CAPTURE(n);
      CAPTURE(p);
      std::vector<std::vector<Item>> parts(p), reads(p);
      std::vector<uint64_t> sums(p);
      const int rc = RunNodes(p, 1, [&](Runtime& rt) {
        auto& v = strads::MakeDVector<Item>(rt, n, [](int64_t i) {
          return Item{static_cast<int32_t>((i * 37) % 17), static_cast<int32_t>(i)};
        });
        strads::Sort(rt, v, by_key);
        parts[rt.node()].assign(v.local().begin(), v.local().end());
        const auto& cv = v;
        for (int64_t i = 0; i < n; i += 97) reads[rt.node()].push_back(cv[i]);
        sums[rt.node()] = strads::Checksum(rt, {&v});
      });
      REQUIRE(rc == 0);
      std::vector<Item> whole, sampled;
      for (const auto& part : parts) whole.insert(whole.end(), part.begin(), part.end());
      for (int64_t i = 0; i < n; i += 97) sampled.push_back(expect[i]);
      CHECK(whole == expect);
      strads::Fnv1a h;
      h.Update(expect.data(), expect.size() * sizeof(Item));
      for (int q = 0; q < p; ++q) {
        CHECK(reads[q] == sampled);
        CHECK(sums[q] == h.digest());
      }
    }
  }
}

TEST_CASE("maps have their own ids and do not shift dvector ids") {
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<std::vector<uint32_t>> ids(p);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& a = strads::MakeDVector<int>(rt, 4, [](int64_t i) { return static_cast<int>(i); });
      auto& m = strads::MakeDMap<int64_t, int>(rt, {{1, 2}});
      auto& b = strads::MakeDVector<int>(rt, 4, [](int64_t i) { return static_cast<int>(i); });
      auto& mm = strads::MakeDMultimap<int64_t, int>(rt, {{1, 2}});
      ids[rt.node()] = {a.id(), m.id(), b.id(), mm.id(), strads::internal::NextDdsId(rt)};
    });
    REQUIRE(rc == 0);
    for (int q = 0; q < p; ++q) CHECK(ids[q] == std::vector<uint32_t>{0, 0, 1, 1, 2});
  }
}

TEST_CASE("dmap: struct keys, and collective access from a non-driver thread is refused") {
  struct Key {
    int32_t a, b;
    bool operator<(const Key& o) const { return a != o.a ? a < o.a : b < o.b; }
  };
  std::vector<std::pair<Key, double>> input;
  for (int i = 0; i < 200; ++i) input.push_back({Key{i % 13, i % 7}, i * 0.125});
  std::map<Key, double> serial;
  for (const auto& [k, v] : input) serial.emplace(k, v);
  std::vector<std::pair<int32_t, int32_t>> expect_keys;
  std::vector<double> expect_values;
  for (const auto& [k, v] : serial) expect_keys.emplace_back(k.a, k.b), expect_values.push_back(v);
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<std::vector<std::pair<int32_t, int32_t>>> keys(p);
    std::vector<std::vector<double>> values(p);
    std::vector<int> refused(p, 0);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& m = strads::MakeDMap<Key, double>(rt, ShareOf(input, rt));
      for (const auto& [k, v] : m.Gather()) {
        keys[rt.node()].emplace_back(k.a, k.b);
        values[rt.node()].push_back(v);
      }
      std::thread other([&] {
        try {
          m.Get(Key{1, 1});
        } catch (const strads::UsageError&) {
          refused[rt.node()] = 1;
        }
      });
      other.join();
    });
    REQUIRE(rc == 0);
    for (int q = 0; q < p; ++q) {
      CHECK(keys[q] == expect_keys);
      CHECK(values[q] == expect_values);
      CHECK(refused[q] == 1);
    }
  }
}

// A node builds its map's tree from the pairs it received; skewed keys can send it most of
// them. Past what the process can still use (here --memory-limit) that is refused, not left
// to the OOM killer; with room it is not.
TEST_CASE("dmap: a map whose tree would not fit in what the process can still use is refused") {
  const auto resident_mb = [] {
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    long long size = 0, resident = 0;
    REQUIRE(statm != nullptr);
    REQUIRE(std::fscanf(statm, "%lld %lld", &size, &resident) == 2);
    std::fclose(statm);
    return resident * 4096 / (1 << 20);
  };
  const auto make = [](Runtime& rt) {
    std::vector<KV> pairs;  // a million pairs a node: about 128 MB of tree for the two nodes
    for (int64_t k = 0; k < 1000000; ++k) pairs.emplace_back(k * 2 + rt.node(), k);
    strads::MakeDMap<int64_t, int64_t>(rt, pairs);
  };
  const std::string tight = std::to_string(resident_mb() + 80) + "M";  // the pairs take 32
  CHECK(RunNodes(2, 1, make, {"--memory-limit", tight}) == 2);
  const std::string room = std::to_string(resident_mb() + 1024) + "M";
  CHECK(RunNodes(2, 1, make, {"--memory-limit", room}) == 0);
}
