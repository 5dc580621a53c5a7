// ByteWriter / ByteReader: the little-endian-in-memory encoding of runtime messages.
// Messages only travel between nodes of one run (same binary, same architecture), so values
// are copied as their object representation. The reader is bounded: a short message throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strads {

class ByteWriter {
 public:
  ByteWriter() = default;
  // Appends to `bytes` (a message whose trailer is added here) instead of starting empty.
  explicit ByteWriter(std::vector<std::byte> bytes) : buf_(std::move(bytes)) {}

  template <class T>
  void Put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    PutRaw(&value, sizeof(T));
  }
  template <class T>
  void PutVector(const std::vector<T>& values) {
    Put<uint64_t>(values.size());
    PutRaw(values.data(), values.size() * sizeof(T));
  }
  void PutRaw(const void* data, size_t bytes) {
    const size_t at = buf_.size();
    buf_.resize(at + bytes);
    if (bytes != 0) std::memcpy(buf_.data() + at, data, bytes);
  }
  // Room for `bytes` in all, so that writing up to them allocates once.
  void Reserve(size_t bytes) { buf_.reserve(bytes); }
  size_t size() const { return buf_.size(); }
  std::vector<std::byte> Take() { return std::move(buf_); }

 private:
  std::vector<std::byte> buf_;
};

class ByteReader {
 public:
  ByteReader(const std::byte* data, size_t size) : data_(data), size_(size) {}
  explicit ByteReader(const std::vector<std::byte>& v) : ByteReader(v.data(), v.size()) {}

  template <class T>
  T Get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    GetRaw(&value, sizeof(T));
    return value;
  }
  template <class T>
  std::vector<T> GetVector() {
    const uint64_t n = Get<uint64_t>();
    if (n > (size_ - pos_) / (sizeof(T) == 0 ? 1 : sizeof(T))) Fail(n * sizeof(T));
    std::vector<T> values(n);
    GetRaw(values.data(), n * sizeof(T));
    return values;
  }
  void GetRaw(void* out, size_t bytes) {
    if (bytes > size_ - pos_) Fail(bytes);
    if (bytes != 0) std::memcpy(out, data_ + pos_, bytes);
    pos_ += bytes;
  }
  const std::byte* Skip(size_t bytes) {
    if (bytes > size_ - pos_) Fail(bytes);
    const std::byte* at = data_ + pos_;
    pos_ += bytes;
    return at;
  }
  size_t remaining() const { return size_ - pos_; }

 private:
  [[noreturn]] void Fail(size_t wanted) const {
    throw std::runtime_error("strads: internal message too short: wanted " +
                             std::to_string(wanted) + " bytes at offset " + std::to_string(pos_) +
                             " of " + std::to_string(size_));
  }
  const std::byte* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace strads
