// ExactSum<T>: the exact sum of any number of float or double values, rounded once when read.
// Floating-point `+=` rounds at every step, so its result depends on the order of the terms;
// the exact sum does not, so ExactSum gives the same bits for any order and any grouping
// (Merge), which is what makes accumulator<double> deterministic across nodes, threads and
// schedules. A serial program gets those bits with the same class:
//
//   strads::ExactSum<double> loss;
//   for (...) loss.Add(term);
//   double total = loss.Value();
//
// Value() is the exact sum rounded to the nearest T, ties to even (results below T's normal
// range may be one unit off, always the same way). Infinities and NaNs: the result is what
// adding the non-finite terms alone gives (inf, -inf, or NaN for mixed signs or any NaN).
//
// Representation: a fixed-point integer with one bit per power of two from T's smallest
// subnormal up to its largest finite value plus 64 bits of headroom, in radix-2^32 limbs held
// in int64_t so that carries can wait: an Add reads x's bit fields and adds to three limbs, no
// carry; Normalize runs every 2^30 Adds (and before reading). 576 bytes for double, 112 for
// float.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace strads {

template <class T>
class ExactSum {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ExactSum is for float and double");
  static_assert(std::numeric_limits<T>::is_iec559 && std::numeric_limits<T>::radix == 2);

 public:
  // The weight of bit 0: T's smallest subnormal, 2^kMinExponent.
  static constexpr int kMinExponent =
      std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
  static constexpr int kBits = std::numeric_limits<T>::max_exponent - kMinExponent + 64;
  static constexpr size_t kLimbs = kBits / 32 + 3;

  void Add(T x) {
    // x's fields: |x| = significand * 2^(position + kMinExponent), position >= 0.
    Bits bits;
    std::memcpy(&bits, &x, sizeof(T));
    const int biased = static_cast<int>((bits >> kFractionBits) & kExponentMask);
    uint64_t significand = static_cast<uint64_t>(bits & ((Bits{1} << kFractionBits) - 1));
    if (biased == kExponentMask) [[unlikely]] {  // infinity or NaN
      special_ += x;
      return;
    }
    int position = 0;
    if (biased != 0) {
      significand |= uint64_t{1} << kFractionBits;
      position = biased - 1;
    } else if (significand == 0) {
      return;  // +0 or -0
    }
    const unsigned __int128 placed = static_cast<unsigned __int128>(significand) << (position % 32);
    const size_t k = static_cast<size_t>(position / 32);
    const int64_t sign = (bits >> (8 * sizeof(T) - 1)) != 0 ? -1 : 1;
    limbs_[k] += sign * static_cast<int64_t>(placed & 0xffffffffu);
    limbs_[k + 1] += sign * static_cast<int64_t>((placed >> 32) & 0xffffffffu);
    limbs_[k + 2] += sign * static_cast<int64_t>(placed >> 64);
    if (++pending_ == kAddsBeforeNormalize) [[unlikely]]
      Normalize();
  }

  // Adds another sum's terms (exactly).
  void Merge(const ExactSum& other) {
    ExactSum o = other;
    o.Normalize();
    Normalize();
    for (size_t k = 0; k < kLimbs; ++k) limbs_[k] += o.limbs_[k];
    special_ += o.special_;
    pending_ = 1;  // every limb is now below 2^33 in magnitude: far from overflow
  }

  // The exact sum, rounded once (see the top of this file).
  T Value() const {
    if (special_ != 0) return std::isnan(special_) ? std::numeric_limits<T>::quiet_NaN() : special_;
    ExactSum s = *this;
    s.Normalize();
    const bool negative = s.limbs_[kLimbs - 1] < 0;
    if (negative) {
      for (int64_t& l : s.limbs_) l = -l;
      s.Normalize();
    }
    size_t top = kLimbs;
    while (top > 0 && s.limbs_[top - 1] == 0) --top;
    if (top == 0) return T{0};
    // The top three limbs (at most 96 bits) as the window, the rest as a sticky bit.
    const size_t low = top >= 3 ? top - 3 : 0;
    unsigned __int128 window = 0;
    for (size_t k = top; k-- > low;) window = (window << 32) | static_cast<uint64_t>(s.limbs_[k]);
    bool sticky = false;
    for (size_t k = 0; k < low; ++k) sticky = sticky || s.limbs_[k] != 0;
    int bits = 0;
    for (unsigned __int128 w = window; w != 0; w >>= 1) ++bits;
    const int drop = std::max(0, bits - 64);
    sticky = sticky || (window & ((static_cast<unsigned __int128>(1) << drop) - 1)) != 0;
    // 64 bits with the sticky bit below the rounding position: one correctly rounded convert.
    const uint64_t mantissa = static_cast<uint64_t>(window >> drop) | (sticky ? 1 : 0);
    const T magnitude =
        std::ldexp(static_cast<T>(mantissa), drop + 32 * static_cast<int>(low) + kMinExponent);
    return negative ? -magnitude : magnitude;
  }

  // The wire form: kLimbs int64 limbs, then the non-finite part.
  static constexpr size_t kBytes = kLimbs * sizeof(int64_t) + sizeof(T);
  void Save(std::byte* out) const {
    ExactSum s = *this;
    s.Normalize();
    std::memcpy(out, s.limbs_.data(), kLimbs * sizeof(int64_t));
    std::memcpy(out + kLimbs * sizeof(int64_t), &s.special_, sizeof(T));
  }
  static ExactSum Load(const std::byte* in) {
    ExactSum s;
    std::memcpy(s.limbs_.data(), in, kLimbs * sizeof(int64_t));
    std::memcpy(&s.special_, in + kLimbs * sizeof(int64_t), sizeof(T));
    s.pending_ = 1;
    return s;
  }

 private:
  static constexpr uint32_t kAddsBeforeNormalize = 1u << 30;
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  static constexpr int kFractionBits = std::numeric_limits<T>::digits - 1;
  static constexpr int kExponentMask = 2 * std::numeric_limits<T>::max_exponent - 1;

  // Carries: every limb but the top one into [0, 2^32); the top one keeps the sign.
  void Normalize() {
    for (size_t k = 0; k + 1 < kLimbs; ++k) {
      const int64_t carry = limbs_[k] >> 32;  // floor division by 2^32
      limbs_[k] -= carry * (int64_t{1} << 32);
      limbs_[k + 1] += carry;
    }
    pending_ = 0;
  }

  std::array<int64_t, kLimbs> limbs_{};
  T special_ = 0;  // the sum of the non-finite terms (0 if none)
  uint32_t pending_ = 0;
};

}  // namespace strads
