// `strads record`: see record_command.cc.
#pragma once

namespace CLI {
class App;
}

namespace strads {

// Registers `strads record [-o DIR] -- COMMAND...`; the command's exit status lands in
// *exit_code when it has run.
void AddRecordCommand(CLI::App& strads_app, int* exit_code);

}  // namespace strads
