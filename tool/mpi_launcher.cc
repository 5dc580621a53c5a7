#include "mpi_launcher.h"

#include <filesystem>

namespace strads::tool {

bool IsMpiLauncher(const std::string& arg) {
  const std::string base = std::filesystem::path(arg).filename();
  return base == "mpiexec" || base == "mpirun" || base == "mpiexec.hydra";
}

std::string ProgramOfCommand(const std::vector<std::string>& command) {
  if (command.empty()) return "";
  size_t i = 0;
  if (IsMpiLauncher(command[0])) {
    for (i = 1; i < command.size(); ++i) {
      const std::string& a = command[i];
      if (a == "-n" || a == "-np" || a == "-ppn" || a == "-hosts" || a == "-f")
        ++i;
      else if (a.empty() || a[0] != '-')
        break;
    }
    if (i >= command.size()) i = 0;
  }
  return std::filesystem::path(command[i]).filename();
}

}  // namespace strads::tool
