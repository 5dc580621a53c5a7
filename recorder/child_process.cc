#include "strads/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>

namespace strads {

namespace {

volatile sig_atomic_t child_pid = 0;

void ForwardToChild(int sig) {
  if (child_pid > 0) ::kill(child_pid, sig);
}

// While the child runs, like system(3) and rr: Ctrl-C and Ctrl-\ reach the whole foreground
// process group, so this process ignores them and lets the child decide; SIGTERM and SIGHUP
// sent to this process alone are passed on. Either way the child (whose recorder writes its
// buffered events on those signals) ends first, and its status is reported.
class ChildSignals {
 public:
  explicit ChildSignals(pid_t pid) {
    child_pid = pid;
    struct sigaction ignore = {};
    struct sigaction forward = {};
    ignore.sa_handler = SIG_IGN;
    forward.sa_handler = ForwardToChild;
    sigemptyset(&ignore.sa_mask);
    sigemptyset(&forward.sa_mask);
    ::sigaction(SIGINT, &ignore, &old_[0]);
    ::sigaction(SIGQUIT, &ignore, &old_[1]);
    ::sigaction(SIGTERM, &forward, &old_[2]);
    ::sigaction(SIGHUP, &forward, &old_[3]);
  }
  ~ChildSignals() {
    ::sigaction(SIGINT, &old_[0], nullptr);
    ::sigaction(SIGQUIT, &old_[1], nullptr);
    ::sigaction(SIGTERM, &old_[2], nullptr);
    ::sigaction(SIGHUP, &old_[3], nullptr);
    child_pid = 0;
  }
  ChildSignals(const ChildSignals&) = delete;
  ChildSignals& operator=(const ChildSignals&) = delete;

 private:
  struct sigaction old_[4]{};
};

}  // namespace

bool IsMpiLauncher(const std::string& arg) {
  const std::string base = std::filesystem::path(arg).filename();
  return base == "mpiexec" || base == "mpirun" || base == "mpiexec.hydra";
}

std::string ProgramOfCommand(const std::vector<std::string>& command) {
  if (command.empty()) return "";
  size_t i = 0;
  if (IsMpiLauncher(command[0])) {
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

int RunChildProcess(const std::vector<std::string>& command,
                    const std::vector<std::pair<std::string, std::string>>& set,
                    const std::vector<std::string>& unset, const std::string& who) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(who + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    for (const auto& name : unset) ::unsetenv(name.c_str());
    for (const auto& [name, value] : set) ::setenv(name.c_str(), value.c_str(), 1);
    ::execvp(argv[0], argv.data());
    std::cerr << who << ": cannot run '" << command[0] << "': " << std::strerror(errno) << "\n";
    ::_exit(127);
  }
  int status = 0;
  {
    ChildSignals signals(pid);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace strads
