// Reconnaissance execution shared by the AsyncFor engines (schedule and locks), and the
// element shipping they both use.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cache_line.h"
#include "element_ref.h"
#include "owned_element_list.h"
#include "recon_hook.h"
#include "schedule.h"
#include "strads/internal/even_split.h"
#include "strads/internal/function_ref.h"
#include "strads/runtime.h"

namespace strads {

// Frees a vector's memory now. `v = {}` does not: it assigns an empty initializer list, which
// keeps the capacity (at 19 M bodies, planning's 76 MB array of cells stayed resident so).
template <class T>
void Release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

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

// One access as planning reads it back from a ReconResult: the DDS, whether the body wrote
// it, and either the element or, for a write kept binned, its bin among the DDS's fine bins.
struct ReconAccess {
  uint32_t dds;
  bool write;
  bool binned;  // `at` is a bin of EvenSplit(size, ReconResult::fine_bins[dds])
  int64_t at;   // the element, or the bin
};

struct ReconResult {
  // This node ran bodies first + share_begin + k, k in [0, share_count).
  int64_t first = 0;
  int64_t share_begin = 0, share_count = 0;
  // The share cut into one contiguous chunk per thread (each thread reconnoitres its own),
  // and each chunk's accesses, body by body in the order each body made them, in one of two
  // layouts:
  // - touches (fine_bins empty): chunk c's body j = k - chunks.begin(c) made
  //   touches[offsets[j] .. offsets[j + 1]) (CSR). Offsets are 32-bit: a chunk holds at most
  //   kMaxChunkTouches accesses (32 GB of them). The lock engine and AsyncForEach need every
  //   element.
  // - binned (fine_bins set; AsyncFor's schedule engine): a byte stream, per body its shape's
  //   number (LEB128) then per access of the shape 2 bytes (a write: its fine bin), nothing (a
  //   read of element i of the body's own index i) or 5 bytes (another read: the element). The
  //   blocks are cut at fine bin boundaries for every block count planned, so the bins give the
  //   same cells as the elements (docs/async_for.md, "Streaming reconnaissance").
  static constexpr uint64_t kMaxChunkTouches = UINT32_MAX;
  enum ShapeItem : uint8_t { kWriteBin = 0, kOwnRead = 1, kRead = 2 };
  // The bytes an access of this kind takes in a body's payload of the stream: a written
  // access's fine bin (2), a read's element index (5), nothing for the body's own element.
  static constexpr uint32_t ItemBytes(ShapeItem kind) {
    return kind == kWriteBin ? 2 : kind == kRead ? 5 : 0;
  }
  struct Shape {
    std::vector<uint32_t> items;  // per access, dds << 2 | ShapeItem
    uint32_t bytes = 0;           // the payload of a body of this shape
  };
  // Pair sums (binned, `pair_sums`): the access digests of a chunk's pair bodies, those whose
  // only written accesses are one element of each of two DDSs (sgdmf's W[u] and H[i]), summed
  // by the pair of fine bins they fall in, instead of kept per body. Every fine pair lies in
  // one cell for any block count planned, so a cell's sum is its pairs' sums plus its other
  // bodies' parts (AsyncLoop::LocalCells), and the plan checks a group against that sum.
  // The chunk's pair of DDSs is its first pair body's, kept if the table takes at most a byte
  // per body of the chunk (kPairBodiesPerEntry); bodies of other pairs are kept per body.
  struct PairSums {
    static constexpr int64_t kPairBodiesPerEntry = 4;
    bool decided = false;        // the chunk met its first body with two writes
    uint32_t dds[2] = {0, 0};    // dds[0] < dds[1]
    int64_t bins[2] = {0, 0};    // their fine bins
    std::vector<uint32_t> sums;  // BodyDigestParts by fine bin of dds[0] x of dds[1]
    bool active() const { return !sums.empty(); }
    // Whether a body of `shape` is a pair body of this chunk (and its digest in `sums`).
    bool Holds(const Shape& shape) const;
  };
  // On lines of its own (cache_line.h): a thread writes its chunk's stream end at every body,
  // and the chunks are one array.
  struct alignas(kCacheLineBytes) Chunk {
    std::vector<uint32_t> offsets;
    std::vector<PackedTouch> touches;
    std::vector<uint8_t> stream;
    std::vector<Shape> shapes;
    PairSums pairs;
    // Pair sums on: per body of the chunk, its digest if it is not a pair body (0 for pair
    // bodies); empty while the chunk has only pair bodies.
    std::vector<uint32_t> body_digests;
  };
  EvenSplit chunks;
  std::vector<Chunk> of_chunk;
  // Binned layout: per DDS id, how many fine bins its written accesses are kept at
  // (min(size, 64 x the most blocks planned), at most kMaxFineBins); empty: touches layout.
  static constexpr int64_t kMaxFineBins = int64_t{1} << 16;
  std::vector<int64_t> fine_bins;
  // Binned layout: per DDS id, how many of the share's accesses (reads and writes) fall in each
  // of its fine bins (empty for a DDS no body of the share touched), counted while the bodies
  // ran, so that planning sums them into the bins of any block count without a pass over the
  // bodies.
  std::vector<std::vector<int64_t>> fine_counts;
  // Per body k, AccessDigest of its accesses, when access checking is on and they were asked
  // for and pair sums are off (else empty; AccessDigests computes them from the touches).
  std::vector<uint32_t> digests;
  // Optional: the share's cells made ahead for the block bounds the plan is given
  // (AsyncLoop::set_bounds), which AsyncForEach keeps per cached index: per cell, in order of
  // first appearance among the share's bodies, its signature (schedule.h: the sorted blocks of
  // the written DDSs the body accesses); per body of the share, its cell. Planning with those
  // bounds takes them instead of computing each body's cell from its accesses; with other
  // bounds it ignores them. Empty `cell_of_body`: not given.
  std::vector<std::vector<BlockKey>> cell_signatures;
  std::vector<int32_t> cell_of_body;
  // Access checking on and the digests kept as the chunks' PairSums and body_digests.
  bool pair_sums = false;
  // Whether every chunk's pair sums hold cells whole: false if a pair body also reads a DDS the
  // loop writes (its cell then depends on that block too). Needs `flags`.
  bool PairSumsHold() const;
  // Per DDS id, agreed by all nodes: bit 0 touched by some body, bit 1 written by some body,
  // bit 2 (kForeignAccess) some body accessed an element other than its own loop index, or it
  // was not examined: Reconnoitre sets it for every DDS touched (a write kept binned has no
  // element), AsyncForEach from each index's accesses. A written DDS without bit 2 orders no
  // two bodies.
  static constexpr uint8_t kForeignAccess = 4;
  std::vector<uint8_t> flags;
  std::vector<uint32_t> written, read_only;

