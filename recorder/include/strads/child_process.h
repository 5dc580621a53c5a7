// Running the program under `strads record` / `strads replay`: COMMAND as a child process with
// some environment variables set or removed, its exit status returned.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace strads {

// Is `arg` an MPI launcher (mpiexec, mpirun, mpiexec.hydra)?
bool IsMpiLauncher(const std::string& arg);

// The program of COMMAND: its first word, or for a launcher the first word after the
// launcher's flags (mpiexec -n 4 prog -> prog).
std::string ProgramOfCommand(const std::vector<std::string>& command);

// Runs `command` (searched in PATH) with `set` added to and `unset` removed from the
// environment, and waits for it. Returns its exit status, or 128 + N if signal N killed it.
// While it waits, SIGINT and SIGQUIT are ignored (the terminal sends them to the child as well)
// and SIGTERM and SIGHUP are passed on to the child.
// `who` prefixes the message printed when the command cannot be started (status 127).
// Throws std::runtime_error when fork fails.
int RunChildProcess(const std::vector<std::string>& command,
                    const std::vector<std::pair<std::string, std::string>>& set,
                    const std::vector<std::string>& unset, const std::string& who);

}  // namespace strads
