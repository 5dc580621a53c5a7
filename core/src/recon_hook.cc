#include "recon_hook.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

#include "node_context.h"
#include "shared_array_files.h"
#include "strads/errors.h"
#include "strads/runtime.h"

namespace strads {

const ReconHook::DdsView& ReconHook::AddView(const DdsBase& dds) {
  if (dds.id() >= views_.size()) views_.resize(dds.id() + 1);
  DdsView& view = views_[dds.id()];
  view.owned_begin = dds.owned_begin();
  view.owned_end = dds.owned_end();
  view.bytes = dds.element_bytes();
  view.scratch_align = std::min(kCacheLineBytes, std::bit_ceil(std::max(view.bytes, kAlign)));
  view.scratch_bytes =
      std::max<size_t>(1, (view.bytes + view.scratch_align - 1) / view.scratch_align) *
      view.scratch_align;
  return view;
}

std::byte* ReconHook::ScratchInNewChunk(size_t bytes) {
  const size_t c = limit_ == 0 ? 0 : chunk_ + 1;
  if (c == chunks_.size())
    chunks_.emplace_back(std::max(bytes, kChunkBytes));
  else if (chunks_[c].size() < bytes)  // an element larger than a chunk: this one grows
    chunks_[c].resize(bytes);
  chunk_ = c;
  const uintptr_t at = reinterpret_cast<uintptr_t>(chunks_[c].data());
  next_ = at + bytes;
  limit_ = at + chunks_[c].size();
  return chunks_[c].data();
}

namespace {

// Copies `bytes` (a DDS element's size) from `from`; small sizes without a call to memcpy, whose
// call and size dispatch were a fifth of an access.
std::byte* CopyElement(std::byte* to, const std::byte* from, size_t bytes) {
  if (bytes >= 8 && bytes <= 16) {  // two 8-byte moves that overlap where bytes < 16
    uint64_t head, tail;
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + bytes - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + bytes - 8, &tail, 8);
    return to;
  }
  return static_cast<std::byte*>(std::memcpy(to, from, bytes));
}

}  // namespace

// The common way (the DDS's view made, room in the lists and the chunk) touches no vector's
// size and calls memcpy or memset last, so that it saves no registers: with all of it inline,
// an access cost about 110 instructions (callgrind, sgdmf).
std::byte* ReconHook::Access(DdsBase& dds, int64_t index, bool write) {
  const uint32_t id = dds.id();
  const size_t n = count_;
  // The same element twice in one body: the same scratch copy (small bodies: linear search).
  if (n < kSearchedTouches) {
    Touch* const touches = touches_.data();
    for (size_t t = 0; t < n; ++t)
      if (touches[t].index == index && touches[t].dds == id) {
        touches[t].write |= write;
        return scratch_of_touch_[t];
      }
  }
  if (id >= views_.size() || n == touches_.size()) [[unlikely]]
    return AccessWithRoom(dds, index, write);
  const DdsView& view = views_[id];
  const uintptr_t at = (next_ + view.scratch_align - 1) & ~(view.scratch_align - 1);
  if (view.scratch_bytes == 0 || at + view.scratch_bytes > limit_) [[unlikely]]
    return AccessWithRoom(dds, index, write);
  next_ = at + view.scratch_bytes;
  return Record(dds, index, write, view, n, reinterpret_cast<std::byte*>(at));
}

inline std::byte* ReconHook::Record(DdsBase& dds, int64_t index, bool write, const DdsView& view,
                                    size_t n, std::byte* scratch) {
  touches_[n] = {dds.id(), write, index};
  scratch_of_touch_[n] = scratch;
  count_ = n + 1;
  // AsyncFor's written elements start zeroed, on every node as on one not owning them: their
  // values decide nothing a body touches, and not reading them spares a cache miss an access
  // when a share's bodies touch rows scattered over arrays larger than the cache.
  // memset: 16-byte stores were faster while copies started 16 bytes past a line (memset's
  // 64-byte stores then split lines), but a copy of 64 bytes or more now starts a line
  // (scratch_align), and memset is faster again: sgdmf at 19 M, 2 threads, the first epoch took
  // 1 566-1 621 ms with memset against 1 764-1 800 ms with 16-byte stores (four interleaved
  // pairs, idle machine, docs/async_for.md).
  if (values_ == Values::kCurrent ||
      (!write && index >= view.owned_begin && index < view.owned_end))
    return CopyElement(scratch, dds.raw_element(index), view.bytes);
  if (write) return static_cast<std::byte*>(std::memset(scratch, 0, view.scratch_bytes));
  return ReadRemote(dds, index, view, scratch);
}

