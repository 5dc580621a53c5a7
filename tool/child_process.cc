#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>

namespace strads::tool {

namespace {

volatile sig_atomic_t child_pid = 0;

void ForwardToChild(int sig) {
  if (child_pid > 0) ::kill(child_pid, sig);
}

// While a child in this process group runs, like system(3) and rr: Ctrl-C and Ctrl-\ reach the
// whole foreground process group, so this process ignores them and lets the child decide;
// SIGTERM and SIGHUP sent to this process alone are passed on. Either way the child (whose
// recorder writes its buffered events on those signals) ends first, and its status is reported.
// The signals are blocked from before fork until the handlers are in place, so none is lost in
// between.
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

// In the child, after fork: sets it up as `options` say and runs COMMAND; exits with
// kCannotRunStatus if that fails.
[[noreturn]] void Exec(const std::vector<char*>& argv, const ChildOptions& options, int stdout_fd) {
  if (options.own_process_group) {
    ::setpgid(0, 0);  // its own group, so that a launcher and its ranks are killed together
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // and it ends if this process is killed
  }
  for (const auto& name : options.unset_env) ::unsetenv(name.c_str());
  for (const auto& [name, value] : options.set_env) ::setenv(name.c_str(), value.c_str(), 1);
  if (!options.stderr_path.empty()) {
    const int err =
        ::open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err >= 0) ::dup2(err, 2);
  }
  if (stdout_fd >= 0) ::dup2(stdout_fd, 1);  // the pipe's ends close on exec
  ::execvp(argv[0], argv.data());
  const std::string message =
      options.who + ": cannot run '" + argv[0] + "': " + std::strerror(errno) + "\n";
  [[maybe_unused]] const ssize_t n = ::write(2, message.data(), message.size());
  ::_exit(kCannotRunStatus);
}

using Clock = std::chrono::steady_clock;

// Appends what `fd` delivers to `out` until the writer closes it. False if `deadline` (when there
// is one) came first.
bool ReadUntilClosed(int fd, const std::optional<Clock::time_point>& deadline, std::string& out) {
  char buf[65536];
  for (;;) {
    int wait_ms = -1;
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return false;
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno != EINTR) return true;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

ChildResult RunChildProcess(const std::vector<std::string>& command, const ChildOptions& options) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  if (options.capture_stdout && ::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::runtime_error(options.who + ": pipe: " + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::optional<ChildSignals> signals;
  if (!options.own_process_group) signals.emplace();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    if (options.capture_stdout) {
      ::close(pipe_fds[0]);
      ::close(pipe_fds[1]);
    }
    throw std::runtime_error(options.who + ": fork: " + std::strerror(error));
  }
  if (pid == 0) {
    if (signals) signals->InChild();
    Exec(argv, options, pipe_fds[1]);
  }
  if (signals)
    signals->InParent(pid);
  else
    ::setpgid(pid, pid);  // also here: the timeout may come before the child's own call

  ChildResult result;
  std::optional<Clock::time_point> deadline;
  if (options.timeout_seconds > 0)
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(options.timeout_seconds));
  const auto kill_child = [&] {
    ::kill(options.own_process_group ? -pid : pid, SIGKILL);
    result.timed_out = true;
  };
  if (options.capture_stdout) {
    ::close(pipe_fds[1]);
    if (!ReadUntilClosed(pipe_fds[0], deadline, result.out)) kill_child();
    ::close(pipe_fds[0]);
  }
  // Its stdout closed (or not captured): the child is ending; it still gets the deadline to exit.
  int status = 0;
  for (;;) {
    const bool block = !deadline || result.timed_out;
    const pid_t r = ::waitpid(pid, &status, block ? 0 : WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (r == 0) {
      if (Clock::now() >= *deadline)
        kill_child();
      else
        ::usleep(10000);
    }
  }
  if (WIFEXITED(status))
    result.status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.status = 128 + WTERMSIG(status);
  else
    result.status = 1;
  return result;
}

}  // namespace strads::tool
