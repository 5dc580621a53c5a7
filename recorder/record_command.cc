// `strads record [-o DIR] [--] COMMAND...`: runs COMMAND with recording on, like `rr record`.
// COMMAND may be `mpiexec -n 4 prog args`: every rank inherits STRADS_RECORD=DIR and records its
// own node-K.log. The default directory is PROG-N.strace with the first N not taken: a trace is
// never overwritten. The exit status is COMMAND's.
#include "strads/record_command.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "strads/trace_event.h"

namespace strads {

namespace {

bool IsLauncher(const std::string& arg) {
  const std::string base = std::filesystem::path(arg).filename();
  return base == "mpiexec" || base == "mpirun" || base == "mpiexec.hydra";
}

// The program's name for the default directory: COMMAND's first word, or for a launcher the
// first word after its flags (mpiexec -n 4 prog -> prog).
std::string ProgramName(const std::vector<std::string>& command) {
  size_t i = 0;
  if (IsLauncher(command[0])) {
    for (i = 1; i < command.size(); ++i) {
      const std::string& a = command[i];
      if (a == "-n" || a == "-np" || a == "-ppn" || a == "-hosts" || a == "-f")
        ++i;
      else if (a.empty() || a[0] != '-')
        break;
    }
    if (i >= command.size()) i = 0;
  }
  return std::filesystem::path(command[i]).filename();
}

std::string FreshDirectory(const std::string& program) {
  for (int n = 0;; ++n) {
    const std::string dir = program + "-" + std::to_string(n) + ".strace";
    if (::mkdir(dir.c_str(), 0777) == 0) return dir;
    if (errno != EEXIST) throw TraceError(dir + ": cannot create: " + std::strerror(errno));
  }
}

int RunRecorded(const std::string& dir, const std::vector<std::string>& command) {
  const std::string absolute = std::filesystem::absolute(dir);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw TraceError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setenv("STRADS_RECORD", absolute.c_str(), 1);
    ::unsetenv("STRADS_REPLAY");
    ::execvp(argv[0], argv.data());
    std::cerr << "strads record: cannot run '" << command[0] << "': " << std::strerror(errno)
              << "\n";
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

void AddRecordCommand(CLI::App& strads_app, int* exit_code) {
  struct Args {
    std::string output;
    std::vector<std::string> command;
  };
  auto args = std::make_shared<Args>();
  CLI::App* record = strads_app.add_subcommand(
      "record", "Run COMMAND (a strads program, or mpiexec ... program) with recording on");
  record
      ->add_option("-o,--output", args->output,
                   "trace directory; must not exist or be empty (default: PROG-N.strace)")
      ->type_name("DIR");
  record->add_option("command", args->command, "the command to record, after --")
      ->required()
      ->expected(-1);
  record->callback([args, exit_code] {
    std::string dir = args->output;
    if (dir.empty()) {
      dir = FreshDirectory(ProgramName(args->command));
    } else if (std::error_code ec;
               std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec),
               ::mkdir(dir.c_str(), 0777) != 0) {
      if (errno != EEXIST) throw TraceError(dir + ": cannot create: " + std::strerror(errno));
      if (!std::filesystem::is_directory(dir) || !std::filesystem::is_empty(dir))
        throw TraceError(dir +
                         ": exists and is not an empty directory (a trace is never overwritten)");
    }
    const int code = RunRecorded(dir, args->command);
    std::cerr << "strads record: trace in " << dir;
    if (code != 0) std::cerr << " (the program exited with status " << code << ")";
    std::cerr << "\n";
    *exit_code = code;
  });
}

}  // namespace strads