std::byte* ReconHook::AccessWithRoom(DdsBase& dds, int64_t index, bool write) {
  const size_t n = count_;
  if (n == touches_.size()) {
    const size_t more = std::max<size_t>(16, touches_.size() * 2);
    touches_.resize(more);
    scratch_of_touch_.resize(more);
  }
  const DdsView& view = dds.id() < views_.size() && views_[dds.id()].scratch_bytes != 0
                            ? views_[dds.id()]
                            : AddView(dds);
  uintptr_t at = (next_ + view.scratch_align - 1) & ~(view.scratch_align - 1);
  std::byte* scratch;
  if (limit_ != 0 && at + view.scratch_bytes <= limit_) {
    next_ = at + view.scratch_bytes;
    scratch = reinterpret_cast<std::byte*>(at);
  } else {
    scratch = ScratchInNewChunk(view.scratch_bytes);
  }
  return Record(dds, index, write, view, n, scratch);
}

std::byte* ReconHook::ReadRemote(DdsBase& dds, int64_t index, const DdsView& view,
                                 std::byte* scratch) {
  const uint64_t key = Key(dds.id(), index);
  if (fetched_->count(key)) return CopyElement(scratch, dds.raw_element(index), view.bytes);
  std::memset(scratch, 0, view.scratch_bytes);
  missed_ = true;
  misses_.push_back(key);
  return scratch;
}

void ReconHook::FetchMisses() {
  const int nodes = rt_.nodes();
  // Under --nodes P the owners' values go to the shared files first, so that a fetched element
  // is mostly found in place and its page stays one copy for the process (ShareOwnersPages).
  const bool shared_pages = rt_.context().shared_files() != nullptr;
  if (shared_pages) {
    std::vector<uint32_t> all(rt_.context().dds_count());
    std::iota(all.begin(), all.end(), 0u);
    ShareOwnersPages(rt_, all);
  }
  std::sort(misses_.begin(), misses_.end());
  misses_.erase(std::unique(misses_.begin(), misses_.end()), misses_.end());
  std::vector<std::vector<uint64_t>> asks(nodes);
  for (uint64_t key : misses_) {
    DdsBase& dds = rt_.context().dds(static_cast<uint32_t>(key >> 40));
    asks[dds.owner(static_cast<int64_t>(key & ((1ULL << 40) - 1)))].push_back(key);
  }
  misses_.clear();
  std::vector<std::vector<std::byte>> out(nodes);
  for (int p = 0; p < nodes; ++p) {
    ByteWriter w;
    w.PutVector(asks[p]);
    out[p] = w.Take();
  }
  auto requests = rt_.context().collectives().AllToAll(std::move(out));
  std::vector<std::vector<std::byte>> replies(nodes);
  for (int p = 0; p < nodes; ++p) {
    ByteReader r(requests[p]);
    ByteWriter w;
    for (uint64_t key : r.GetVector<uint64_t>()) {
      DdsBase& dds = rt_.context().dds(static_cast<uint32_t>(key >> 40));
      w.PutRaw(dds.raw_element(static_cast<int64_t>(key & ((1ULL << 40) - 1))),
               dds.element_bytes());
    }
    replies[p] = w.Take();
  }
  auto answers = rt_.context().collectives().AllToAll(std::move(replies));
  for (int p = 0; p < nodes; ++p) {
    ByteReader r(answers[p]);
    for (uint64_t key : asks[p]) {
      DdsBase& dds = rt_.context().dds(static_cast<uint32_t>(key >> 40));
      const std::byte* value = r.Skip(dds.element_bytes());
      std::byte* element = dds.raw_element(static_cast<int64_t>(key & ((1ULL << 40) - 1)));
      if (!shared_pages || std::memcmp(element, value, dds.element_bytes()) != 0)
        std::memcpy(element, value, dds.element_bytes());
      fetched_->insert(key);
    }
  }
}

void ReconHook::TakeMisses(ReconHook& other) {
  misses_.insert(misses_.end(), other.misses_.begin(), other.misses_.end());
  other.misses_.clear();
}

namespace {
thread_local ReconHook* bound_hook = nullptr;
}  // namespace

void ThreadRoutedHook::Bind(ReconHook* hook) { bound_hook = hook; }

std::byte* ThreadRoutedHook::Access(DdsBase& dds, int64_t index, bool write) {
  if (bound_hook == nullptr)
    throw std::logic_error("strads: DDS '" + dds.name() +
                           "' accessed during reconnaissance outside its threads");
  return bound_hook->Access(dds, index, write);
}

std::byte* UnplannedAccessHook::Access(DdsBase& dds, int64_t index, bool) {
  throw UsageError("DDS '" + dds.name() + "' element " + std::to_string(index) +
                   " accessed in a loop body, but no body touched '" + dds.name() +
                   "' during reconnaissance: the loop's control flow is not static, or '" +
                   dds.name() +
                   "' was made after the loop's first call (a DDS made anew every epoch is not "
                   "in the plan the first call made: make it once, before the loop)");
}

}  // namespace strads
