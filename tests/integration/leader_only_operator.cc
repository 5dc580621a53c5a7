// Ports that break control replication (every node calls the operators in the same order with
// the same arguments), each the way a serial program invites it:
//   --mistake leader-only: the model's checksum printed inside `if (rt.leader())`, as a serial
//     program prints it once: the leader waits in Checksum for nodes that have returned;
//   --mistake node-dependent: a Sum on node 0 where the others call Max, both all-gathers of the
//     same dvector at the same point, which would combine one's partials with the other's;
//   --mistake node-range: an AsyncFor over other bounds on node 0, which would plan one loop
//     with the other's accesses;
//   --mistake node-minibatch: a SyncFor with another mini-batch on node 0, which would run
//     other clocks than the serial program it claims to equal;
//   --mistake node-size: a dvector of another length on node 1, as when each node sizes it by
//     its own share of a file, which gives the nodes other owners for the same elements;
//   --mistake leader-local-other / leader-local-own: the leader alone writes its part through the
//     mutable local() (inside `if (rt.leader())`), then every node reads an element of node 1's
//     part (other) or of node 0's (own) from the driver: only the leader fetches the element's
//     block again, as a wait for each other until --timeout before the fetch had every node in
//     it send first (core/src/driver_access_hook.h).
// The stamp on collective messages (core/src/collectives.h) stops each at once, naming the two
// calls, instead of a wait until --timeout or a wrong result. Used by the *_operator_* tests of
// porting_tests.cmake.
#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "strads/strads.h"

int main(int argc, char** argv) {
  CLI::App app{"a port that calls operators on some nodes only"};
  std::string mistake = "leader-only";
  app.add_option("--mistake", mistake)
      ->check(CLI::IsMember({"leader-only", "node-dependent", "node-range", "node-minibatch",
                             "node-size", "leader-local-other", "leader-local-own"}));
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<double>(
        rt, 1000, [](int64_t i) { return static_cast<double>(i); }, "x");
    if (mistake == "node-dependent") {
      const double value = rt.node() == 0 ? strads::Sum(rt, x, [](double v) { return v; })
                                          : strads::Max(rt, x, [](double v) { return v; });
      std::printf("node %d: %.1f\n", rt.node(), value);
      return;
    }
    if (mistake == "node-size") {
      auto& y = strads::MakeDVector<double>(
          rt, rt.node() == 0 ? 1000 : 800, [](int64_t i) { return static_cast<double>(i); }, "y");
      std::printf("sum %.1f\n", strads::Sum(rt, y, [](double v) { return v; }));
      strads::AsyncFor(0, 99, [&](int64_t i) { y[i] = y[i] * 2; });
      std::printf("checksum: %016" PRIx64 "\n", strads::Checksum(rt, {&y}));
      return;
    }
    if (mistake == "leader-local-other" || mistake == "leader-local-own") {
      const auto& read = x;                // reads from the driver, through the hook
      double seen = read[0] + read[999];   // every node now holds both blocks
      if (rt.leader()) x.local()[0] += 1;  // the mistake: a mutable local() on one node
      seen += mistake == "leader-local-other" ? read[999] : read[0];
      std::printf("node %d: %.1f\n", rt.node(), seen);
      std::printf("checksum: %016" PRIx64 "\n", strads::Checksum(rt, {&x}));
      return;
    }
    if (mistake == "node-range") {
      const int64_t last = rt.node() == 0 ? 999 : 499;
      strads::AsyncFor(0, last, [&](int64_t i) { x[i] = x[i] * 2; });
      std::printf("checksum: %016" PRIx64 "\n", strads::Checksum(rt, {&x}));
      return;
    }
    if (mistake == "node-minibatch") {
      auto& w = strads::MakeDVector<double>(
          rt, 4, [](int64_t) { return 0.0; }, "w");
      strads::Replicate(rt, w);
      strads::SyncFor(
          x, rt.node() == 0 ? 10 : 20,
          [&](std::span<const double> batch) {
            for (double v : batch) w[0] += v;
          },
          strads::BSP());
      std::printf("checksum: %016" PRIx64 "\n", strads::Checksum(rt, {&w}));
      return;
    }
    const double sum = strads::Sum(rt, x, [](double v) { return v; });
    if (rt.leader()) {
      std::printf("sum %.1f\n", sum);
      std::printf("checksum: %016" PRIx64 "\n", strads::Checksum(rt, {&x}));  // the mistake
    }
  });
}
