#include "strads/internal/body_adds.h"

#include <vector>

namespace strads::internal {

namespace {

// A body's adds past BodyAddLog::kInline, in order.
thread_local std::vector<BodyAddLog::Entry> overflow;

}  // namespace

void LogBodyAddOverflow(std::byte* slot, uint64_t before) { overflow.push_back({slot, before}); }

void UndoBodyAddOverflow() {
  for (size_t k = overflow.size(); k-- > 0;)
    std::memcpy(overflow[k].slot, &overflow[k].before, kBodyAddBytes);
  overflow.clear();
}

}  // namespace strads::internal
