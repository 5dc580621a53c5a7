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
// backward run's equals the parallel run's. An outcome is the program's stdout lines (every
// line, or with --compare only those that start with one of its prefixes; the report says how
// many it skipped) and the state after every loop invocation that the runtime writes into the
// .dual file. Every run is bounded by --timeout
// (the program's own bounded waits get the same limit; a run still going is killed).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.h"
#include "commands.h"
#include "dual_file.h"
#include "strads/exit_code.h"
#include "strads/trace/describe.h"

namespace strads::tool {

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

// A finished run of the program: the serial, forward, parallel or backward run.
struct RunResult {
  std::string name;  // "serial", ...
  ChildResult child;
  std::string dual_path;  // the .dual file it wrote
  std::string err_path;   // its stderr
};

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
  size_t skipped_lines = 0;  // stdout lines that no --compare prefix selected
  std::vector<DualFile::State> states;
};

// The stdout lines that start with one of `prefixes`; every line when there is none. Throws
// DualFileError when the run's .dual file is missing or not valid.
Outcome OutcomeOf(const RunResult& run, const std::vector<std::string>& prefixes) {
  Outcome o;
  std::istringstream out(run.child.out);
  for (std::string line; std::getline(out, line);) {
    const bool compared =
        prefixes.empty() || std::any_of(prefixes.begin(), prefixes.end(), [&](const auto& p) {
          return line.compare(0, p.size(), p) == 0;
        });
    compared ? o.lines.push_back(line) : void(++o.skipped_lines);
  }
  o.states = DualFile::Read(run.dual_path).states;
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
      const DualFile::State& s = i < base.states.size() ? base.states[i] : other.states[i];
      state_diff = "the " + (i < base.states.size() ? other_name : base_name) +
                   " run has no state for iteration " + std::to_string(s.invocation + 1) +
                   " of the " + (s.loop == "asyncfor" ? "AsyncFor" : "SyncFor") + " at " +
                   ShortSite(s.site) + " (it ran " +
                   std::to_string(std::min(base.states.size(), other.states.size())) +
                   " loop invocations)";
      break;
    }
    const DualFile::State& a = base.states[i];
    const DualFile::State& b = other.states[i];
    if (a.loop != b.loop || a.site != b.site || a.invocation != b.invocation) {
      state_diff = "the runs executed different loops: " + base_name + " " + a.loop + " " +
                   ShortSite(a.site) + " #" + std::to_string(a.invocation) + ", " + other_name +
                   " " + b.loop + " " + ShortSite(b.site) + " #" + std::to_string(b.invocation);
      break;
    }
    if (a.digest != b.digest) {
      state_diff = "first difference at iteration " + std::to_string(a.invocation + 1) + " (" +
                   (a.loop == "asyncfor" ? "AsyncFor" : "SyncFor") + " at " + ShortSite(a.site) +
                   ", invocation " + std::to_string(a.invocation) + "): " + base_name + " state " +
                   Hex16(a.digest) + " vs " + other_name + " state " + Hex16(b.digest);
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

  ExitCode Run() {
    if (a_.command.empty()) throw UsageError("dualtest: no program to test (after --)");
    if (!Runnable(a_.command[0]))
      throw UsageError("dualtest: cannot run '" + a_.command[0] +
                       "': no such executable (give a path or a program on the PATH)");
    const std::string program = std::filesystem::path(a_.command[0]).filename();
    bool own_dir = false;
    std::string dir = a_.work;
    if (dir.empty()) {
      dir = MakeTempDirectory("dualtest", "strads-dualtest");
      own_dir = true;
    } else {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) throw UsageError(dir + ": cannot create: " + ec.message());
    }
    dir_ = dir;
    std::cout << "strads dualtest: " << program << " on " << a_.nodes << " node(s) x " << a_.threads
              << " thread(s)" << (a_.mpi ? " (mpiexec)" : " (in-process nodes)") << "\n";
    const std::string topology = std::to_string(a_.nodes) + "x" + std::to_string(a_.threads);
    // Forward: serial baseline, parallel follower; backward: the other way round.
    ExitCode code = ExitCode::kOk;
    const RunResult serial = Step("serial", Serial({"--sync-workers", topology}));
    // A usage error before any loop ran is the program's flags or input; one after is a rule
    // of docs/porting.md the program breaks (test mode checks every body's accesses), which is
    // what a dual test is for: a failure, not an error of the test's set-up.
    if (serial.child.status == kCannotRunStatus ||
        (serial.child.status == ToInt(ExitCode::kBadInput) && !RanLoops(serial)))
      code = ExitCode::kBadInput;
    std::optional<std::string> forward, backward;
    if (code == ExitCode::kOk) {
      forward = Follow("forward", serial, &DualTest::Parallel, "parallel");
      backward = Follow("backward", Step("parallel", Parallel({})), &DualTest::Serial, "serial");
    } else {
      forward = backward = Failed(serial);
    }
    Report("forward", forward);
    Report("backward", backward);
    if (code == ExitCode::kOk && (forward || backward)) code = ExitCode::kFailed;
    std::cout << "verdict: "
              << (code == ExitCode::kOk       ? "PASS"
                  : code == ExitCode::kFailed ? "FAIL"
                                              : "ERROR (the program rejected its flags or input)")
              << "\n";
    if (code == ExitCode::kBadInput)
      std::cerr << "strads dualtest: the serial run of " << program
                << " failed with a usage error before its first loop: see above\n";
    if (own_dir && code == ExitCode::kOk) {
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

  // Runs `command` as the step `name`, writing NAME.dual.
  RunResult Step(const std::string& name, std::vector<std::string> command) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", a_.timeout);
    const std::string dual_path = Path(name + ".dual");
    command.insert(command.end(), {"--timeout", limit});
    command.insert(command.end(), {"--dual-out", dual_path});
    std::error_code ec;
    std::filesystem::remove(dual_path, ec);  // never compare a file left by an earlier run
    std::cout << "  " << name << ": " << Join(command) << "\n";
    ChildOptions child;
    child.who = "strads dualtest";
    child.own_process_group = true;
    child.timeout_seconds = a_.timeout;
    child.capture_stdout = true;
    child.stderr_path = Path(name + ".stderr");
    return {name, RunChildProcess(command, child), dual_path, child.stderr_path};
  }

  // Whether `r`'s .dual file holds the state of a loop run to its end: a run that stopped wrote
  // the records before its error, without the `end` line.
  static bool RanLoops(const RunResult& r) {
    try {
      return !DualFile::Read(r.dual_path, DualFile::Ending::kStopped).states.empty();
    } catch (const DualFileError&) {
      return false;  // none written, or unreadable: the run stopped before its first loop ended
    }
  }

  std::optional<std::string> Failed(const RunResult& r) const {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", a_.timeout);
    const std::string why = r.child.timed_out
                                ? "timed out after " + std::string(limit) + " s and was killed"
                                : "exited with status " + std::to_string(r.child.status);
    const std::string tail = Tail(r.err_path, 12);
    return "the " + r.name + " run " + why +
           (tail.empty() ? " (no stderr)" : "; its stderr ends with:\n" + tail);
  }

  // The forward or the backward test: if the baseline run succeeded, the follower (step `test`,
  // reported as `other_name`) runs as `follower` says with --dual-in the baseline's .dual file,
  // and its outcome must equal the baseline's. Returns the failure, if any.
  using Command = std::vector<std::string> (DualTest::*)(std::vector<std::string>) const;
  std::optional<std::string> Follow(const std::string& test, const RunResult& base,
                                    Command follower, const std::string& other_name) {
    if (base.child.status != 0) return Failed(base);
    const RunResult other = Step(test, (this->*follower)({"--dual-in", base.dual_path}));
    if (other.child.status != 0) return Failed(other);
    Outcome a, b;
    try {
      a = OutcomeOf(base, Prefixes());
      b = OutcomeOf(other, Prefixes());
    } catch (const DualFileError& e) {
      return std::string("a run's dual-test file is not valid: ") + e.what();
    }
    if (a.lines.empty() && a.states.empty())
      return "the " + base.name + " run printed no line to compare and ran no strads loop" +
             Skipped(a);
    auto diff = FirstDifference(a, base.name, b, other_name);
    if (!diff) {
      summary_[test] = std::to_string(a.lines.size()) +
                       (a_.compare.empty() ? " output lines (all of stdout)" : " output lines") +
                       " and " + std::to_string(a.states.size()) + " loop states equal" +
                       Skipped(a);
    }
    return diff ? std::optional(*diff + Skipped(a)) : std::nullopt;
  }

  std::vector<std::string> Prefixes() const { return a_.compare; }

  // Says which lines --compare left out, so that a prefix never hides a difference silently.
  std::string Skipped(const Outcome& o) const {
    if (o.skipped_lines == 0) return "";
    std::string prefixes;
    for (const auto& p : a_.compare) prefixes += (prefixes.empty() ? "'" : ", '") + p + "'";
    return "\n  NOTE: " + std::to_string(o.skipped_lines) +
           " stdout line(s) were not compared: they start with none of --compare " + prefixes +
           " (without --compare every line is compared)";
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

void AddDualtestCommand(CLI::App& parent, CommandResult& result) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = parent.add_subcommand(
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
  // One value per --compare, so that `--compare X -- prog` leaves the `--` to end the options.
  cmd->add_option("--compare", args->compare,
                  "compare only the stdout lines starting with PREFIX (repeatable; default: "
                  "every line)")
      ->type_name("PREFIX")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("command", args->command, "the program and its arguments, after --")
      ->required()
      ->expected(-1);
  cmd->callback([args, &result] { result.exit_status = ToInt(DualTest(*args).Run()); });
}

}  // namespace strads::tool
