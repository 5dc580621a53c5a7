// `strads replay DIR -- COMMAND...` (cluster replay): runs COMMAND, normally `mpiexec -n P prog
// args` with the recorded P, with every node following its recorded order (STRADS_REPLAY=DIR).
// `strads replay --single-process DIR -- prog args`: runs all P recorded nodes as logical nodes
// of one process (STRADS_NODES=P), no mpiexec, for a debugger.
// Both set the recorded threads per node (STRADS_THREADS). --tag-output: every line the program
// prints starts with "[node K event N]" (replayer/src/output_tagger.h). The exit status is
// COMMAND's:
// ExitCode::kDivergence when the replay diverged (the program printed the report).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "commands.h"
#include "mpi_launcher.h"
#include "strads/exit_code.h"
#include "strads/process_limits.h"
#include "strads/seam/replay_report.h"
#include "strads/trace/reader.h"

namespace strads::tool {

ChildOptions ReplayChild(const std::string& who, const std::string& dir, const ManifestInfo& m,
                         bool single_process, bool serialize) {
  ChildOptions child;
  child.who = who;
  child.set_env = {{"STRADS_REPLAY", std::filesystem::absolute(dir)},
                   {"STRADS_THREADS", std::to_string(m.threads_per_node)}};
  child.unset_env = {"STRADS_RECORD",
                     "STRADS_CHAOS",
                     "STRADS_NODES",
                     "STRADS_SERIALIZE",
                     "STRADS_REPLAY_TAG_OUTPUT",
                     "STRADS_RESTART",
                     "STRADS_REPLAY_FROM_CHECKPOINT"};
  if (single_process) child.set_env.emplace_back("STRADS_NODES", std::to_string(m.node_count));
  if (serialize) child.set_env.emplace_back("STRADS_SERIALIZE", "1");
  return child;
}

CLI::Option* AddFromCheckpointOption(CLI::App& app, std::string& wanted) {
  // main.cc joins `--from-checkpoint N` into `--from-checkpoint=N`.
  return app.add_flag("--from-checkpoint{latest}", wanted,
                      "--from-checkpoint [N] DIR: restart from checkpoint N (default: the latest "
                      "complete one the trace has segments from) and replay only what the "
                      "recording did after it");
}

void ReplayFromCheckpoint(const std::string& dir, const ManifestInfo& m, const std::string& wanted,
                          ChildOptions& child) {
  namespace fs = std::filesystem;
  if (m.checkpoint_dir.empty())
    throw UsageError(dir +
                     " was recorded without checkpoints (--checkpoint): replay it from "
                     "the start");
  // The segment starts of node 0 are the checkpoints a replay can start from: those the
  // manifest lists, and any a run that died cut after its manifest's last update.
  std::vector<uint64_t> usable;
  for (const SegmentFile& s : NodeSegments(dir, m, 0)) {
    std::error_code ec;
    const fs::path ckpt = fs::path(m.checkpoint_dir) / ("ckpt-" + std::to_string(s.start));
    if (s.start > 0 && fs::exists(ckpt / "MANIFEST", ec)) usable.push_back(s.start);
  }
  std::string held;
  for (const uint64_t n : usable) held += (held.empty() ? "" : ", ") + std::to_string(n);
  uint64_t n = 0;
  if (wanted.empty()) {
    if (usable.empty())
      throw UsageError(dir + ": no complete checkpoint in " + m.checkpoint_dir +
                       " that the trace has segments from: replay it from the start");
    n = usable.back();
  } else {
    if (wanted.find_first_not_of("0123456789") != std::string::npos || wanted.size() > 19)
      throw UsageError("--from-checkpoint " + wanted + ": not a checkpoint number");
    n = std::stoull(wanted);
    if (std::find(usable.begin(), usable.end(), n) == usable.end())
      throw UsageError(dir + ": cannot replay from checkpoint " + wanted + ": " +
                       (held.empty() ? "the trace has no segment that starts at a complete "
                                       "checkpoint of " +
                                           m.checkpoint_dir
                                     : "the complete checkpoints of " + m.checkpoint_dir +
                                           " that the trace has segments from are " + held));
  }
  std::cerr << "strads replay: from checkpoint " << n << " ("
            << (fs::path(m.checkpoint_dir) / ("ckpt-" + std::to_string(n))).string() << ")\n";
  child.set_env.emplace_back("STRADS_RESTART",
                             (fs::path(m.checkpoint_dir) / ("ckpt-" + std::to_string(n))).string());
  child.set_env.emplace_back("STRADS_REPLAY_FROM_CHECKPOINT", std::to_string(n));
}

void AddReplayCommand(CLI::App& parent, CommandResult& result) {
  struct Args {
    std::string dir;
    bool single_process = false;
    bool parallel = false;
    bool tag_output = false;
    std::string checkpoint;  // --from-checkpoint's N, "latest", or "" without it
    std::vector<std::string> command;
  };
  auto args = std::make_shared<Args>();
  CLI::App* replay = parent.add_subcommand(
      "replay", "Run COMMAND so that every ordering decision is the recorded one");
  CLI::Option* single_process =
      replay->add_flag("--single-process", args->single_process,
                       "run every recorded node in this one process (COMMAND without mpiexec)");
  replay
      ->add_flag("--parallel", args->parallel,
                 "with --single-process: let the nodes' threads run at the same time (by "
                 "default one runs at a time, as in a serial program)")
      ->needs(single_process);
  replay->add_flag("--tag-output", args->tag_output,
                   "start every line the program prints with [node K event N]: N is the next "
                   "event the printing thread takes, for strads gdb --event N or break-event N");
  AddFromCheckpointOption(*replay, args->checkpoint);
  replay->add_option("DIR", args->dir, "trace directory (from strads record)")->required();
  replay->add_option("command", args->command, "the command to replay, after --")
      ->required()
      ->expected(-1);
  replay->callback([args, &result] {
    const ManifestInfo m = TraceReader::ReadManifest(args->dir + "/manifest");
    const std::string nodes = std::to_string(m.node_count);
    const bool launcher = IsMpiLauncher(args->command[0]);
    const std::string program = ProgramOfCommand(args->command);
    if (args->single_process && launcher)
      throw CLI::ValidationError("--single-process runs the program itself: drop '" +
                                 args->command[0] + " ...' and give `" + program + " ARGS`");
    if (args->single_process && m.node_count > static_cast<uint32_t>(kMaxLocalNodes))
      throw CLI::ValidationError(
          args->dir + " was recorded on " + nodes + " nodes; --single-process runs at most " +
          std::to_string(kMaxLocalNodes) + " in one process: replay with `-- mpiexec -n " + nodes +
          " " + program + " ARGS`");
    if (!args->single_process && !launcher && m.node_count > 1)
      throw CLI::ValidationError(args->dir + " was recorded on " + nodes +
                                 " nodes: replay with `-- mpiexec -n " + nodes + " " + program +
                                 " ARGS`, or add --single-process");
    ChildOptions child = ReplayChild("strads replay", args->dir, m, args->single_process,
                                     args->single_process && !args->parallel);
    if (args->tag_output) child.set_env.emplace_back("STRADS_REPLAY_TAG_OUTPUT", "1");
    if (!args->checkpoint.empty())
      ReplayFromCheckpoint(args->dir, m, args->checkpoint == "latest" ? "" : args->checkpoint,
                           child);
    if (!m.clean_close)
      std::cerr << "strads replay: note: " << args->dir
                << " is incomplete (the recorded run did not end normally): the replay "
                   "follows it as far as it goes\n";
    // The nodes write their divergence reports here (an aborted MPI job may lose its stderr).
    const std::string reports = MakeTempDirectory("strads replay", "strads-replay");
    child.set_env.emplace_back("STRADS_REPLAY_REPORTS", reports);
    const int code = RunChildProcess(args->command, child).status;
    // node-K.txt: a divergence (the replayer's); node-K.error.txt: any other failure of rank K.
    bool diverged = false;
    for (const ReplayReport& r : ReadReplayReports(reports)) {
      diverged = diverged || r.divergence;
      if (!args->single_process)  // one process: its own stderr has the report
        std::cerr << "strads replay: " << r.text;
    }
    std::filesystem::remove_all(reports);
    // A divergence makes other ranks fail after it (their waits expire, MPI aborts them), and
    // mpiexec passes on whichever status came first: the divergence is the cause and decides.
    if (code == ToInt(ExitCode::kDivergence) || (diverged && code != 0)) {
      std::cerr << "strads replay: the run diverged from " << args->dir << "\n";
      result.exit_status = ToInt(ExitCode::kDivergence);
    } else {
      if (code != 0) std::cerr << "strads replay: the program exited with status " << code << "\n";
      result.exit_status = code;
    }
  });
}

}  // namespace strads::tool
