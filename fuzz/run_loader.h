// Runs a loader the way a strads program runs it: `driver` on `nodes` in-process logical nodes
// (`prog --nodes P`), so that strads::ReadFromFile splits the file between nodes, parses each
// node's share and agrees on the first error as it does in sgdmf and mlr. A bad file makes
// strads::Run print its "path:line: what" error and return exit 2; that is fine, a crash is not.
#pragma once

#include <string>
#include <vector>

#include "strads/runtime.h"

namespace strads::fuzz {

inline void RunLoader(int nodes, const Driver& driver) {
  std::vector<std::string> args = {"fuzz_loader", "--nodes", std::to_string(nodes), "--timeout",
                                   "60"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Run(static_cast<int>(args.size()), argv.data(), driver);
}

}  // namespace strads::fuzz
