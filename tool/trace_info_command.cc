// `strads trace info DIR [--json]`: what a trace holds and how well it compressed.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "json.h"
#include "strads/trace/describe.h"
#include "strads/trace/reader.h"
#include "strads/trace/segments.h"
#include "strads/trace/stats.h"

namespace strads::tool {

namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

struct NodeStats {
  std::array<uint64_t, 10> per_kind{};  // indexed by EventKind value (the reader checks them)
  uint64_t lock_acquires = 0;           // logged and implied grants (from the last digests)
  double ratio = 0;                     // raw encoded bytes / file bytes
  double bytes_per_event = 0;           // file bytes / events
};

std::string TextList(const std::vector<uint64_t>& values) {
  std::string s;
  for (const uint64_t v : values) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

std::string JsonList(const std::vector<uint64_t>& values) { return "[" + TextList(values) + "]"; }

NodeStats Stats(const NodeTrace& n) {
  NodeStats s;
  for (const Event& e : n.events) ++s.per_kind[static_cast<size_t>(e.kind())];
  s.lock_acquires = LockAcquires(n);
  s.ratio =
      n.file_bytes ? static_cast<double>(n.raw_bytes) / static_cast<double>(n.file_bytes) : 0.0;
  s.bytes_per_event =
      n.events.empty() ? 0.0
                       : static_cast<double>(n.file_bytes) / static_cast<double>(n.events.size());
  return s;
}

constexpr EventKind kKinds[] = {
    EventKind::kLockGrant,     EventKind::kDelivery,    EventKind::kChoice,
    EventKind::kOperatorBegin, EventKind::kOperatorEnd, EventKind::kThreadDigest,
    EventKind::kInput,         EventKind::kWait,        EventKind::kOutcome};

void PrintJson(const TraceReader& r, std::ostream& out) {
  const ManifestInfo& m = r.manifest();
  out << "{\n  \"dir\": " << JsonString(r.dir()) << ",\n";
  out << "  \"format_version\": " << m.format_version << ",\n";
  out << "  \"program\": " << JsonString(m.program) << ",\n";
  out << "  \"build_id\": " << JsonString(m.build_id) << ",\n";
  out << "  \"arguments\": [";
  for (size_t i = 0; i < m.arguments.size(); ++i) {
    out << (i ? ", " : "") << JsonString(m.arguments[i]);
  }
  out << "],\n  \"node_count\": " << m.node_count << ",\n";
  out << "  \"threads_per_node\": " << m.threads_per_node << ",\n";
  out << "  \"inputs\": [";
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    out << (i ? ", " : "") << "{\"path\": " << JsonString(m.inputs[i].path)
        << ", \"size\": " << m.inputs[i].size << ", \"fnv1a64\": \"" << Hex16(m.inputs[i].fnv1a64)
        << "\"}";
  }
  out << "],\n  \"start_time_ns\": " << m.start_time_ns << ",\n";
  out << "  \"clean_close\": " << (m.clean_close ? "true" : "false") << ",\n";
  out << "  \"run_id\": \"" << Hex16(m.run_id) << "\",\n";
  out << "  \"checkpoint_dir\": " << JsonString(m.checkpoint_dir) << ",\n";
  out << "  \"segments\": " << JsonList(m.segments) << ",\n";
  out << "  \"checkpoints\": " << JsonList(m.checkpoints) << ",\n";
  out << "  \"first_held_operator\": " << FirstHeldOperator(m) << ",\n";
  out << "  \"complete\": " << (r.complete() ? "true" : "false") << ",\n";
  out << "  \"nodes\": [";
  for (int k = 0; k < r.nodes(); ++k) {
    const NodeTrace& n = r.node(k);
    const NodeStats s = Stats(n);
    out << (k ? "," : "") << "\n    {\"node\": " << n.node << ", \"events\": " << n.events.size()
        << ", \"events_per_kind\": {";
    for (size_t i = 0; i < std::size(kKinds); ++i) {
      out << (i ? ", " : "") << "\"" << EventKindName(kKinds[i])
          << "\": " << s.per_kind[static_cast<size_t>(kKinds[i])];
    }
    out << "}, \"sites\": " << n.sites.size() << ", \"chunks\": " << n.chunks
        << ", \"frames\": " << n.frames << ", \"file_bytes\": " << n.file_bytes
        << ", \"raw_bytes\": " << n.raw_bytes << ", \"compression_ratio\": " << Fixed(s.ratio, 3)
        << ", \"bytes_per_event\": " << Fixed(s.bytes_per_event, 3)
        << ", \"lock_acquires\": " << s.lock_acquires
        << ", \"complete\": " << (n.complete ? "true" : "false")
        << ", \"incomplete_reason\": " << JsonString(n.incomplete_reason) << "}";
  }
  out << "\n  ]\n}\n";
}

void PrintText(const TraceReader& r, std::ostream& out) {
  const ManifestInfo& m = r.manifest();
  out << "trace " << r.dir() << ": " << (r.complete() ? "complete" : "INCOMPLETE") << "\n";
  out << "  format version " << m.format_version
      << ", clean close: " << (m.clean_close ? "yes" : "no") << ", run id " << Hex16(m.run_id)
      << "\n";
  out << "  program: " << m.program << "\n";
  out << "  build id: " << m.build_id << "\n";
  out << "  arguments:";
  for (const auto& a : m.arguments) out << " " << a;
  out << "\n  start time: " << m.start_time_ns << " ns since the epoch\n";
  out << "  nodes: " << m.node_count << ", threads per node: " << m.threads_per_node << "\n";
  if (!m.checkpoint_dir.empty()) {
    out << "  checkpoints: " << m.checkpoint_dir << ", complete ones held: "
        << (m.checkpoints.empty() ? std::string("none") : TextList(m.checkpoints)) << "\n";
    out << "  segments: after operators "
        << (m.segments.empty() ? std::string("0") : TextList(m.segments)) << "\n";
  }
  if (const std::string note = HeldNote(r.dir(), m); !note.empty())
    out << "  note: " << note << "\n";
  for (const auto& in : m.inputs) {
    out << "  input: " << in.path << " size " << in.size << " fnv1a64 " << Hex16(in.fnv1a64)
        << "\n";
  }
  for (int k = 0; k < r.nodes(); ++k) {
    const NodeTrace& n = r.node(k);
    const NodeStats s = Stats(n);
    out << "node " << n.node << ": "
        << (n.complete ? "complete" : "INCOMPLETE (" + n.incomplete_reason + ")") << "\n";
    out << "  events: " << n.events.size() << " (";
    for (size_t i = 0; i < std::size(kKinds); ++i) {
      out << (i ? ", " : "") << EventKindName(kKinds[i]) << " "
          << s.per_kind[static_cast<size_t>(kKinds[i])];
    }
    out << ")\n";
    const uint64_t logged = s.per_kind[static_cast<size_t>(EventKind::kLockGrant)];
    if (s.lock_acquires > 0)
      out << "  lock grants: " << s.lock_acquires << ", " << logged
          << " of them logged (handovers that earlier ones do not order), the rest implied\n";
    out << "  sites: " << n.sites.size() << ", chunks: " << n.chunks << ", frames: " << n.frames
        << ", files: " << n.segments.size() << " (events " << n.first_event << " to "
        << n.first_event + n.events_read << ")\n";
    out << "  bytes: " << n.file_bytes << " on disk, " << n.raw_bytes
        << " encoded; compression ratio " << Fixed(s.ratio, 2) << ", "
        << Fixed(s.bytes_per_event, 3) << " bytes/event\n";
  }
}

void PrintTraceInfo(const std::string& dir, bool json, std::ostream& out) {
  const TraceReader reader = OpenTrace(dir);
  if (json) {
    PrintJson(reader, out);
  } else {
    PrintText(reader, out);
  }
}

}  // namespace

void AddTraceInfoCommand(CLI::App& parent, CommandResult&) {
  AddTraceReportCommand(parent, "info", "Nodes, events per kind, sizes, completeness",
                        PrintTraceInfo);
}

}  // namespace strads::tool
