// `strads run --restarts N --checkpoint DIR (--checkpoint-every N | --checkpoint-seconds S)
// [--checkpoint-keep K] -- COMMAND...`: runs COMMAND (a strads program, or mpiexec -n P prog
// args) with checkpoints on and, when it fails, runs it again from its last complete checkpoint,
// up to N times, as torchrun's --max-restarts does (docs/checkpoints.md). The flags reach every
// rank through the environment (STRADS_CHECKPOINT..., STRADS_RESTART). Each failure names the
// rank that died first (RankWatch) and the last complete checkpoint. The exit status is the
// last attempt's.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "child_process.h"
#include "commands.h"
#include "rank_watch.h"
#include "strads/exit_code.h"
#include "strads/rank_watch.h"

namespace strads::tool {

namespace {

namespace fs = std::filesystem;

// DIR/ckpt-N of the highest N whose MANIFEST exists (the program writes it last), or "".
std::string LastCompleteCheckpoint(const std::string& dir) {
  std::error_code ec;
  int64_t best = -1;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ckpt-", 0) != 0 || name.size() == 5 ||
        name.find_first_not_of("0123456789", 5) != std::string::npos || name.size() > 24)
      continue;
    const int64_t n = std::stoll(name.substr(5));
    if (n > best && fs::exists(entry.path() / "MANIFEST", ec)) best = n;
  }
  return best < 0 ? "" : (fs::path(dir) / ("ckpt-" + std::to_string(best))).string();
}

std::string DescribeStatus(int status) {
  if (status > 128 && status < 160) return "killed by signal " + std::to_string(status - 128);
  return "exit status " + std::to_string(status);
}

// ": rank K (pid N) died first" when the watch saw a rank of COMMAND die, else "".
std::string DescribeDeath(const std::optional<RankWatch::Death>& death) {
  if (!death) return "";
  return ": rank " + std::to_string(death->rank) + " (pid " + std::to_string(death->pid) +
         ") died first";
}

}  // namespace

void AddRunCommand(CLI::App& parent, CommandResult& result) {
  struct Args {
    int restarts = 0;
    std::string dir;
    std::optional<int64_t> every;
    std::optional<double> seconds;
    std::optional<int> keep;
    std::vector<std::string> command;
  };
  auto args = std::make_shared<Args>();
  CLI::App* run = parent.add_subcommand(
      "run",
      "Run COMMAND with checkpoints; when it fails, run it again from its last complete "
      "checkpoint, up to --restarts times");
  run->add_option("--restarts", args->restarts, "relaunches after a failure")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  run->add_option("--checkpoint", args->dir, "checkpoint directory (STRADS_CHECKPOINT)")
      ->required()
      ->type_name("DIR");
  auto* every =
      run->add_option("--checkpoint-every", args->every, "checkpoint every N operator invocations")
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
          ->type_name("N");
  auto* seconds = run->add_option("--checkpoint-seconds", args->seconds,
                                  "checkpoint S seconds after the last one")
                      ->check(CLI::Range(0.001, 1e9))
                      ->type_name("S");
  every->excludes(seconds);
  run->add_option("--checkpoint-keep", args->keep, "complete checkpoints kept (default 2)")
      ->check(CLI::Range(1, 1000000));
  run->add_option("command", args->command, "the command to run, after --")
      ->required()
      ->expected(-1);
  run->callback([args, &result] {
    if (!args->every && !args->seconds)
      throw UsageError("strads run: one of --checkpoint-every N and --checkpoint-seconds S");
    ChildOptions child;
    child.who = "strads run";
    child.set_env = {{"STRADS_CHECKPOINT", fs::absolute(args->dir).string()}};
    if (args->every)
      child.set_env.emplace_back("STRADS_CHECKPOINT_EVERY", std::to_string(*args->every));
    if (args->seconds)
      child.set_env.emplace_back("STRADS_CHECKPOINT_SECONDS", std::to_string(*args->seconds));
    if (args->keep)
      child.set_env.emplace_back("STRADS_CHECKPOINT_KEEP", std::to_string(*args->keep));
    child.unset_env = {"STRADS_RESTART"};
    for (int attempt = 0;; ++attempt) {
      std::optional<RankWatch::Death> death;
      int status = 0;
      {
        RankWatch watch;  // a new set per attempt: its ranks are new processes
        std::erase_if(child.set_env, [](const auto& kv) { return kv.first == rank_watch::kEnv; });
        if (!watch.env_value().empty())
          child.set_env.emplace_back(rank_watch::kEnv, watch.env_value());
        status = RunChildProcess(args->command, child).status;
        if (status != 0) death = watch.DiedFirst();
      }
      result.exit_status = status;
      if (status == 0) {
        if (attempt > 0) std::cerr << "strads run: finished after " << attempt << " restart(s)\n";
        return;
      }
      const std::string last = LastCompleteCheckpoint(args->dir);
      std::cerr << "strads run: attempt " << attempt + 1 << " failed (" << DescribeStatus(status)
                << ")" << DescribeDeath(death)
                << "; last complete checkpoint: " << (last.empty() ? "none" : last) << "\n";
      // Bad input and replay divergence fail again the same way: a restart cannot help.
      if (status == ToInt(ExitCode::kBadInput) || status == ToInt(ExitCode::kDivergence) ||
          status == kCannotRunStatus || attempt >= args->restarts)
        return;
      std::cerr << "strads run: restart " << attempt + 1 << " of " << args->restarts << " from "
                << (last.empty() ? "the beginning" : last)
                << (death ? " (rank " + std::to_string(death->rank) + " died)" : "") << "\n";
      child.unset_env.clear();
      std::erase_if(child.set_env, [](const auto& kv) { return kv.first == "STRADS_RESTART"; });
      if (last.empty())
        child.unset_env = {"STRADS_RESTART"};
      else
        child.set_env.emplace_back("STRADS_RESTART", fs::absolute(last).string());
    }
  });
}

}  // namespace strads::tool
