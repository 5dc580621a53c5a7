// `strads trace dump DIR [--node K]`: every event, one per line.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "strads/trace/reader.h"
#include "strads/viewer_commands.h"

namespace strads {

namespace {

std::string SiteName(const std::map<uint32_t, TraceSite>& sites, uint64_t id) {
  const auto it = id <= UINT32_MAX ? sites.find(static_cast<uint32_t>(id)) : sites.end();
  if (it == sites.end()) return "(undefined site)";
  return it->second.kind + " at " + it->second.file + ":" + std::to_string(it->second.line);
}

const char* ChoiceName(uint64_t point) {
  switch (point) {
    case 1:
      return "ssp_poll";
    case 2:
      return "task_dispatch";
    default:
      return "unknown";
  }
}

void DumpNode(const NodeTrace& n, std::ostream& out) {
  out << "# node " << n.node << ": " << n.events.size() << " events, "
      << (n.complete ? "complete" : "INCOMPLETE (" + n.incomplete_reason + ")") << "\n";
  for (const auto& [id, s] : n.sites) {
    out << "# site " << id << ": " << s.kind << " at " << s.file << ":" << s.line << "\n";
  }
  char buf[200];
  for (size_t i = 0; i < n.events.size(); ++i) {
    const Event& e = n.events[i];
    const auto a = static_cast<unsigned long long>(e.a);
    const auto b = static_cast<unsigned long long>(e.b);
    const auto c = static_cast<unsigned long long>(e.c);
    const auto d = static_cast<unsigned long long>(e.d);
    const auto idx = static_cast<unsigned long long>(i);
    int len = 0;
    std::string suffix;
    switch (e.kind) {
      case EventKind::kLockGrant:
        len = std::snprintf(
            buf, sizeof buf,
            "node %d #%llu thread %u lock_grant lock %llu task %llu acquire %llu after thread "
            "%llu released it at count %llu",
            n.node, idx, e.thread, a, b, d, static_cast<unsigned long long>(e.e), c);
        break;
      case EventKind::kThreadDigest:
        len = std::snprintf(buf, sizeof buf,
                            "node %d #%llu thread %u thread_digest acquires %llu digest %016llx",
                            n.node, idx, e.thread, a, b);
        break;
      case EventKind::kInput:
        len = std::snprintf(buf, sizeof buf,
                            "node %d #%llu thread %u input bytes %llu..%llu fnv1a64 %016llx of ",
                            n.node, idx, e.thread, b, b + c, d);
        suffix = SiteName(n.sites, e.a);
        break;
      case EventKind::kDelivery:
        len = std::snprintf(buf, sizeof buf,
                            "node %d #%llu thread %u delivery from node %llu seq %llu tag %llu",
                            n.node, idx, e.thread, a, b, c);
        break;
      case EventKind::kChoice:
        len = std::snprintf(buf, sizeof buf,
                            "node %d #%llu thread %u choice point %llu (%s) value %llu", n.node,
                            idx, e.thread, a, ChoiceName(e.a), b);
        break;
      case EventKind::kOperatorBegin:
      case EventKind::kOperatorEnd:
        len =
            std::snprintf(buf, sizeof buf, "node %d #%llu thread %u %s site %llu invocation %llu ",
                          n.node, idx, e.thread, EventKindName(e.kind), a, b);
        suffix = SiteName(n.sites, e.a);
        break;
    }
    out.write(buf, len > 0 ? std::min<int>(len, sizeof buf - 1) : 0);
    out << suffix;
    // Fields a kind does not use are shown only when set.
    const bool c_unused = e.kind == EventKind::kChoice || e.kind == EventKind::kOperatorBegin ||
                          e.kind == EventKind::kOperatorEnd || e.kind == EventKind::kThreadDigest;
    const bool d_unused = c_unused || e.kind == EventKind::kDelivery;
    if (c_unused && e.c != 0) out << " c=" << c;
    if (d_unused && e.d != 0) out << " d=" << d;
    out << "\n";
  }
}

}  // namespace

void PrintTraceDump(const std::string& dir, std::optional<int> node, std::ostream& out) {
  const TraceReader reader = TraceReader::Open(dir);
  if (node) {
    if (*node < 0 || *node >= reader.nodes()) {
      throw TraceError(dir + ": no node " + std::to_string(*node) + " (the trace has " +
                       std::to_string(reader.nodes()) + " nodes)");
    }
    DumpNode(reader.node(*node), out);
    return;
  }
  for (int k = 0; k < reader.nodes(); ++k) DumpNode(reader.node(k), out);
}

void AddTraceDumpCommand(CLI::App& trace) {
  struct Options {
    std::string dir;
    std::optional<int> node;
  };
  auto options = std::make_shared<Options>();
  CLI::App* dump = trace.add_subcommand("dump", "Print every event, one per line");
  dump->add_option("DIR", options->dir, "Trace directory")->required();
  dump->add_option("--node", options->node, "Only this node");
  dump->callback([options] { PrintTraceDump(options->dir, options->node, std::cout); });
}

}  // namespace strads
