// Reconnaissance execution shared by the AsyncFor engines (schedule and locks), and the
// element shipping they both use.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "element_ref.h"
#include "recon_hook.h"
#include "strads/internal/even_split.h"
#include "strads/internal/function_ref.h"
#include "strads/runtime.h"

namespace strads {

// One recorded access in 8 bytes: element index (40 bits, as BlockKey and the hook's keys),
// written (1 bit), DDS id (23 bits). Reconnaissance keeps one per access of every body of the
// node's share, so their size is the planner's peak memory.
class PackedTouch {
 public:
  static constexpr uint32_t kMaxDds = (1u << 23) - 1;
  static constexpr int64_t kMaxIndex = (int64_t{1} << 40) - 1;

  PackedTouch() = default;
  // No access: every bit set (no access has that DDS id).
  static PackedTouch None() {
    PackedTouch none;
    none.bits_ = UINT64_MAX;
    return none;
  }
  explicit PackedTouch(const Touch& t)
      : bits_(static_cast<uint64_t>(t.index) | (uint64_t{t.write} << 40) |
              (static_cast<uint64_t>(t.dds) << 41)) {}
  uint32_t dds() const { return static_cast<uint32_t>(bits_ >> 41); }
  int64_t index() const { return static_cast<int64_t>(bits_ & kMaxIndex); }
  bool write() const { return (bits_ >> 40) & 1; }
  bool none() const { return bits_ == UINT64_MAX; }

 private:
  uint64_t bits_ = 0;
};

struct ReconResult {
  // This node ran bodies first + share_begin + k, k in [0, share_count).
  int64_t share_begin = 0, share_count = 0;
  // The share cut into one contiguous chunk per thread (each thread reconnoitres its own),
  // and each chunk's accesses, body by body in the order each body made them (CSR):
  // chunk c's body j = k - chunks.begin(c) made touches[offsets[j] .. offsets[j + 1]).
  // Offsets are 32-bit: a chunk holds at most kMaxChunkTouches accesses (32 GB of them).
  static constexpr uint64_t kMaxChunkTouches = UINT32_MAX;
  struct Chunk {
    std::vector<uint32_t> offsets;
    std::vector<PackedTouch> touches;
  };
  EvenSplit chunks;
  std::vector<Chunk> of_chunk;
  // Per body k, AccessDigest of its accesses, when access checking is on and they were asked
  // for (else empty; AccessDigests computes them from the touches).
  std::vector<uint64_t> digests;
  // Per DDS id, agreed by all nodes: bit 0 touched by some body, bit 1 written by some body.
  std::vector<uint8_t> flags;
  std::vector<uint32_t> written, read_only;

  std::span<const PackedTouch> of_body(int64_t k) const {
    const Chunk& c = of_chunk[static_cast<size_t>(chunks.part_of(k))];
    const auto j = static_cast<size_t>(k - chunks.begin(chunks.part_of(k)));
    return std::span(c.touches).subspan(c.offsets[j], c.offsets[j + 1] - c.offsets[j]);
  }
};

// Collective. Runs every body of [first, last] once (each node a contiguous share, each of its
// threads a contiguous chunk of it, with a hook of its own), with DDS accesses recorded and
// nothing committed; fetches remote reads and reruns until none miss. A body that throws: the
// lowest such index's exception is rethrown, as a run in index order would.
// `with_digests`: fill res.digests when access checking is on; a caller that needs them only
// later computes them with AccessDigests, which saves holding them beside the touches.
ReconResult Reconnoitre(Runtime& rt, const std::string& site, int64_t first, int64_t last,
                        FunctionRef<void(int64_t)> body, bool with_digests = true);

// Per body of res's share, the AccessDigest of its touches, computed on the node's threads.
std::vector<uint64_t> AccessDigests(Runtime& rt, const ReconResult& res);

// Fills res.written and res.read_only from res.flags.
void ListWrittenAndReadOnly(ReconResult& res);

// Collective. serve[p] lists elements this node owns that node p needs: sends their current
// values; stores what the others send into this node's arrays.
void ServeElements(Runtime& rt, const std::vector<std::vector<ElementRef>>& serve);

// Restores the driver hook on every DDS when a loop phase ends, normally or not.
class HookGuard {
 public:
  explicit HookGuard(Runtime& rt) : rt_(rt) {}
  ~HookGuard();
  HookGuard(const HookGuard&) = delete;
  HookGuard& operator=(const HookGuard&) = delete;

 private:
  Runtime& rt_;
};

}  // namespace strads
