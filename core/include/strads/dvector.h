// dvector<T>: a distributed vector, partitioned over nodes by index ranges.
//
// T must be trivially copyable (elements travel between nodes as bytes). Create one with
// MakeDVector or ReadFromFile (operators.h); the runtime owns it and hands out references.
//
// operator[] is valid everywhere:
//  - inside an AsyncFor body it is an index into contiguous memory (prefetched elements);
//  - in driver code it is a collective access: every node must make the same access in the
//    same order (control replication), and the owner's value is returned on every node;
//  - during reconnaissance and inside SyncFor bodies the runtime redirects it (AccessHook).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "strads/delta.h"
#include "strads/internal/dds.h"
#include "strads/internal/dds_array.h"

namespace strads {

template <class T>
class dvector : public DdsBase {
  static_assert(std::is_trivially_copyable_v<T>, "dvector elements must be trivially copyable");

 public:
  using value_type = T;

  // Used by the operators; user code gets dvectors from MakeDVector / ReadFromFile.
  dvector(uint32_t id, std::string name, int64_t size, int node, int nodes)
      : dvector(id, std::move(name), size, node, nodes,
                internal::DdsArray(static_cast<size_t>(size) * sizeof(T), alignof(T))) {}

  // Non-const access: counts as a write for the schedulers.
  T& operator[](int64_t i) {
    if (hook_ != nullptr) [[unlikely]]
      return Hooked(i, true);
    return data_[i];
  }
  // Const access: a read.
  const T& operator[](int64_t i) const {
    if (hook_ != nullptr) [[unlikely]]
      return const_cast<dvector*>(this)->Hooked(i, false);
    return data_[i];
  }

  int64_t size() const { return DdsBase::size(); }
  const T* data() const { return data_; }

  // This node's own elements, for local iteration (no communication). The mutable view may be
  // written through, so it bumps the version: what is kept by version (the driver's copies of
  // other nodes' blocks, driver_access_hook.h) is no longer current.
  std::span<T> local() {
    bump_version();
    return {data_ + owned_begin(), static_cast<size_t>(owned_end() - owned_begin())};
  }
  std::span<const T> local() const {
    return {data_ + owned_begin(), static_cast<size_t>(owned_end() - owned_begin())};
  }
  void MergeChanges(int64_t i, const std::byte* start, const std::byte* afters,
                    size_t count) override {
    T s;
    std::memcpy(&s, start, sizeof(T));
    std::vector<T> a(count);
    std::memcpy(a.data(), afters, count * sizeof(T));
    Delta<T>::Merge(data_[i], s, a);
  }

  void SaveOwned(ByteWriter& out) const override {
    const auto own = local();
    out.PutRaw(own.data(), own.size_bytes());
  }
  void RestoreOwned(ByteReader& in) override {
    const auto own = local();  // bumps the version
    in.GetRaw(own.data(), own.size_bytes());
  }

  // The node's full-length array (owned range plus cache), for engines and operators.
  T* data() { return data_; }

  internal::DdsArray* array() override { return &array_; }

  size_t DiscardElements(int64_t begin, int64_t end) override {
    return array_.Discard(static_cast<size_t>(begin) * sizeof(T),
                          static_cast<size_t>(end) * sizeof(T));
  }

 private:
  dvector(uint32_t id, std::string name, int64_t size, int node, int nodes,
          internal::DdsArray array)
      : DdsBase(id, std::move(name), size, sizeof(T), node, nodes, array.data()),
        array_(std::move(array)),
        data_(reinterpret_cast<T*>(array_.data())) {}

  // A SyncFor worker's copy taken this clock is indexed directly (internal::DirectBases); any
  // other hooked access is the hook's to redirect. Both are bounds-checked.
  T& Hooked(int64_t i, bool write) {
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(DdsBase::size())) OutOfRange(i);
    const internal::DirectBases& direct = internal::direct_bases;
    if (const uint32_t d = id(); d < direct.count) [[likely]]
      if (std::byte* base = direct.base[d]; base != nullptr) [[likely]]
        return reinterpret_cast<T*>(base)[i];
    return HookAccess(i, write);
  }
  // Out of line: AsyncFor's flattened bodies (async_for.h, RunFlat) would inline it otherwise.
  [[gnu::noinline]] T& HookAccess(int64_t i, bool write) {
    return *reinterpret_cast<T*>(hook_->Access(*this, i, write));
  }

  internal::DdsArray array_;
  T* data_;
};

}  // namespace strads
