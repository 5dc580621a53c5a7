// `strads gdb [--node K] [--event N | --operator SITE[:INVOCATION] | --end] TRACE -- PROG ARGS`:
// gdb on a single-process replay of TRACE (the environment of `strads replay --single-process`:
// every recorded node a logical node of one process, the recorded threads, one thread at a time),
// stopped at the requested point, with the gdb plugin (gdb-plugin/), which PROG loads itself,
// and a `(strads)` prompt. rr's `rr replay -g EVENT` is the model.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "commands.h"
#include "mpi_launcher.h"
#include "strads/flag_checks.h"
#include "strads/trace/reader.h"

namespace strads::tool {
namespace {

struct GdbArgs {
  std::string dir;
  int node = 0;
  int64_t event = -1;
  std::string operator_site;
  bool end = false;
  std::string checkpoint;  // --from-checkpoint's N, "latest", or "" without it
  std::vector<std::string> command;
};

// The gdb command that stops at the requested point.
std::string StopCommand(const GdbArgs& args) {
  const std::string node = std::to_string(args.node);
  if (args.end) return "break strads::ReplayOrderingPolicy::Finish if this->node_ == " + node;
  if (!args.operator_site.empty()) {
    // SITE is FILE:LINE or a site id; a trailing :INVOCATION is the third part after a file,
    // the second after an id.
    std::string site = args.operator_site, invocation;
    const size_t last = site.rfind(':');
    const size_t colons = std::count(site.begin(), site.end(), ':');
    const bool id = site.find_first_not_of("0123456789:") == std::string::npos;
    if (last != std::string::npos && (colons == 2 || (colons == 1 && id))) {
      invocation = " " + site.substr(last + 1);
      site.resize(last);
    }
    return "strads break-operator --node " + node + " " + site + invocation;
  }
  return "strads break-event --node " + node + " " +
         std::to_string(args.event < 0 ? 0 : args.event);
}

}  // namespace

void AddGdbCommand(CLI::App& parent, CommandResult& result) {
  auto args = std::make_shared<GdbArgs>();
  CLI::App* gdb = parent.add_subcommand(
      "gdb", "Start gdb on a single-process replay of TRACE, stopped at an event or operator");
  gdb->add_option("--node", args->node,
                  "the node whose event, operator or end to stop at (default 0)")
      ->check(CLI::Range(0, 1 << 16));
  auto* event = gdb->add_option("--event", args->event,
                                "stop when the node is about to take this event of its "
                                "node-K.log (default: its first)")
                    ->check(strads::NonNegativeInteger<int64_t>());
  auto* site = gdb->add_option("--operator", args->operator_site,
                               "stop when an operator invocation starts: FILE:LINE[:INVOCATION] "
                               "or SITE_ID[:INVOCATION] (sites as strads trace dump names them)");
  auto* end = gdb->add_flag("--end", args->end, "stop when the node's replay has finished");
  event->excludes(site)->excludes(end);
  site->excludes(end);
  AddFromCheckpointOption(*gdb, args->checkpoint);
  gdb->add_option("TRACE", args->dir, "trace directory (from strads record)")->required();
  gdb->add_option("command", args->command, "the program and its arguments, after --")
      ->required()
      ->expected(-1);
  gdb->callback([args, &result] {
    const ManifestInfo m = TraceReader::ReadManifest(args->dir + "/manifest");
    if (IsMpiLauncher(args->command[0]))
      throw CLI::ValidationError("strads gdb runs the program itself: drop '" + args->command[0] +
                                 " ...' and give `" + ProgramOfCommand(args->command) + " ARGS`");
    if (args->node >= static_cast<int>(m.node_count))
      throw CLI::ValidationError(args->dir + " was recorded on " + std::to_string(m.node_count) +
                                 " nodes: --node " + std::to_string(args->node) +
                                 " does not exist");
    std::error_code error;
    const std::filesystem::path program = std::filesystem::canonical(args->command[0], error);
    if (error)
      throw UsageError("strads gdb: " + args->command[0] + ": " + error.message() +
                       " (give the program's path)");
    std::vector<std::string> command = {"gdb",    "-q",
                                        "-iex",   "add-auto-load-safe-path " + program.string(),
                                        "-iex",   "set prompt (strads) ",
                                        "-ex",    StopCommand(*args),
                                        "-ex",    "run",
                                        "--args", program.string()};
    command.insert(command.end(), args->command.begin() + 1, args->command.end());
    ChildOptions child = ReplayChild("strads gdb", args->dir, m, /*single_process=*/true,
                                     /*serialize=*/true);
    // LeakSanitizer cannot work in a program under a debugger (at exit it ptraces the program's
    // threads, which gdb already traces): a program built with ASan would end in "LeakSanitizer
    // has encountered a fatal error". Leak checking is off under gdb; other programs ignore it.
    for (const char* name : {"ASAN_OPTIONS", "LSAN_OPTIONS"}) {
      const char* options = std::getenv(name);
      child.set_env.emplace_back(
          name, (options && *options ? std::string(options) + ":" : "") + "detect_leaks=0");
    }
    if (!args->checkpoint.empty())
      ReplayFromCheckpoint(args->dir, m, args->checkpoint == "latest" ? "" : args->checkpoint,
                           child);
    result.exit_status = RunChildProcess(command, child).status;
  });
}

}  // namespace strads::tool
