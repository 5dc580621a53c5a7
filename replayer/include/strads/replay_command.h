// `strads replay`: see replay_command.cc.
#pragma once

namespace CLI {
class App;
}

namespace strads {

// Registers `strads replay [--single-process] DIR -- COMMAND...`; the command's exit status
// lands in *exit_code when it has run.
void AddReplayCommand(CLI::App& strads_app, int* exit_code);

}  // namespace strads
