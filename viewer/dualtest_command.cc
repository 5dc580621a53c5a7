// `strads dualtest [options] -- PROGRAM ARGS...`: the forward and backward tests of
// discrepancy-free dual testing (thesis section 5.5, Figure 15) on a strads program.
//
//   serial    PROGRAM ARGS --nodes 1 --threads 1 --sync-workers PxT --dual-out serial.dual
//   forward   [mpiexec -n P] PROGRAM ARGS [--nodes P] --threads T --dual-in serial.dual
//                                                               --dual-out forward.dual
//   parallel  [mpiexec -n P] PROGRAM ARGS [--nodes P] --threads T --test-mode
//                                                               --dual-out parallel.dual
//   backward  PROGRAM ARGS --nodes 1 --threads 1 --dual-in parallel.dual --dual-out backward.dual
//
// Forward passes when the forward run's outcome equals the serial run's, backward when the
// backward run's equals the parallel run's. An outcome is the program's stdout lines that start
// with a --compare prefix (default "epoch " and "checksum:") and the state after every loop
// invocation that the runtime writes into the .dual file. Every run is bounded by --timeout
// (the program's own bounded waits get the same limit; a run still going is killed).
#include "strads/dualtest_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "strads/trace/error.h"  // TraceError: bad usage, exit code 2

namespace strads {

namespace {

struct Args {
  int nodes = 2;
  int threads = 1;
  bool mpi = false;
  std::string mpiexec = "mpiexec";
  double timeout = 300;
  std::string work;
  std::vector<std::string> compare;
  std::vector<std::string> command;
};

struct RunResult {
  int status = 0;  // exit status, 128 + signal, or -1 when killed for the timeout
  std::string out;
  std::string err_path;
};

// Runs argv with stdout captured and stderr to err_path; kills its process group after
// `timeout` seconds.
RunResult RunChild(const std::vector<std::string>& command, const std::string& err_path,
                   double timeout) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so that a launcher and its ranks are killed together
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // and it ends if dualtest is killed (ctest's timeout)
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) ::dup2(err, 2);
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execvp(argv[0], argv.data());
    const std::string msg =
        "strads dualtest: cannot run '" + command[0] + "': " + std::strerror(errno) + "\n";
    [[maybe_unused]] const ssize_t n = ::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(fds[1]);
  RunResult result;
  result.err_path = err_path;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  bool killed = false;
  char buf[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      ::kill(-pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  // stdout closed: the program is ending; it still gets the deadline to exit.
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, killed ? 0 : WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (r == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(-pid, SIGKILL);
        killed = true;
      } else {
        ::usleep(10000);
      }
    }
  }
  if (killed)
    result.status = -1;
  else if (WIFEXITED(status))
    result.status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.status = 128 + WTERMSIG(status);
  else
    result.status = 1;
  return result;
}

// Whether execvp could find and run `program`.
bool Runnable(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

std::string Tail(const std::string& path, size_t max_lines) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string text;
  for (size_t i = lines.size() > max_lines ? lines.size() - max_lines : 0; i < lines.size(); ++i)
    text += "    " + lines[i] + "\n";
  return text;
}

std::string Join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// What a run produced: the compared stdout lines and the per-invocation states.
struct Outcome {
  std::vector<std::string> lines;
  struct State {
    std::string loop, site, hex;
    long long invocation;
  };
  std::vector<State> states;
};

Outcome OutcomeOf(const RunResult& run, const std::string& dual_path,
                  const std::vector<std::string>& prefixes) {
  Outcome o;
  std::istringstream out(run.out);
  for (std::string line; std::getline(out, line);)
    for (const auto& p : prefixes)
      if (line.compare(0, p.size(), p) == 0) {
        o.lines.push_back(line);
        break;
      }
  std::ifstream in(dual_path);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, 6, "state ") != 0) continue;
    std::istringstream words(line.substr(6));
    Outcome::State s;
    words >> s.loop >> s.invocation >> s.hex;
    std::getline(words >> std::ws, s.site);
    o.states.push_back(s);
  }
  return o;
}

std::string ShortSite(const std::string& site) {
  return std::filesystem::path(site).filename().string();
}

