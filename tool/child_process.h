// Running the program a subcommand is about (`strads record`, `replay`, `dualtest`): COMMAND as
// a child process, with its environment adjusted, optionally bounded in time and with its output
// captured; its exit status returned.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace strads::tool {

// The status of a child that could not run its command (as in a shell).
inline constexpr int kCannotRunStatus = 127;

struct ChildOptions {
  std::string who;  // "strads record": prefixes the message when COMMAND cannot be started
  std::vector<std::pair<std::string, std::string>> set_env;  // added to the environment
  std::vector<std::string> unset_env;                        // removed from it
  // false: the child stays in this process group, so a terminal's SIGINT and SIGQUIT reach it
  // directly; while it runs this process ignores them and passes SIGTERM and SIGHUP on to it,
  // like system(3) and rr. true: the child leads a process group of its own, which the timeout
  // kills as a whole (a launcher and its ranks), and gets SIGTERM when this process dies
  // (PR_SET_PDEATHSIG); this process's signal dispositions stay as they are.
  bool own_process_group = false;
  double timeout_seconds = 0;  // > 0: past it the child (its group, if its own) gets SIGKILL
  bool capture_stdout = false;
  std::string stderr_path;  // not empty: the child's stderr goes to this file
};

struct ChildResult {
  int status = 0;          // exit status, 128 + N if signal N ended it, or kCannotRunStatus
  bool timed_out = false;  // killed at the timeout
  std::string out;         // stdout, when captured
};

// Runs `command` (searched in PATH) and waits for it. Throws std::runtime_error when it cannot
// fork.
ChildResult RunChildProcess(const std::vector<std::string>& command, const ChildOptions& options);

}  // namespace strads::tool