  // AsyncForEach left the touches out (each body's list empty): the plan is given its cells and
  // digests and the set reads no DDS it does not write, so planning has no access to look at
  // (no cells to compute, no read-only element to serve or fetch ahead), and copying each
  // body's cached list cost a cache miss a body. Reading a body's accesses then throws.
  bool touches_omitted = false;
  [[noreturn]] static void ThrowTouchesOmitted();

  bool binned() const { return !fine_bins.empty(); }
  // Touches layout only.
  std::span<const PackedTouch> of_body(int64_t k) const {
    if (touches_omitted) [[unlikely]]
      ThrowTouchesOmitted();
    const Chunk& c = of_chunk[static_cast<size_t>(chunks.part_of(k))];
    const auto j = static_cast<size_t>(k - chunks.begin(chunks.part_of(k)));
    return std::span(c.touches).subspan(c.offsets[j], c.offsets[j + 1] - c.offsets[j]);
  }
  // Binned layout: the shape number (LEB128) that starts a body's bytes at `at`; moves `at`
  // past it.
  static uint32_t ReadShape(const uint8_t*& at) {
    uint32_t shape = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = *at++;
      shape |= static_cast<uint32_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return shape;
    }
  }
  // Binned layout: appends the accesses of body k (of `chunk`), whose bytes start at `at`, to
  // `out`, and returns where the next body's bytes start.
  const uint8_t* DecodeBody(const Chunk& chunk, int64_t k, const uint8_t* at,
                            std::vector<ReconAccess>& out) const;
  // Calls visit(k, std::span<const ReconAccess>) for every body k of chunk c, in order, in
  // either layout.
  template <class Visit>
  void ForEachBody(size_t c, Visit&& visit) const;
  template <class Visit>
  void ForEachBody(Visit&& visit) const {
    for (size_t c = 0; c < of_chunk.size(); ++c) ForEachBody(c, visit);
  }
};

