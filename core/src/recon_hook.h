// ReconHook: DDS access during reconnaissance execution, for every loop engine. Records every
// access of the running body (DDS, element, read or write) and hands out scratch copies, so
// that nothing is committed: a body's writes last until the next BeginBody.
//
// Where a scratch copy's value comes from is the one thing the engines differ in (Values):
// SyncFor's bodies access only its parameters, which every node holds whole and current, so
// they read the current value and never miss. AsyncFor's bodies access partitioned DDSs: a
// read of an element this node neither owns nor has fetched is a miss, the body sees zeros, is
// marked incomplete and runs again after the misses are fetched (FetchMisses, collective).
// Writes never miss and start as zeros: under static control flow, the values of written
// elements do not decide what a body accesses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_set>
#include <vector>

#include "cache_line.h"
#include "strads/internal/dds.h"

namespace strads {

class Runtime;

struct Touch {
  uint32_t dds;
  bool write;
  int64_t index;
};

// Every hook owns its cache lines (the object, its touch lists and its scratch copies): the
// hooks of a loop's threads are made one after another and each writes its own at every access,
// so where the heap puts them must not make two threads share a line (cache_line.h).
class alignas(kCacheLineBytes) ReconHook final : public AccessHook {
 public:
  enum class Values : uint8_t {
    kCurrent,      // every element is current in this node's array (SyncFor parameters)
    kFetchMisses,  // only owned and fetched ones are; other reads miss (AsyncFor)
  };

  // Hooks that reconnoitre one loop on several threads share the set of fetched elements
  // (`fetched`; null: a set of its own).
  ReconHook(Runtime& rt, Values values,
            std::shared_ptr<std::unordered_set<uint64_t>> fetched = nullptr)
      : rt_(rt),
        values_(values),
        fetched_(fetched ? std::move(fetched) : std::make_shared<std::unordered_set<uint64_t>>()) {}
  std::byte* Access(DdsBase& dds, int64_t index, bool write) override;

  // A new body: its touches start empty and the previous body's scratch copies are free again.
  void BeginBody() {
    count_ = 0;
    missed_ = false;
    chunk_ = 0;
    if (!chunks_.empty()) {
      next_ = reinterpret_cast<uintptr_t>(chunks_[0].data());
      limit_ = next_ + chunks_[0].size();
    }
  }
  bool missed() const { return missed_; }
  // The running body's accesses, in the order it made them.
  std::span<const Touch> touches() const { return {touches_.data(), count_}; }
  // Whether touches() names no element twice: Access merges repeats of the first
  // kSearchedTouches elements.
  bool TouchesAreSet() const { return count_ <= kSearchedTouches; }
  // Collective: fetches every missed element from its owner.
  void FetchMisses();
  // Makes `other`'s misses this hook's, for one FetchMisses of the hooks of several threads.
  void TakeMisses(ReconHook& other);
  // The bytes of scratch chunks held (for the tests): what one body needs, whatever the bodies.
  size_t ScratchBytesHeld() const {
    size_t bytes = 0;
    for (const auto& chunk : chunks_) bytes += chunk.size();
    return bytes;
  }

 private:
  // What an access needs of its DDS, worked out once per DDS rather than once per access (the
  // owned range costs two divisions). A line each, so that finding one is a shift.
  struct alignas(kCacheLineBytes) DdsView {
    int64_t owned_begin = 0, owned_end = 0;
    size_t bytes = 0;          // element bytes
    size_t scratch_bytes = 0;  // rounded up to scratch_align; 0: not worked out yet
    // Where a copy starts: the element's size rounded up to a power of two, from kAlign to a
    // cache line. A copy of 64 bytes or more starts a line, so that a body's vector loads and
    // stores on it (sgdmf's 128-byte rows) never split a line, nor cross a page, which they
    // did where the copies fell 16 bytes past a line, wherever the chunk happened to start.
    size_t scratch_align = kAlign;
  };
  const DdsView& AddView(const DdsBase& dds);
  // Access when its DDS has no view yet, the touch lists are full or the scratch chunk is: makes
  // room, then does what Access does.
  std::byte* AccessWithRoom(DdsBase& dds, int64_t index, bool write);
  // Records access n (room made) with its scratch copy, and fills the copy.
  std::byte* Record(DdsBase& dds, int64_t index, bool write, const DdsView& view, size_t n,
                    std::byte* scratch);
  // The next chunk of scratch, made to hold at least `bytes`, its start (a line's) taken for
  // them.
  std::byte* ScratchInNewChunk(size_t bytes);
  // A read of an element this node does not own: its fetched copy, or a miss (zeros).
  std::byte* ReadRemote(DdsBase& dds, int64_t index, const DdsView& view, std::byte* scratch);
  static constexpr size_t kSearchedTouches = 64;
  static constexpr size_t kChunkBytes = 1 << 16;
  static constexpr size_t kAlign = alignof(std::max_align_t);
  static uint64_t Key(uint32_t dds, int64_t index) {
    return (static_cast<uint64_t>(dds) << 40) | static_cast<uint64_t>(index);
  }

  Runtime& rt_;
  const Values values_;
  std::vector<DdsView> views_;  // per DDS id
  // The running body's touches and their scratch copies: the first count_ of each. Both are
  // kept at the same length, grown together (AccessWithRoom), so that an access appends to them
  // with one test of room rather than two push_backs.
  size_t count_ = 0;
  std::vector<Touch, CacheLineAllocator<Touch>> touches_;
  std::vector<std::byte*, CacheLineAllocator<std::byte*>> scratch_of_touch_;
  bool missed_ = false;
  std::vector<uint64_t, CacheLineAllocator<uint64_t>> misses_;
  std::shared_ptr<std::unordered_set<uint64_t>> fetched_;
  // Scratch copies, on whole cache lines (ScratchInNewChunk).
  // Chunks are used in order, from the first at every body; chunk_ is the one in use, its free
  // bytes [next_, limit_) (addresses: both 0 before the first chunk is made).
  std::vector<std::vector<std::byte, CacheLineAllocator<std::byte>>> chunks_;
  size_t chunk_ = 0;
  uintptr_t next_ = 0, limit_ = 0;
};

// Routes each access to the hook of the calling thread (Bind), so that the threads of a node
// reconnoitre at once, each with its own touches and scratch copies.
class ThreadRoutedHook : public AccessHook {
 public:
  std::byte* Access(DdsBase& dds, int64_t index, bool write) override;
  // The calling thread's hook from now on (null: none; an access then is a logic error).
  static void Bind(ReconHook* hook);
};

// In a loop's fast path, a DDS the loop did not touch during reconnaissance must not be
// accessed: its elements were not prefetched.
class UnplannedAccessHook : public AccessHook {
 public:
  std::byte* Access(DdsBase& dds, int64_t index, bool write) override;
};

}  // namespace strads
