// A port that keeps state in a global: it counts its evaluations in `evaluations` and evaluates
// (a collective Sum) only on the first one. Under mpiexec every rank has its own global and
// evaluates; under --nodes P the logical nodes are threads of one process sharing it, so only
// the first node to get there evaluates and waits for the others past --timeout. Used by
// nodes_share_globals.
#include <atomic>
#include <cstdio>

#include "strads/strads.h"

std::atomic<int> evaluations{0};  // the port's mistake: a global the driver writes

int main(int argc, char** argv) {
  return strads::Run(argc, argv, [](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<double>(
        rt, 100, [](int64_t i) { return static_cast<double>(i); }, "x");
    if (evaluations.fetch_add(1) == 0) {
      const double sum = strads::Sum(rt, x, [](double v) { return v; });
      if (rt.leader()) std::printf("sum %.1f\n", sum);
    }
  });
}