// Collective. Runs every body of [first, last] once (each node a contiguous share, each of its
// threads a contiguous chunk of it, with a hook of its own), with DDS accesses recorded and
// nothing committed; fetches remote reads and reruns until none miss. A body that throws: the
// lowest such index's exception is rethrown, as a run in index order would.
// `with_digests`: fill res.digests when access checking is on; a caller that needs them only
// later computes them with AccessDigests, which saves holding them beside the touches.
// `most_bins` in (0, kMaxFineBins]: the binned layout, with min(size, most_bins) fine bins per
// DDS; the caller must cut blocks only at boundaries of those bins (digests are then always
// computed here, the elements being gone). 0: the touches layout.
// `pair_sums` (binned, checked, one node, unordered plans only): the digests as PairSums.
ReconResult Reconnoitre(Runtime& rt, const std::string& site, int64_t first, int64_t last,
                        FunctionRef<void(int64_t)> body, bool with_digests = true,
                        int64_t most_bins = 0, bool pair_sums = false);

// Per body of res's share (touches layout), the AccessDigest of its touches, computed on the
// node's threads.
std::vector<uint32_t> AccessDigests(Runtime& rt, const ReconResult& res);

// Fills res.written and res.read_only from res.flags.
void ListWrittenAndReadOnly(ReconResult& res);

// Collective. serve[p] lists elements this node owns that node p needs: sends their current
// values; stores what the others send into this node's arrays.
void ServeElements(Runtime& rt, const std::vector<std::vector<ElementRef>>& serve);
void ServeElements(Runtime& rt, const std::vector<OwnedElementList>& serve);

// Element `index` of `dds`, owned by node `owner`, as an OwnedElement; throws UsageError if that
// node's owned range is too long for a 32-bit offset.
OwnedElement OwnedOffset(const DdsBase& dds, int owner, int64_t index);

// Restores the driver hook on every DDS when a loop phase ends, normally or not.
template <class Visit>
void ReconResult::ForEachBody(size_t c, Visit&& visit) const {
  if (touches_omitted) ThrowTouchesOmitted();
  const Chunk& chunk = of_chunk[c];
  const int64_t begin = chunks.begin(static_cast<int64_t>(c));
  const int64_t end = chunks.end(static_cast<int64_t>(c));
  thread_local std::vector<ReconAccess> accesses;
  if (!binned()) {
    for (int64_t k = begin; k < end; ++k) {
      accesses.clear();
      const auto j = static_cast<size_t>(k - begin);
      for (uint32_t t = chunk.offsets[j]; t < chunk.offsets[j + 1]; ++t) {
        const PackedTouch touch = chunk.touches[t];
        accesses.push_back({touch.dds(), touch.write(), false, touch.index()});
      }
      visit(k, std::span<const ReconAccess>(accesses));
    }
    return;
  }
  const uint8_t* at = chunk.stream.data();
  for (int64_t k = begin; k < end; ++k) {
    accesses.clear();
    at = DecodeBody(chunk, k, at, accesses);
    visit(k, std::span<const ReconAccess>(accesses));
  }
}

inline const uint8_t* ReconResult::DecodeBody(const Chunk& chunk, int64_t k, const uint8_t* at,
                                              std::vector<ReconAccess>& out) const {
  for (uint32_t item : chunk.shapes[ReadShape(at)].items) {
    const uint32_t dds = item >> 2;
    switch (item & 3) {
      case kWriteBin:
        out.push_back({dds, true, true, int64_t{at[0]} | int64_t{at[1]} << 8});
        at += 2;
        break;
      case kOwnRead:
        out.push_back({dds, false, false, first + share_begin + k});
        break;
      default: {
        int64_t element = 0;
        for (int b = 0; b < 5; ++b) element |= int64_t{at[b]} << (8 * b);
        out.push_back({dds, false, false, element});
        at += 5;
      }
    }
  }
  return at;
}

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
