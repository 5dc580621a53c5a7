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

void ReconHook::BeginBody() {
  touches_.clear();
  scratch_of_touch_.clear();
  missed_ = false;
  chunk_ = 0;
  used_ = 0;
}

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

std::byte* ReconHook::ScratchInNewChunk(size_t bytes, size_t align) {
  if (bytes > kChunkBytes) {  // an element larger than a chunk: a chunk of its own
    chunks_.emplace(chunks_.begin() + static_cast<long>(chunk_), bytes);
    return chunks_[chunk_++].data();
  }
  used_ = (used_ + align - 1) & ~(align - 1);  // where the copy would start in this chunk
  if (chunk_ < chunks_.size() && used_ + bytes > kChunkBytes) ++chunk_, used_ = 0;
  if (chunk_ == chunks_.size()) chunks_.emplace_back(kChunkBytes);
  std::byte* p = chunks_[chunk_].data() + used_;
  used_ += bytes;
  return p;
}

std::byte* ReconHook::Access(DdsBase& dds, int64_t index, bool write) {
  const uint32_t id = dds.id();
  // The same element twice in one body: the same scratch copy (small bodies: linear search).
  if (touches_.size() < kSearchedTouches) {
    for (size_t t = 0; t < touches_.size(); ++t)
      if (touches_[t].index == index && touches_[t].dds == id) {
        touches_[t].write |= write;
        return scratch_of_touch_[t];
      }
  }
  const DdsView& view = View(dds);
  std::byte* scratch = Scratch(view.scratch_bytes, view.scratch_align);
  // AsyncFor's written elements start zeroed, on every node as on one not owning them: their
  // values decide nothing a body touches, and not reading them spares a cache miss an access
  // when a share's bodies touch rows scattered over arrays larger than the cache.
  // memset: 16-byte stores were faster while copies started 16 bytes past a line (memset's
  // 64-byte stores then split lines), but a copy of 64 bytes or more now starts a line
  // (scratch_align), and memset is faster again: sgdmf at 19 M, 2 threads, the first epoch took
  // 1 566-1 621 ms with memset against 1 764-1 800 ms with 16-byte stores (four interleaved
  // pairs, idle machine, docs/async_for.md).
  if (values_ == Values::kCurrent ||
      (!write && ((index >= view.owned_begin && index < view.owned_end) ||
                  fetched_->count(Key(id, index))))) {
    std::memcpy(scratch, dds.raw_element(index), view.bytes);
  } else {
    std::memset(scratch, 0, view.scratch_bytes);
    if (!write) {
      missed_ = true;
      misses_.push_back(Key(id, index));
    }
  }
  touches_.push_back({id, write, index});
  scratch_of_touch_.push_back(scratch);
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
                   "' during reconnaissance: the loop's control flow is not static");
}

}  // namespace strads
