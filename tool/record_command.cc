// `strads record [-o DIR] [--] COMMAND...`: runs COMMAND with recording on, like `rr record`.
// COMMAND may be `mpiexec -n 4 prog args`: every rank inherits STRADS_RECORD=DIR and records its
// own node-K.log. The default directory is PROG-N.strace with the first N not taken: a trace is
// never overwritten. The exit status is COMMAND's.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "child_process.h"
#include "commands.h"
#include "mpi_launcher.h"
#include "strads/flag_checks.h"
#include "strads/trace/error.h"

namespace strads::tool {

namespace {

std::string FreshDirectory(const std::string& program) {
  for (int n = 0;; ++n) {
    const std::string dir = program + "-" + std::to_string(n) + ".strace";
    if (::mkdir(dir.c_str(), 0777) == 0) return dir;
    if (errno != EEXIST) throw TraceError(dir + ": cannot create: " + std::strerror(errno));
  }
}

}  // namespace

void AddRecordCommand(CLI::App& parent, CommandResult& result) {
  struct Args {
    std::string output;
    std::optional<uint64_t> chaos;
    std::vector<std::string> command;
  };
  auto args = std::make_shared<Args>();
  CLI::App* record = parent.add_subcommand(
      "record", "Run COMMAND (a strads program, or mpiexec ... program) with recording on");
  record
      ->add_option("-o,--output", args->output,
                   "trace directory; must not exist or be empty (default: PROG-N.strace)")
      ->type_name("DIR");
  record
      ->add_option("--chaos", args->chaos,
                   "inject random delays and yields seeded by SEED at the ordering points "
                   "(STRADS_CHAOS), so that rare interleavings show up")
      ->check(strads::NonNegativeInteger<uint64_t>())
      ->type_name("SEED");
  record->add_option("command", args->command, "the command to record, after --")
      ->required()
      ->expected(-1);
  record->callback([args, &result] {
    std::string dir = args->output;
    if (dir.empty()) {
      dir = FreshDirectory(ProgramOfCommand(args->command));
    } else if (std::error_code ec;
               std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec),
               ::mkdir(dir.c_str(), 0777) != 0) {
      if (errno != EEXIST) throw TraceError(dir + ": cannot create: " + std::strerror(errno));
      if (!std::filesystem::is_directory(dir) || !std::filesystem::is_empty(dir))
        throw TraceError(dir +
                         ": exists and is not an empty directory (a trace is never overwritten)");
    }
    ChildOptions child;
    child.who = "strads record";
    child.set_env = {{"STRADS_RECORD", std::filesystem::absolute(dir)}};
    if (args->chaos) child.set_env.emplace_back("STRADS_CHAOS", std::to_string(*args->chaos));
    child.unset_env = {"STRADS_REPLAY"};
    const int code = RunChildProcess(args->command, child).status;
    // A command that never started a recording (it could not run, or failed before strads
    // started) leaves the directory empty: remove it rather than leave a trace that is none.
    if (std::error_code ec; code != 0 && std::filesystem::is_empty(dir, ec) && !ec) {
      std::filesystem::remove(dir, ec);
      std::cerr << "strads record: no trace (the program exited with status " << code
                << " before recording anything)\n";
      result.exit_status = code;
      return;
    }
    std::cerr << "strads record: trace in " << dir;
    if (code != 0) std::cerr << " (the program exited with status " << code << ")";
    std::cerr << "\n";
    result.exit_status = code;
  });
}

}  // namespace strads::tool
