#include "strads/trace/event.h"

#include <iterator>
#include <span>

namespace strads {

namespace {

// Names indexed by value; entry 0 (no such value) stands for every value without a name.
constexpr const char* kEventKindNames[] = {"unknown",       "lock_grant",     "delivery",
                                           "choice",        "operator_begin", "operator_end",
                                           "thread_digest", "input",          "wait",
                                           "outcome"};
static_assert(std::size(kEventKindNames) == static_cast<size_t>(EventKind::kOutcome) + 1);
constexpr const char* kChoicePointNames[] = {"unknown", "ssp_poll", "task_dispatch"};
static_assert(std::size(kChoicePointNames) ==
              static_cast<size_t>(TraceChoicePoint::kTaskDispatch) + 1);
constexpr const char* kWaitKindNames[] = {"unknown", "lock", "message", "collective"};
static_assert(std::size(kWaitKindNames) == static_cast<size_t>(TraceWaitKind::kCollective) + 1);

const char* NameOf(std::span<const char* const> names, uint64_t value) {
  return value < names.size() ? names[value] : names[0];
}

}  // namespace

const char* EventKindName(EventKind kind) {
  return NameOf(kEventKindNames, static_cast<uint64_t>(kind));
}

const char* ChoicePointName(uint64_t point) { return NameOf(kChoicePointNames, point); }

const char* WaitKindName(uint64_t kind) { return NameOf(kWaitKindNames, kind); }

std::optional<uint64_t> EventTimeNs(const Event& event) {
  switch (event.kind()) {
    case EventKind::kOperatorBegin:
    case EventKind::kOperatorEnd:
      return event.operator_event().time_ns;
    case EventKind::kWait:
      return event.wait().begin_ns;
    default:
      return std::nullopt;
  }
}

}  // namespace strads
