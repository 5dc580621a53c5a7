#include "strads/trace/describe.h"

#include <cstdio>
#include <filesystem>

#include "codec.h"

namespace strads {

namespace {

std::string Dec(uint64_t v) { return std::to_string(v); }

// The stored columns that `kind` leaves unused, when set.
std::string UnusedColumns(const Event& event) {
  const auto [a, b, c, d] = EventColumns::Abcd(event);
  bool c_unused = false, d_unused = false;
  switch (event.kind()) {
    case EventKind::kChoice:
    case EventKind::kThreadDigest:
      c_unused = d_unused = true;
      break;
    case EventKind::kOperatorBegin:  // c: the time, which Describe leaves out (DescribeTime)
    case EventKind::kOperatorEnd:
    case EventKind::kDelivery:
      d_unused = true;
      break;
    case EventKind::kOutcome:
      d_unused = true;
      break;
    case EventKind::kLockGrant:
    case EventKind::kInput:
    case EventKind::kWait:
      break;
  }
  std::string text;
  if (c_unused && c != 0) text += " c=" + Dec(c);
  if (d_unused && d != 0) text += " d=" + Dec(d);
  return text;
}

}  // namespace

std::string Hex16(uint64_t value) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string DescribeSite(const TraceSites& sites, uint64_t id) {
  const auto it = id <= UINT32_MAX ? sites.find(static_cast<uint32_t>(id)) : sites.end();
  if (it == sites.end()) return "(undefined site " + Dec(id) + ")";
  const TraceSite& site = it->second;
  if (site.kind == "input") return "'" + site.file + "'";
  return site.kind + " at " + std::filesystem::path(site.file).filename().string() + ":" +
         Dec(site.line);
}

std::string Describe(const Event& event, const TraceSites& sites) {
  std::string text;
  switch (event.kind()) {
    case EventKind::kLockGrant: {
      const LockGrantEvent g = event.lock_grant();
      text = "lock_grant lock " + Dec(g.lock_id) + " task " + Dec(g.task) + " (acquire " +
             Dec(g.acquire) + " of thread " + Dec(g.thread) + ", after thread " +
             Dec(g.from_thread) + " released it at count " + Dec(g.from_count) + ")";
      break;
    }
    case EventKind::kDelivery: {
      const DeliveryEvent d = event.delivery();
      text = "delivery of message " + Dec(d.seq) + " from node " + Dec(d.source) + " (tag " +
             Dec(d.tag) + ")";
      break;
    }
    case EventKind::kChoice: {
      const ChoiceEvent c = event.choice();
      text = std::string("choice ") + ChoicePointName(c.point) + " = " + Dec(c.value);
      break;
    }
    case EventKind::kOperatorBegin:
    case EventKind::kOperatorEnd: {
      const OperatorEvent o = event.operator_event();
      text = std::string(EventKindName(event.kind())) + " " + DescribeSite(sites, o.site) +
             " (invocation " + Dec(o.invocation) + ")";
      break;
    }
    case EventKind::kThreadDigest: {
      const ThreadDigestEvent t = event.thread_digest();
      text = "thread_digest of thread " + Dec(t.thread) + ": " + Dec(t.acquires) +
             " lock acquires, digest " + Hex16(t.digest);
      break;
    }
    case EventKind::kInput: {
      const InputEvent i = event.input();
      text = "input of " + Dec(i.bytes) + " bytes at offset " + Dec(i.offset) + " of " +
             DescribeSite(sites, i.site) + ", FNV-1a " + Hex16(i.fnv1a64);
      break;
    }
    case EventKind::kWait: {
      const WaitEvent w = event.wait();
      text = std::string("wait for ") + WaitKindName(w.kind) +
             (w.kind == static_cast<uint64_t>(TraceWaitKind::kLock) ? " " : " from node ") +
             Dec(w.object) + " by thread " + Dec(w.thread) + ": " + Dec(w.duration_ns) + " ns";
      break;
    }
    case EventKind::kOutcome: {
      const OutcomeEvent o = event.outcome();
      text = "outcome of " + DescribeSite(sites, o.site) + " (invocation " + Dec(o.invocation) +
             "): written state digest " + Hex16(o.digest);
      break;
    }
    default:
      return "unknown event";
  }
  return text + UnusedColumns(event);
}

}  // namespace strads