// The first difference between a baseline and a follower, or nothing. Names are "serial" and
// "parallel" in the order the report prints them.
std::optional<std::string> FirstDifference(const Outcome& base, const std::string& base_name,
                                           const Outcome& other, const std::string& other_name) {
  std::string state_diff, line_diff;
  for (size_t i = 0; i < std::max(base.states.size(), other.states.size()); ++i) {
    if (i >= base.states.size() || i >= other.states.size()) {
      const Outcome::State& s = i < base.states.size() ? base.states[i] : other.states[i];
      state_diff = "the " + (i < base.states.size() ? other_name : base_name) +
                   " run has no state for iteration " + std::to_string(s.invocation + 1) +
                   " of the " + (s.loop == "asyncfor" ? "AsyncFor" : "SyncFor") + " at " +
                   ShortSite(s.site) + " (it ran " +
                   std::to_string(std::min(base.states.size(), other.states.size())) +
                   " loop invocations)";
      break;
    }
    const Outcome::State& a = base.states[i];
    const Outcome::State& b = other.states[i];
    if (a.loop != b.loop || a.site != b.site || a.invocation != b.invocation) {
      state_diff = "the runs executed different loops: " + base_name + " " + a.loop + " " +
                   ShortSite(a.site) + " #" + std::to_string(a.invocation) + ", " + other_name +
                   " " + b.loop + " " + ShortSite(b.site) + " #" + std::to_string(b.invocation);
      break;
    }
    if (a.hex != b.hex) {
      state_diff = "first difference at iteration " + std::to_string(a.invocation + 1) + " (" +
                   (a.loop == "asyncfor" ? "AsyncFor" : "SyncFor") + " at " + ShortSite(a.site) +
                   ", invocation " + std::to_string(a.invocation) + "): " + base_name + " state " +
                   a.hex + " vs " + other_name + " state " + b.hex;
      break;
    }
  }
  for (size_t i = 0; i < std::max(base.lines.size(), other.lines.size()); ++i) {
    const std::string a = i < base.lines.size() ? base.lines[i] : "(no line)";
    const std::string b = i < other.lines.size() ? other.lines[i] : "(no line)";
    if (a == b) continue;
    std::string where = "line " + std::to_string(i + 1);
    for (const std::string& l : {a, b})
      if (l.compare(0, 6, "epoch ") == 0) {
        std::istringstream words(l.substr(6));
        std::string n;
        words >> n;
        where = "epoch " + n;
        break;
      }
    line_diff = "first difference at " + where + ": " + base_name + " '" + a + "' vs " +
                other_name + " '" + b + "'";
    break;
  }
  if (state_diff.empty() && line_diff.empty()) return std::nullopt;
  if (state_diff.empty()) return line_diff;
  if (line_diff.empty())
    return state_diff + "\n  (the printed output is equal: the difference is below its precision)";
  return state_diff + "\n  output: " + line_diff;
}

class DualTest {
 public:
  explicit DualTest(const Args& a) : a_(a) {}

