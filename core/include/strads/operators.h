// Pretraining operators on dvectors (paper Table 2). All are collective: every node calls them
// in the same order. Results never depend on the number of nodes or threads: reductions fold
// fixed chunks of kReduceChunk consecutive elements, each left to right on one node, then the
// chunk results left to right.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "strads/dvector.h"
#include "strads/errors.h"
#include "strads/fnv1a.h"
#include "strads/internal/node_services.h"
#include "strads/runtime.h"

namespace strads {

inline constexpr int64_t kReduceChunk = 4096;

// A dvector of n elements; node p initialises the elements it owns with init(i).
namespace internal {
// Throws UsageError, naming the DDS, its size and the machine's memory, if one node's share
// of `n` elements of `element_bytes` exceeds the machine's physical memory: sizes come from
// data and flags (an id near 2^31, --features 2147483647), and std::bad_alloc names nothing.
// Also if the process cannot still use that much (memory_headroom.h: other processes hold the
// rest, a cgroup's limit, --memory-limit).
// `kind` and `elements` name the DDS's type and its elements in the message: "dvector",
// "elements"; "dmatrix", "rows". `whole_on_each_node`: every node holds all n (an accumulator).
void CheckFitsInMemory(Runtime& rt, const char* kind, const std::string& name, int64_t n,
                       const char* elements, size_t element_bytes, bool whole_on_each_node = false);

}  // namespace internal

template <class T, class Init>
dvector<T>& MakeDVector(Runtime& rt, int64_t n, Init init, const std::string& name = "dvector") {
  if (n < 0) throw UsageError("MakeDVector '" + name + "': negative size " + std::to_string(n));
  internal::CheckFitsInMemory(rt, "dvector", name, n, "elements", sizeof(T));
  auto& v = internal::CreateDds<dvector<T>>(rt, name, n);
  for (int64_t i = v.owned_begin(); i < v.owned_end(); ++i) v.data()[i] = init(i);
  return v;
}

// Alias of MakeDVector, the name of the paper's Table 2.
template <class T, class Init>
dvector<T>& Create(Runtime& rt, int64_t n, Init init, const std::string& name = "dvector") {
  return MakeDVector<T>(rt, n, init, name);
}

namespace internal {

// Every node gets the elements [begin, end) of `v` it asks for (collective; ranges may be
// empty). Used so that a chunk straddling two owners is folded by one node.
void FetchRange(Runtime& rt, DdsBase& v, int64_t begin, int64_t end);

// The lines of `path` this node parses: [first, first + lines.size()) counting from 1.
struct FileShare {
  int64_t first_line = 1;
  std::vector<std::string> lines;
};
FileShare ReadFileShare(Runtime& rt, const std::string& path);

// Sends items parsed on this node (global item offset `offset`) to their owners in `v`.
void Redistribute(Runtime& rt, DdsBase& v, int64_t offset, const std::byte* items, int64_t count);

// Collective: throws the first error (lowest line) any node found, as "path:line: what".
void AgreeOnParseError(Runtime& rt, const std::string& path, int64_t line, const std::string& what);

}  // namespace internal

// Loads a text file into a dvector<T>: each node reads and parses its share of the lines with
// parser(std::string_view line) -> T, which throws std::exception on a malformed line. Blank
// lines and lines starting with '#' or '%' are skipped. Errors name the file and line.
template <class T, class Parser>
dvector<T>& ReadFromFile(Runtime& rt, const std::string& path, Parser parser) {
  internal::FileShare share = internal::ReadFileShare(rt, path);
  std::vector<T> items;
  int64_t bad_line = 0;
  std::string what;
  for (size_t k = 0; k < share.lines.size() && bad_line == 0; ++k) {
    std::string_view line = share.lines[k];
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos || line[start] == '#' || line[start] == '%') continue;
    try {
      items.push_back(parser(line));
    } catch (const std::exception& e) {
      bad_line = share.first_line + static_cast<int64_t>(k);
      what = e.what();
    }
  }
  internal::AgreeOnParseError(rt, path, bad_line, what);
  const auto counts = internal::AllGatherValue<int64_t>(rt, static_cast<int64_t>(items.size()));
  int64_t total = 0, offset = 0;
  for (int p = 0; p < rt.nodes(); ++p) {
    if (p == rt.node()) offset = total;
    total += counts[p];
  }
  if (total == 0) throw CollectiveUsageError(path + ": no data lines");
  internal::CheckFitsInMemory(rt, "dvector", path, total, "elements", sizeof(T));
  auto& v = internal::CreateDds<dvector<T>>(rt, path, total);
  internal::Redistribute(rt, v, offset, reinterpret_cast<const std::byte*>(items.data()),
                         static_cast<int64_t>(items.size()));
  return v;
}

template <class T, class Parser>
dvector<T>& Load(Runtime& rt, const std::string& path, Parser parser) {
  return ReadFromFile<T>(rt, path, parser);
}

