// The subcommands of the `strads` tool, one file each (rr's pattern): record_command.cc,
// replay_command.cc, dualtest_command.cc, trace_info_command.cc, trace_dump_command.cc,
// trace_diff_command.cc, trace_export_command.cc, trace_view_command.cc, gdb_command.cc,
// run_command.cc. Each registers itself on its parent command the same way; its callback does
// the work, leaves the tool's exit status in `result`, and throws on errors. main.cc is the one
// place that maps what they throw to exit codes (strads/exit_code.h).
#pragma once

#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_process.h"
#include "strads/trace/manifest.h"
#include "strads/trace/reader.h"
#include "strads/trace/stats.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace strads::tool {

// What a subcommand leaves for main: the exit status, an ExitCode, or the status of the program
// it ran, passed through (the same numbers).
struct CommandResult {
  int exit_status = 0;
};

// Bad usage that CLI11 cannot see, such as a program that does not exist: exit code kBadInput.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A new directory of this process's own, $TMPDIR/NAME-XXXXXX (/tmp when TMPDIR is unset or
// empty), for `who`'s working files: where /tmp is not writable (a sandbox, a read-only root),
// TMPDIR names the place that is. Throws UsageError, prefixed by `who`, naming the path and why it
// could not be made (a TMPDIR that does not exist). The caller removes it.
std::string MakeTempDirectory(const std::string& who, const std::string& name);

// TraceReader::Open, and on stderr what a trace whose first segments were deleted holds
// (NoteHeld): every `strads trace` command reads through it.
TraceReader OpenTrace(const std::string& dir);
void NoteHeld(const std::string& dir, const ManifestInfo& manifest);

// Registers `strads trace NAME DIR [--json]`, a report on one trace: print(dir, json, out).
// Its exit status stays 0: errors are thrown.
using TraceReport = std::function<void(const std::string& dir, bool json, std::ostream& out)>;
void AddTraceReportCommand(CLI::App& parent, const std::string& name, const std::string& help,
                           TraceReport print);

// The child process of a replay of the trace in `dir` (manifest `m`), named `who` in its
// messages: the replay's environment. `single_process`: every recorded node in that one process;
// `serialize`: one of its threads running at a time (for a debugger).
ChildOptions ReplayChild(const std::string& who, const std::string& dir, const ManifestInfo& m,
                         bool single_process, bool serialize);

// --from-checkpoint [N] of `strads replay` and `strads gdb`: the flag (`wanted`: N, "latest",
// or "" without it), and what a replay from that checkpoint of the trace in `dir` adds to
// `child`'s environment (the restart from CHECKPOINT_DIR/ckpt-N, the segments from N on).
// `wanted`: N, or "" for the latest complete checkpoint the trace has segments from. Throws
// UsageError naming what the trace holds.
CLI::Option* AddFromCheckpointOption(CLI::App& app, std::string& wanted);
void ReplayFromCheckpoint(const std::string& dir, const ManifestInfo& m, const std::string& wanted,
                          ChildOptions& child);

// strads record [-o DIR] [--chaos SEED] -- COMMAND...
void AddRecordCommand(CLI::App& parent, CommandResult& result);
// strads replay [--single-process [--parallel]] DIR -- COMMAND...
void AddReplayCommand(CLI::App& parent, CommandResult& result);
// strads dualtest [--nodes P] [--threads T] [--mpi] [--timeout SEC] [--work DIR] ... -- PROGRAM
void AddDualtestCommand(CLI::App& parent, CommandResult& result);
// strads trace info DIR [--json] (parent: `strads trace`)
void AddTraceInfoCommand(CLI::App& parent, CommandResult& result);
// strads trace dump DIR [--node K] (parent: `strads trace`)
void AddTraceDumpCommand(CLI::App& parent, CommandResult& result);
// strads trace stats DIR [--json] (parent: `strads trace`)
void AddTraceStatsCommand(CLI::App& parent, CommandResult& result);
// strads trace diff A B [--json] (parent: `strads trace`)
void AddTraceDiffCommand(CLI::App& parent, CommandResult& result);
// strads trace export TRACE [-o FILE] [--node K] [--from EVENT --to EVENT] (parent: `strads trace`)
void AddTraceExportCommand(CLI::App& parent, CommandResult& result);
// strads trace view DIR [-o FILE.html] (parent: `strads trace`)
void AddTraceViewCommand(CLI::App& parent, CommandResult& result);

// `trace stats --json` of `stats`, which `trace view` embeds too.
void PrintStatsJson(const TraceStats& stats, std::ostream& out);
// strads gdb [--node K] [--event N | --operator SITE[:INVOCATION] | --end] TRACE -- PROG ARGS
void AddGdbCommand(CLI::App& parent, CommandResult& result);
// strads run --restarts N --checkpoint DIR (--checkpoint-every N | --checkpoint-seconds S)
// [--checkpoint-keep K] -- COMMAND...
void AddRunCommand(CLI::App& parent, CommandResult& result);

}  // namespace strads::tool
