// `strads dualtest`: discrepancy-free dual testing of a strads program (thesis section 5.5).
#pragma once

namespace CLI {
class App;
}

namespace strads {

// Registers `strads dualtest [--nodes P] [--threads T] [--mpi] [--timeout SEC] [--work DIR]
// [--compare PREFIX]... -- PROGRAM ARGS...`. When it has run, *exit_code is 0 (both tests
// passed), 1 (a test failed) or 2 (bad usage: the program is missing or rejects its flags).
void AddDualtestCommand(CLI::App& strads_app, int* exit_code);

}  // namespace strads
