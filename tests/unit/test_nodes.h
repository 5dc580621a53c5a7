// RunNodes: runs a driver on P in-process logical nodes with T threads each, as
// `prog --nodes P --threads T` would, and returns strads::Run's exit code.
#pragma once

#include <string>
#include <vector>

#include "strads/runtime.h"

namespace strads::testing {

inline int RunNodes(int nodes, int threads, const Driver& driver,
                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "unit_test", "--nodes", std::to_string(nodes), "--threads", std::to_string(threads),
      "--timeout", "30"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return Run(static_cast<int>(args.size()), argv.data(), driver);
}

}  // namespace strads::testing
