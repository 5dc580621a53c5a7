// `strads trace dump DIR [--node K]`: every event, one per line.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "strads/trace/describe.h"
#include "strads/trace/reader.h"

namespace strads::tool {

namespace {

void DumpNode(const NodeTrace& n, std::ostream& out) {
  out << "# node " << n.node << ": " << n.events.size() << " events, "
      << (n.complete ? "complete" : "INCOMPLETE (" + n.incomplete_reason + ")") << "\n";
  for (const auto& [id, s] : n.sites) {
    out << "# site " << id << ": " << s.kind << " at " << s.file << ":" << s.line << "\n";
  }
  for (size_t i = 0; i < n.events.size(); ++i) {
    const Event& e = n.events[i];
    out << "node " << n.node << " #" << i << " thread " << e.thread() << " " << Describe(e, n.sites)
        << "\n";
  }
}

void PrintTraceDump(const std::string& dir, std::optional<int> node, std::ostream& out) {
  const TraceReader reader = OpenTrace(dir);
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

}  // namespace

// The exit status stays 0: errors are thrown.
void AddTraceDumpCommand(CLI::App& parent, CommandResult&) {
  struct Options {
    std::string dir;
    std::optional<int> node;
  };
  auto options = std::make_shared<Options>();
  CLI::App* dump = parent.add_subcommand("dump", "Print every event, one per line");
  dump->add_option("DIR", options->dir, "Trace directory")->required();
  dump->add_option("--node", options->node, "Only this node");
  dump->callback([options] { PrintTraceDump(options->dir, options->node, std::cout); });
}

}  // namespace strads::tool
