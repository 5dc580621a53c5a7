// The `strads` tool: registers the subcommands (commands.h), runs the chosen one and maps what
// it throws to an exit code.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "commands.h"
#include "strads/exit_code.h"
#include "strads/trace/error.h"

namespace strads::tool {
namespace {

// An error the user can fix: bad usage, a missing or corrupt trace.
int BadInput(const std::exception& e) {
  std::cout.flush();
  std::cerr << "strads: error: " << e.what() << "\n";
  return ToInt(ExitCode::kBadInput);
}

// `--from-checkpoint N` (replay, gdb) as `--from-checkpoint=N`: the flag's N is optional, and
// CLI11 cannot tell an optional number from the positional trace directory after it.
void JoinFromCheckpointNumber(std::vector<std::string>& args) {
  for (size_t i = 0; i + 1 < args.size() && args[i] != "--"; ++i)
    if (args[i] == "--from-checkpoint" && !args[i + 1].empty() &&
        args[i + 1].find_first_not_of("0123456789") == std::string::npos) {
      args[i] += "=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
}

// The first word that names no command of its level ("strads bogus", "strads trace bogus"), as
// an error that lists the commands, or "": CLI11 says only "A subcommand is required" there.
std::string UnknownCommand(CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* level = &app;
  for (const std::string& word : args) {
    const auto commands = level->get_subcommands([](CLI::App*) { return true; });
    if (commands.empty() || word.empty() || word[0] == '-') return "";
    const auto named = std::find_if(commands.begin(), commands.end(),
                                    [&](CLI::App* c) { return c->get_name() == word; });
    if (named == commands.end()) {
      std::string list;
      for (size_t i = 0; i < commands.size(); ++i)
        list += (i == 0 ? "" : i + 1 == commands.size() ? " or " : ", ") + commands[i]->get_name();
      const std::string where = level == &app ? "strads" : "strads " + level->get_name();
      return "unknown command '" + word + "' of " + where + ": use " + list + " (" + where +
             " --help)";
    }
    level = *named;
  }
  return "";
}

int Main(int argc, char** argv) {
  CLI::App app{"strads: record, replay, inspect and dual-test strads runs", "strads"};
  app.require_subcommand(1);
  CommandResult result;
  AddRecordCommand(app, result);
  AddReplayCommand(app, result);
  CLI::App* trace = app.add_subcommand("trace", "Inspect a recorded trace directory");
  trace->require_subcommand(1);
  AddTraceInfoCommand(*trace, result);
  AddTraceDumpCommand(*trace, result);
  AddTraceStatsCommand(*trace, result);
  AddTraceDiffCommand(*trace, result);
  AddTraceExportCommand(*trace, result);
  AddTraceViewCommand(*trace, result);
  AddDualtestCommand(app, result);
  AddGdbCommand(app, result);
  AddRunCommand(app, result);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (const std::string unknown = UnknownCommand(app, args); !unknown.empty()) {
    std::cerr << "strads: error: " << unknown << "\n";
    return ToInt(ExitCode::kBadInput);
  }
  try {
    JoinFromCheckpointNumber(args);
    std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
    app.parse(args);
    std::cout.flush();
    return std::cout ? result.exit_status : ToInt(ExitCode::kFailed);
  } catch (const CLI::ParseError& e) {  // --help too, which exits 0
    return app.exit(e) == 0 ? ToInt(ExitCode::kOk) : ToInt(ExitCode::kBadInput);
  } catch (const UsageError& e) {
    return BadInput(e);
  } catch (const TraceError& e) {
    return BadInput(e);
  } catch (const std::bad_alloc&) {
    std::cerr << "strads: error: out of memory\n";
    return ToInt(ExitCode::kFailed);
  } catch (const std::exception& e) {
    std::cerr << "strads: internal error: " << e.what() << "\n";
    return ToInt(ExitCode::kFailed);
  }
}

}  // namespace
}  // namespace strads::tool

int main(int argc, char** argv) { return strads::tool::Main(argc, argv); }