  int Run() {
    if (a_.command.empty()) throw TraceError("dualtest: no program to test (after --)");
    if (!Runnable(a_.command[0]))
      throw TraceError("dualtest: cannot run '" + a_.command[0] +
                       "': no such executable (give a path or a program on the PATH)");
    const std::string program = std::filesystem::path(a_.command[0]).filename();
    bool own_dir = false;
    std::string dir = a_.work;
    if (dir.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/strads-dualtest-XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr)
        throw TraceError(pattern + ": cannot create: " + std::strerror(errno));
      dir = pattern;
      own_dir = true;
    } else {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) throw TraceError(dir + ": cannot create: " + ec.message());
    }
    dir_ = dir;
    std::cout << "strads dualtest: " << program << " on " << a_.nodes << " node(s) x " << a_.threads
              << " thread(s)" << (a_.mpi ? " (mpiexec)" : " (in-process nodes)") << "\n";
    const std::string topology = std::to_string(a_.nodes) + "x" + std::to_string(a_.threads);
    // Forward: serial baseline, parallel follower.
    int code = 0;
    const auto serial = Step("serial", Serial({"--sync-workers", topology}), "serial.dual");
    if (serial.status == 2 || serial.status == 127) code = 2;
    std::optional<std::string> forward, backward;
    if (code == 0) {
      if (serial.status == 0)
        forward =
            Compare("forward", serial, "serial.dual", "serial",
                    Step("forward", Parallel({"--dual-in", Path("serial.dual")}), "forward.dual"),
                    "forward.dual", "parallel");
      else
        forward = Failed("serial", serial);
      const auto parallel = Step("parallel", Parallel({}), "parallel.dual");
      if (parallel.status == 0)
        backward =
            Compare("backward", parallel, "parallel.dual", "parallel",
                    Step("backward", Serial({"--dual-in", Path("parallel.dual")}), "backward.dual"),
                    "backward.dual", "serial");
      else
        backward = Failed("parallel", parallel);
    } else {
      forward = backward = Failed("serial", serial);
    }
    Report("forward", forward);
    Report("backward", backward);
    if (code == 0 && (forward || backward)) code = 1;
    std::cout << "verdict: "
              << (code == 0   ? "PASS"
                  : code == 1 ? "FAIL"
                              : "ERROR (the program rejected its flags)")
              << "\n";
    if (code == 2)
      std::cerr << "strads dualtest: the serial run of " << program
                << " failed with a usage error: see above\n";
    if (own_dir && code == 0) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    } else {
      std::cout << "files: " << dir << "\n";
    }
    return code;
  }

 private:
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::vector<std::string> Serial(std::vector<std::string> extra) const {
    std::vector<std::string> c = a_.command;
    c.insert(c.end(), {"--nodes", "1", "--threads", "1", "--test-mode"});
    c.insert(c.end(), extra.begin(), extra.end());
    return c;
  }
  std::vector<std::string> Parallel(std::vector<std::string> extra) const {
    std::vector<std::string> c;
    if (a_.mpi) c = {a_.mpiexec, "-n", std::to_string(a_.nodes)};
    c.insert(c.end(), a_.command.begin(), a_.command.end());
    if (!a_.mpi) c.insert(c.end(), {"--nodes", std::to_string(a_.nodes)});
    c.insert(c.end(), {"--threads", std::to_string(a_.threads), "--test-mode"});
    c.insert(c.end(), extra.begin(), extra.end());
    return c;
  }

  RunResult Step(const std::string& name, std::vector<std::string> command,
                 const std::string& dual) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", a_.timeout);
    command.insert(command.end(), {"--timeout", limit});
    command.insert(command.end(), {"--dual-out", Path(dual)});
    std::error_code ec;
    std::filesystem::remove(Path(dual), ec);  // never compare a file left by an earlier run
    std::cout << "  " << name << ": " << Join(command) << "\n";
    return RunChild(command, Path(name + ".stderr"), a_.timeout);
  }

  std::optional<std::string> Failed(const std::string& name, const RunResult& r) const {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", a_.timeout);
    const std::string why = r.status == -1
                                ? "timed out after " + std::string(limit) + " s and was killed"
                                : "exited with status " + std::to_string(r.status);
    const std::string tail = Tail(r.err_path, 12);
    return "the " + name + " run " + why +
           (tail.empty() ? " (no stderr)" : "; its stderr ends with:\n" + tail);
  }

  std::optional<std::string> Compare(const std::string& test, const RunResult& base,
                                     const std::string& base_dual, const std::string& base_name,
                                     const RunResult& other, const std::string& other_dual,
                                     const std::string& other_name) {
    if (other.status != 0) return Failed(test, other);
    const Outcome a = OutcomeOf(base, Path(base_dual), Prefixes());
    const Outcome b = OutcomeOf(other, Path(other_dual), Prefixes());
    if (a.lines.empty() && a.states.empty())
      return "the " + base_name + " run printed no line to compare and ran no strads loop";
    auto diff = FirstDifference(a, base_name, b, other_name);
    if (!diff) {
      summary_[test] = std::to_string(a.lines.size()) + " output lines and " +
                       std::to_string(a.states.size()) + " loop states equal";
    }
    return diff;
  }

  std::vector<std::string> Prefixes() const {
    return a_.compare.empty() ? std::vector<std::string>{"epoch ", "checksum:"} : a_.compare;
  }

  void Report(const std::string& test, const std::optional<std::string>& failure) {
    if (failure)
      std::cout << test << ": FAIL: " << *failure << "\n";
    else
      std::cout << test << ": PASS (" << summary_[test] << ")\n";
  }

  const Args& a_;
  std::string dir_;
  std::map<std::string, std::string> summary_;
};

}  // namespace

void AddDualtestCommand(CLI::App& strads_app, int* exit_code) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = strads_app.add_subcommand(
      "dualtest",
      "Forward and backward dual tests of a strads program: its serial and parallel test-mode "
      "runs must agree bit for bit");
  cmd->add_option("-n,--nodes", args->nodes, "nodes of the parallel runs")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("-t,--threads", args->threads, "threads per node of the parallel runs")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_flag("--mpi", args->mpi, "run the parallel runs under mpiexec -n NODES");
  cmd->add_option("--mpiexec", args->mpiexec, "the MPI launcher")->capture_default_str();
  cmd->add_option("--timeout", args->timeout, "seconds each run may take before it is killed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--work", args->work,
                  "keep the runs' files here (default: a temporary directory, removed on PASS)")
      ->type_name("DIR");
  cmd->add_option("--compare", args->compare,
                  "compare the stdout lines starting with PREFIX (default: 'epoch ', 'checksum:')")
      ->type_name("PREFIX");
  cmd->add_option("command", args->command, "the program and its arguments, after --")
      ->required()
      ->expected(-1);
  cmd->callback([args, exit_code] { *exit_code = DualTest(*args).Run(); });
}

}  // namespace strads
