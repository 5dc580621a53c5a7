// DdsBase: what the runtime knows of every distributed data structure, independent of its
// element type: identity, size, ownership, raw storage and the access hook.
//
// Storage model: every node keeps a full-length array of the dvector's elements, of which it
// owns one contiguous range (EvenSplit over nodes); the rest of the array is a cache that the
// loop engines fill with prefetched elements. The runtime maps large arrays itself
// (dds_array.h), so pages a node never touches are never made resident. Inside a loop body an
// access is therefore `base[i]`: no lookup, no lock, no message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "strads/internal/bytes.h"
#include "strads/internal/even_split.h"

namespace strads {

namespace internal {
class DdsArray;
}  // namespace internal

class DdsBase;

namespace internal {
// The SyncFor engine's direct access (sync_params.h): while a SyncFor worker runs on this thread,
// `base` points at its table of element 0 of each parameter copy it has taken in this clock, by
// DDS id, for the first `count` ids; a null entry (and every id past `count`) means the access
// goes through the DDS's hook. dvector's operator[] reads the table before it calls the hook, so
// that a worker's accesses after its first in a clock are an index into its copy, without the
// virtual call. Only the engine writes it, and only for accesses its hook would have sent to the
// same address (no reconnaissance check, no Hybrid shared copy); it is reset when the worker
// leaves the thread and cleared when a clock begins.
struct DirectBases {
  std::byte* const* base = nullptr;
  uint32_t count = 0;
};
inline constinit thread_local DirectBases direct_bases;
}  // namespace internal

// Takes over element access when a DDS is not in a loop's fast path: in driver code, during
// reconnaissance, and in the data-parallel engine (per-thread copies). Returns the address the
// access must use. `write` is true for access through a non-const DDS reference.
class AccessHook {
 public:
  virtual ~AccessHook() = default;
  virtual std::byte* Access(DdsBase& dds, int64_t index, bool write) = 0;
};

class DdsBase {
 public:
  DdsBase(uint32_t id, std::string name, int64_t size, size_t element_bytes, int node, int nodes,
          std::byte* storage)
      : id_(id),
        name_(std::move(name)),
        size_(size),
        element_bytes_(element_bytes),
        node_(node),
        owners_(size, nodes > 0 ? nodes : 1),
        raw_(storage) {}
  virtual ~DdsBase() = default;
  DdsBase(const DdsBase&) = delete;
  DdsBase& operator=(const DdsBase&) = delete;

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  int64_t size() const { return size_; }
  size_t element_bytes() const { return element_bytes_; }

  // Ownership: node p owns [owners().begin(p), owners().end(p)).
  const EvenSplit& owners() const { return owners_; }
  int owner(int64_t i) const { return static_cast<int>(owners_.part_of(i)); }
  int64_t owned_begin() const { return owners_.begin(node_); }
  int64_t owned_end() const { return owners_.end(node_); }
  bool owns(int64_t i) const { return i >= owned_begin() && i < owned_end(); }

  std::byte* raw() { return raw_; }
  std::byte* raw_element(int64_t i) { return raw_ + static_cast<size_t>(i) * element_bytes_; }

  // Bumped whenever the contents may have changed (driver access, an operator that writes),
  // so that engines know when cached copies of it are stale.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

  // Sets element i from its value `start` and the values several nodes left it at (`afters`,
  // `count` contiguous elements, in merge order): see delta.h. Default: the last one wins.
  virtual void MergeChanges(int64_t i, const std::byte* start, const std::byte* afters,
                            size_t count) {
    (void)start;
    if (count > 0)
      std::memcpy(raw_element(i), afters + (count - 1) * element_bytes_, element_bytes_);
  }

  // Elements [begin, end) are no longer needed on this node (a cache it filled): gives their
  // whole pages back to the kernel where the storage allows (dds_array.h). Their values are
  // undefined afterwards. Returns the bytes given back.
  virtual size_t DiscardElements(int64_t begin, int64_t end) {
    (void)begin;
    (void)end;
    return 0;
  }

  // The array behind raw() when the DDS kind keeps one (dvector, dmatrix), else nullptr: for
  // the runtime's page management (dds_array.h).
  virtual internal::DdsArray* array() { return nullptr; }

  AccessHook* hook() const { return hook_; }
  void set_hook(AccessHook* hook) { hook_ = hook; }

  // Checkpoints (docs/checkpoints.md): this node's owned elements, in index order, written and
  // read through the DDS's own accessors (never its raw storage, whose layout is the kind's
  // business). RestoreOwned reads what SaveOwned wrote, for the same size and partition, and
  // bumps the version. Not collective. By default a DDS kind cannot be checkpointed (UsageError).
  virtual void SaveOwned(ByteWriter& out) const;
  virtual void RestoreOwned(ByteReader& in);

 protected:
  [[noreturn]] void OutOfRange(int64_t index) const;

  // Read by the inlined element access of the typed subclass: keep these first.
  AccessHook* hook_ = nullptr;

 private:
  uint32_t id_;
  std::string name_;
  int64_t size_;
  size_t element_bytes_;
  int node_;
  EvenSplit owners_;
  std::byte* raw_;
  uint64_t version_ = 0;
};

}  // namespace strads
