// `strads replay DIR -- COMMAND...` (cluster replay): runs COMMAND, normally `mpiexec -n P prog
// args` with the recorded P, with every node following its recorded order (STRADS_REPLAY=DIR).
// `strads replay --single-process DIR -- prog args`: runs all P recorded nodes as logical nodes
// of one process (STRADS_NODES=P), no mpiexec, for a debugger.
// Both set the recorded threads per node (STRADS_THREADS). The exit status is COMMAND's: 3
// when the replay diverged (the program printed the report).
#include "strads/replay_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "strads/child_process.h"
#include "strads/trace_reader.h"

namespace strads {

void AddReplayCommand(CLI::App& strads_app, int* exit_code) {
  struct Args {
    std::string dir;
    bool single_process = false;
    std::vector<std::string> command;
  };
  auto args = std::make_shared<Args>();
  CLI::App* replay = strads_app.add_subcommand(
      "replay", "Run COMMAND so that every ordering decision is the recorded one");
  replay->add_flag("--single-process", args->single_process,
                   "run every recorded node in this one process (COMMAND without mpiexec)");
  replay->add_option("DIR", args->dir, "trace directory (from strads record)")->required();
  replay->add_option("command", args->command, "the command to replay, after --")
      ->required()
      ->expected(-1);
  replay->callback([args, exit_code] {
    const ManifestInfo m = TraceReader::ReadManifest(args->dir + "/manifest");
    const std::string nodes = std::to_string(m.node_count);
    const bool launcher = IsMpiLauncher(args->command[0]);
    const std::string program = ProgramOfCommand(args->command);
    if (args->single_process && launcher)
      throw CLI::ValidationError("--single-process runs the program itself: drop '" +
                                 args->command[0] + " ...' and give `" + program + " ARGS`");
    if (!args->single_process && !launcher && m.node_count > 1)
      throw CLI::ValidationError(args->dir + " was recorded on " + nodes +
                                 " nodes: replay with `-- mpiexec -n " + nodes + " " + program +
                                 " ARGS`, or add --single-process");
    std::vector<std::pair<std::string, std::string>> env = {
        {"STRADS_REPLAY", std::filesystem::absolute(args->dir)},
        {"STRADS_THREADS", std::to_string(m.threads_per_node)}};
    if (args->single_process) env.emplace_back("STRADS_NODES", nodes);
    if (!m.clean_close)
      std::cerr << "strads replay: note: " << args->dir
                << " is incomplete (the recorded run did not end normally): the replay "
                   "follows it as far as it goes\n";
    const int code = RunChildProcess(args->command, env,
                                     {"STRADS_RECORD", "STRADS_CHAOS", "STRADS_NODES"},
                                     "strads replay");
    if (code == 3)
      std::cerr << "strads replay: the run diverged from " << args->dir << "\n";
    else if (code != 0)
      std::cerr << "strads replay: the program exited with status " << code << "\n";
    *exit_code = code;
  });
}

}  // namespace strads
