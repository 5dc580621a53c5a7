#include "strads/trace/event.h"

namespace strads {

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kLockGrant:
      return "lock_grant";
    case EventKind::kDelivery:
      return "delivery";
    case EventKind::kChoice:
      return "choice";
    case EventKind::kOperatorBegin:
      return "operator_begin";
    case EventKind::kOperatorEnd:
      return "operator_end";
    case EventKind::kThreadDigest:
      return "thread_digest";
    case EventKind::kInput:
      return "input";
  }
  return "unknown";
}

const char* ChoicePointName(uint64_t point) {
  switch (static_cast<TraceChoicePoint>(point)) {
    case TraceChoicePoint::kSspPoll:
      return "ssp_poll";
    case TraceChoicePoint::kTaskDispatch:
      return "task_dispatch";
  }
  return "unknown";
}

}  // namespace strads
