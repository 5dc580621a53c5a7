#include "commands.h"

#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include "strads/trace/segments.h"

namespace strads::tool {

std::string MakeTempDirectory(const std::string& who, const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + name + "-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr)
    throw UsageError(who + ": " + dir + ": cannot create: " + std::strerror(errno));
  return dir;
}

TraceReader OpenTrace(const std::string& dir) {
  TraceReader reader = TraceReader::Open(dir);
  NoteHeld(dir, reader.manifest());
  return reader;
}

void NoteHeld(const std::string& dir, const ManifestInfo& manifest) {
  if (const std::string note = HeldNote(dir, manifest); !note.empty())
    std::cerr << "strads trace: note: " << note << "\n";
}

void AddTraceReportCommand(CLI::App& parent, const std::string& name, const std::string& help,
                           TraceReport print) {
  struct Options {
    std::string dir;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = parent.add_subcommand(name, help);
  command->add_option("DIR", options->dir, "Trace directory")->required();
  command->add_flag("--json", options->json, "Print JSON");
  command->callback(
      [options, print = std::move(print)] { print(options->dir, options->json, std::cout); });
}

}  // namespace strads::tool
