// Subcommands of the `strads` tool. Each Add*Commands function registers its subcommands on the
// top-level CLI11 app; RunStradsApp parses and runs them and maps errors to exit codes.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace strads {

// Registers `strads trace info DIR [--json]` and `strads trace dump DIR [--node K]`.
void AddTraceCommands(CLI::App& strads_app);

// The subcommands' work, callable on their own. Throw TraceError on bad input.
void PrintTraceInfo(const std::string& dir, bool json, std::ostream& out);
void PrintTraceDump(const std::string& dir, std::optional<int> node, std::ostream& out);

// Parses argv and runs the chosen subcommand. Returns the process exit code: 0 on success,
// 2 on bad input (usage errors, missing or corrupt traces) with a message on stderr, 1 on an
// internal error.
int RunStradsApp(CLI::App& app, int argc, char** argv);

}  // namespace strads
