// `strads trace export TRACE [-o FILE] [--node K] [--from EVENT --to EVENT]`: the trace as Chrome
// Trace Event JSON for Perfetto UI and chrome://tracing
// (trace/include/strads/trace/chrome_export.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "strads/trace/chrome_export.h"
#include "strads/trace/error.h"

namespace strads::tool {

namespace {

struct ExportArgs {
  std::string dir;
  std::string output;  // "" or "-": stdout
  ChromeExportOptions options;
};

void RunExport(const ExportArgs& args) {
  if (args.options.from && args.options.to && *args.options.from > *args.options.to)
    throw UsageError("strads trace export: --from " + std::to_string(*args.options.from) +
                     " is after --to " + std::to_string(*args.options.to));
  NoteHeld(args.dir, TraceReader::ReadManifest(args.dir + "/manifest"));
  ChromeExportCounts counts;
  if (args.output.empty() || args.output == "-") {
    counts = ExportChromeTrace(args.dir, args.options, std::cout);
    std::cout.flush();
  } else {
    const std::string tmp = args.output + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw UsageError("strads trace export: cannot write '" + tmp + "'");
      counts = ExportChromeTrace(args.dir, args.options, out);
      out.flush();
      if (!out) throw UsageError("strads trace export: writing '" + tmp + "' failed");
    }
    if (std::rename(tmp.c_str(), args.output.c_str()) != 0)
      throw UsageError("strads trace export: cannot rename '" + tmp + "' to '" + args.output + "'");
  }
  std::fprintf(stderr,
               "strads trace export: %llu operator slices, %llu worker slices, %llu waits, "
               "%llu instants, %llu message arrows, %llu lock handover arrows\n",
               static_cast<unsigned long long>(counts.operator_slices),
               static_cast<unsigned long long>(counts.worker_slices),
               static_cast<unsigned long long>(counts.wait_slices),
               static_cast<unsigned long long>(counts.instants),
               static_cast<unsigned long long>(counts.message_flows),
               static_cast<unsigned long long>(counts.handover_flows));
}

}  // namespace

void AddTraceExportCommand(CLI::App& parent, CommandResult&) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = parent.add_subcommand(
      "export", "Chrome Trace Event JSON of a trace, for Perfetto UI and chrome://tracing");
  cmd->add_option("TRACE", args->dir, "Trace directory")->required();
  cmd->add_option("-o,--output", args->output, "Output file (default: standard output)");
  cmd->add_option("--node", args->options.node, "Only this node");
  cmd->add_option("--from", args->options.from, "Only events from this node-log index on");
  cmd->add_option("--to", args->options.to, "Only events up to this node-log index");
  cmd->callback([args] { RunExport(*args); });
}

}  // namespace strads::tool
