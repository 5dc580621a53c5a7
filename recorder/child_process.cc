#include "strads/child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>

namespace strads {

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

int RunChildProcess(const std::vector<std::string>& command,
                    const std::vector<std::pair<std::string, std::string>>& set,
                    const std::vector<std::string>& unset, const std::string& who) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(who + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    for (const auto& name : unset) ::unsetenv(name.c_str());
    for (const auto& [name, value] : set) ::setenv(name.c_str(), value.c_str(), 1);
    ::execvp(argv[0], argv.data());
    std::cerr << who << ": cannot run '" << command[0] << "': " << std::strerror(errno) << "\n";
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace strads
