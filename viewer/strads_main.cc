// The `strads` tool. Subcommands are registered by Add*Commands functions (viewer_commands.h).
#include <CLI/CLI.hpp>

#include "strads/dualtest_command.h"
#include "strads/record_command.h"
#include "strads/replay_command.h"
#include "strads/viewer_commands.h"

int main(int argc, char** argv) {
  CLI::App app{"strads: record, replay, inspect and dual-test strads runs", "strads"};
  app.require_subcommand(1);
  int command_exit = 0;  // a subcommand that runs a program reports its status here
  strads::AddRecordCommand(app, &command_exit);
  strads::AddReplayCommand(app, &command_exit);
  strads::AddTraceCommands(app);
  strads::AddDualtestCommand(app, &command_exit);
  const int code = strads::RunStradsApp(app, argc, argv);
  return code != 0 ? code : command_exit;
}
