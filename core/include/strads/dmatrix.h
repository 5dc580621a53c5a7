// dmatrix<T>: a distributed matrix of `rows` rows of `width` elements, the width set at run
// time (an embedding width from a flag, say). Row i is one DDS element of width * sizeof(T)
// bytes, so everything a dvector does holds per row: partitioning over nodes by row ranges,
// reconnaissance and access checking (a row access is one element access for conflicts),
// prefetches and exchanges, the lock engine's merge, digests, checkpoints, --memory-report.
// Create one with MakeDMatrix; the runtime owns it and hands out references.
//
// operator[](i) is a std::span over row i, valid where a dvector's operator[] is (see
// dvector.h): inside an AsyncFor body it points into contiguous memory; in driver code it is a
// collective access; during reconnaissance the runtime redirects it. As with a dvector, access
// through a non-const dmatrix counts as a write of the whole row, through a const one as a read.
// The span is valid until the body (or driver statement) ends: do not keep it across calls.
//
// Lock engine merge: each column of a row merges as a dvector<T> element would (Delta<T>,
// delta.h: arithmetic T averages the nodes' changes).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "strads/delta.h"
#include "strads/errors.h"
#include "strads/internal/dds.h"
#include "strads/internal/dds_array.h"
#include "strads/internal/node_services.h"
#include "strads/operators.h"
#include "strads/runtime.h"

namespace strads {

template <class T>
class dmatrix : public DdsBase {
  static_assert(std::is_trivially_copyable_v<T>, "dmatrix elements must be trivially copyable");

 public:
  using value_type = T;

  // Used by MakeDMatrix; `width` >= 1.
  dmatrix(uint32_t id, std::string name, int64_t rows, size_t width, int node, int nodes)
      : dmatrix(id, std::move(name), rows, width, node, nodes,
                internal::DdsArray(static_cast<size_t>(rows) * width * sizeof(T), alignof(T))) {}

  // Non-const access: a write of row i.
  std::span<T> operator[](int64_t i) {
    if (hook_ != nullptr) [[unlikely]]
      return Hooked(i, true);
    return {data_ + static_cast<size_t>(i) * width_, width_};
  }
  // Const access: a read of row i.
  std::span<const T> operator[](int64_t i) const {
    if (hook_ != nullptr) [[unlikely]]
      return const_cast<dmatrix*>(this)->Hooked(i, false);
    return {data_ + static_cast<size_t>(i) * width_, width_};
  }

  int64_t rows() const { return DdsBase::size(); }
  size_t width() const { return width_; }

  // This node's own rows, row after row (no communication). The mutable view bumps the
  // version, as dvector's does.
  std::span<T> local() {
    bump_version();
    return {data_ + static_cast<size_t>(owned_begin()) * width_,
            static_cast<size_t>(owned_end() - owned_begin()) * width_};
  }
  std::span<const T> local() const {
    return {data_ + static_cast<size_t>(owned_begin()) * width_,
            static_cast<size_t>(owned_end() - owned_begin()) * width_};
  }
  // The node's full-length array (owned rows plus cache), for engines and operators.
  T* data() { return data_; }
  const T* data() const { return data_; }

  internal::DdsArray* array() override { return &array_; }

  size_t DiscardElements(int64_t begin, int64_t end) override {
    return array_.Discard(static_cast<size_t>(begin) * width_ * sizeof(T),
                          static_cast<size_t>(end) * width_ * sizeof(T));
  }

  void MergeChanges(int64_t i, const std::byte* start, const std::byte* afters,
                    size_t count) override {
    std::vector<T> s(width_), column_afters(count);
    std::memcpy(s.data(), start, width_ * sizeof(T));
    T* row = data_ + static_cast<size_t>(i) * width_;
    for (size_t c = 0; c < width_; ++c) {
      for (size_t k = 0; k < count; ++k)
        std::memcpy(&column_afters[k], afters + (k * width_ + c) * sizeof(T), sizeof(T));
      Delta<T>::Merge(row[c], s[c], column_afters);
    }
  }

  void SaveOwned(ByteWriter& out) const override {
    const auto own = local();
    out.PutRaw(own.data(), own.size_bytes());
  }
  void RestoreOwned(ByteReader& in) override {
    const auto own = local();  // bumps the version
    in.GetRaw(own.data(), own.size_bytes());
  }

 private:
  dmatrix(uint32_t id, std::string name, int64_t rows, size_t width, int node, int nodes,
          internal::DdsArray array)
      : DdsBase(id, std::move(name), rows, width * sizeof(T), node, nodes, array.data()),
        width_(width),
        array_(std::move(array)),
        data_(reinterpret_cast<T*>(array_.data())) {}

  // Out of line: AsyncFor's flattened bodies (async_for.h, RunFlat) would inline it otherwise.
  [[gnu::noinline]] std::span<T> Hooked(int64_t i, bool write) {
    if (i < 0 || i >= DdsBase::size()) OutOfRange(i);
    return {reinterpret_cast<T*>(hook_->Access(*this, i, write)), width_};
  }

  size_t width_;
  internal::DdsArray array_;
  T* data_;
};

// A dmatrix of `rows` rows of `width` elements; node p initialises the rows it owns with
// init(i, std::span<T> row) (the row's elements are uninitialised before). Collective.
template <class T, class Init>
dmatrix<T>& MakeDMatrix(Runtime& rt, int64_t rows, int64_t width, Init init,
                        const std::string& name = "dmatrix") {
  if (rows < 0)
    throw UsageError("MakeDMatrix '" + name + "': negative row count " + std::to_string(rows));
  // The bound keeps width * sizeof(T) and rows * width * sizeof(T) far from overflow.
  if (width < 1 || width > (int64_t{1} << 32) / static_cast<int64_t>(sizeof(T)))
    throw UsageError("MakeDMatrix '" + name + "': width " + std::to_string(width) +
                     " is not in [1, 2^32 bytes / element size]");
  const size_t w = static_cast<size_t>(width);
  internal::CheckFitsInMemory(rt, "dmatrix", name, rows, "rows", w * sizeof(T));
  auto& m = internal::CreateDds<dmatrix<T>>(rt, name, rows, w);
  for (int64_t i = m.owned_begin(); i < m.owned_end(); ++i)
    init(i, std::span<T>(m.data() + static_cast<size_t>(i) * w, w));
  return m;
}

}  // namespace strads