// Folds map(v[i]) with combine over all elements (see the top of this file for the order).
// Takes v const: fetching a chunk's tail fills this node's cache of v, not its values.
template <class R, class T, class MapFn, class CombineFn>
R Reduce(Runtime& rt, const dvector<T>& v, R identity, MapFn map, CombineFn combine) {
  static_assert(std::is_trivially_copyable_v<R>);
  R total = identity;
  if (internal::ReplayedReduction(rt, &total, sizeof(R))) return total;
  // This node folds the chunks that start in its range; it fetches the tail of the last one.
  const int64_t n = v.size();
  const int64_t first_chunk = (v.owned_begin() + kReduceChunk - 1) / kReduceChunk;
  const int64_t end_chunk = (v.owned_end() + kReduceChunk - 1) / kReduceChunk;
  const int64_t tail_end = std::min(n, end_chunk * kReduceChunk);
  internal::FetchRange(rt, const_cast<dvector<T>&>(v), std::min(v.owned_end(), tail_end), tail_end);
  std::vector<R> partials;
  const T* data = v.data();
  for (int64_t c = first_chunk; c < end_chunk; ++c) {
    R acc = identity;
    for (int64_t i = c * kReduceChunk; i < std::min(n, (c + 1) * kReduceChunk); ++i)
      acc = combine(acc, map(data[i]));
    partials.push_back(acc);
  }
  ByteWriter w;
  w.PutVector(partials);
  // The functions' types tell call sites apart (a Sum and a Max of one dvector, on nodes that
  // disagree about which to call), the same in every process of one program; fixed per
  // instantiation, so hashed once.
  static const std::string functions = [] {
    Fnv1a hash;
    for (const char* type : {typeid(MapFn).name(), typeid(CombineFn).name()})
      hash.Update(type, std::strlen(type));
    return hash.hex().substr(0, 8);
  }();
  const std::string what = "Reduce of '" + v.name() + "' (functions " + functions + ")";
  for (const auto& bytes : internal::AllGather(rt, w.Take(), what)) {
    ByteReader r(bytes);
    for (const R& p : r.GetVector<R>()) total = combine(total, p);
  }
  internal::NoteReduction(rt, &total, sizeof(R));
  return total;
}

template <class T, class MapFn>
auto Sum(Runtime& rt, const dvector<T>& v, MapFn map) {
  using R = std::decay_t<decltype(map(std::declval<const T&>()))>;
  return Reduce(rt, v, R{}, map, [](const R& a, const R& b) { return a + b; });
}

template <class T, class MapFn>
auto Max(Runtime& rt, const dvector<T>& v, MapFn map) {
  using R = std::decay_t<decltype(map(std::declval<const T&>()))>;
  if (v.size() == 0) throw UsageError("Max of the empty dvector '" + v.name() + "'");
  // -infinity where R has one: lowest() would turn a maximum of -infinities into lowest().
  const R lowest = std::numeric_limits<R>::has_infinity ? -std::numeric_limits<R>::infinity()
                                                        : std::numeric_limits<R>::lowest();
  return Reduce(rt, v, lowest, map, [](const R& a, const R& b) { return a < b ? b : a; });
}

template <class T, class MapFn>
auto Min(Runtime& rt, const dvector<T>& v, MapFn map) {
  using R = std::decay_t<decltype(map(std::declval<const T&>()))>;
  if (v.size() == 0) throw UsageError("Min of the empty dvector '" + v.name() + "'");
  const R highest = std::numeric_limits<R>::has_infinity ? std::numeric_limits<R>::infinity()
                                                         : std::numeric_limits<R>::max();
  return Reduce(rt, v, highest, map, [](const R& a, const R& b) { return b < a ? b : a; });
}

// In place: f(T&) on every element (each node on its own; no communication).
template <class T, class F>
void Transform(dvector<T>& v, F f) {
  for (T& x : v.local()) f(x);  // local() bumps the version
}

// A new dvector of f(v[i]), partitioned like v.
template <class U, class T, class F>
dvector<U>& Map(Runtime& rt, const dvector<T>& v, F f, const std::string& name = "map") {
  auto& out = internal::CreateDds<dvector<U>>(rt, name, v.size());
  for (int64_t i = v.owned_begin(); i < v.owned_end(); ++i) out.data()[i] = f(v.data()[i]);
  return out;
}

// A new dvector holding v's elements, partitioned like v (each node copies its own range).
template <class T>
dvector<T>& Copy(Runtime& rt, const dvector<T>& v, const std::string& name = "copy") {
  return Map<T>(
      rt, v, [](const T& x) { return x; }, name);
}

// dst's elements take src's values. Collective in effect (every node copies its own range, no
// communication); the sizes must be equal, hence the partitions.
template <class T>
void Assign(dvector<T>& dst, const dvector<T>& src) {
  if (dst.size() != src.size())
    throw CollectiveUsageError("Assign: '" + dst.name() + "' has " + std::to_string(dst.size()) +
                               " elements, '" + src.name() + "' " + std::to_string(src.size()));
  std::copy(src.data() + dst.owned_begin(), src.data() + dst.owned_end(),
            dst.data() + dst.owned_begin());
  dst.bump_version();
}

// FNV-1a over the raw bytes of every element of each DDS in index order, one DDS after the
// other: the `checksum:` line of every example. Equal on every node.
uint64_t Checksum(Runtime& rt, std::initializer_list<DdsBase*> all);
uint64_t Checksum(Runtime& rt, const std::vector<DdsBase*>& all);

}  // namespace strads
