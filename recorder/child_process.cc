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
// buffered events on those signals) ends first, and its status is reported. The signals are
// blocked from before fork until the handlers are in place, so none is lost in between.
class ChildSignals {
 public:
  static constexpr int kSignals[4] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};

  ChildSignals() {
    sigset_t block;
    sigemptyset(&block);
    for (int sig : kSignals) sigaddset(&block, sig);
    ::sigprocmask(SIG_BLOCK, &block, &old_mask_);
  }
  // In the child, before exec: the signal mask it was started with (dispositions untouched).
  void InChild() { ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr); }
  // In the parent: ignore and forward, then unblock (what arrived meanwhile is handled now).
  void InParent(pid_t pid) {
    child_pid = pid;
    struct sigaction ignore = {};
    struct sigaction forward = {};
    ignore.sa_handler = SIG_IGN;
    forward.sa_handler = ForwardToChild;
    sigemptyset(&ignore.sa_mask);
    sigemptyset(&forward.sa_mask);
    for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], i < 2 ? &ignore : &forward, &old_[i]);
    installed_ = true;
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  ~ChildSignals() {
    if (installed_)
      for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
    child_pid = 0;
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  ChildSignals(const ChildSignals&) = delete;
  ChildSignals& operator=(const ChildSignals&) = delete;

 private:
  sigset_t old_mask_{};
  struct sigaction old_[4]{};
  bool installed_ = false;
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
  ChildSignals signals;
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(who + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    signals.InChild();
    for (const auto& name : unset) ::unsetenv(name.c_str());
    for (const auto& [name, value] : set) ::setenv(name.c_str(), value.c_str(), 1);
    ::execvp(argv[0], argv.data());
    std::cerr << who << ": cannot run '" << command[0] << "': " << std::strerror(errno) << "\n";
    ::_exit(127);
  }
  signals.InParent(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace strads
