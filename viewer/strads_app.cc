#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>

#include "strads/trace/error.h"
#include "strads/viewer_commands.h"

namespace strads {

void AddTraceInfoCommand(CLI::App& trace);  // trace_info_command.cc
void AddTraceDumpCommand(CLI::App& trace);  // trace_dump_command.cc

void AddTraceCommands(CLI::App& strads_app) {
  CLI::App* trace = strads_app.add_subcommand("trace", "Inspect a recorded trace directory");
  trace->require_subcommand(1);
  AddTraceInfoCommand(*trace);
  AddTraceDumpCommand(*trace);
}

int RunStradsApp(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    std::cout.flush();
    return std::cout ? 0 : 1;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const TraceError& e) {
    std::cout.flush();
    std::cerr << "strads: error: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "strads: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "strads: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace strads
