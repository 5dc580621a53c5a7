// Commands that may start with an MPI launcher: `strads record -- mpiexec -n 4 prog args`.
#pragma once

#include <string>
#include <vector>

namespace strads::tool {

// Is `arg` an MPI launcher (mpiexec, mpirun, mpiexec.hydra)?
bool IsMpiLauncher(const std::string& arg);

// The program of COMMAND: its first word, or for a launcher the first word after the
// launcher's flags (mpiexec -n 4 prog -> prog).
std::string ProgramOfCommand(const std::vector<std::string>& command);

}  // namespace strads::tool
