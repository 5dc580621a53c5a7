// EvenSplit: n items cut into `parts` contiguous ranges whose sizes differ by at most one.
// Used for dvector ownership (parts = nodes) and for scheduler blocks (parts = blocks).
#pragma once

#include <cassert>
#include <cstdint>

namespace strads {

class EvenSplit {
 public:
  EvenSplit() = default;
  EvenSplit(int64_t n, int64_t parts) : n_(n), parts_(parts) { assert(n >= 0 && parts > 0); }

  int64_t size() const { return n_; }
  int64_t parts() const { return parts_; }
  // First index of `part`: ceil(part * n / parts). begin(parts) == n.
  int64_t begin(int64_t part) const { return (part * n_ + parts_ - 1) / parts_; }
  int64_t end(int64_t part) const { return begin(part + 1); }
  // The part holding index i: floor(i * parts / n).
  int64_t part_of(int64_t i) const { return i * parts_ / n_; }

 private:
  int64_t n_ = 0;
  int64_t parts_ = 1;
};

}  // namespace strads
