// strads::Run's report when several in-process nodes fail: the most informative one wins.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "strads/errors.h"
#include "strads/exit_code.h"
#include "strads/strads.h"
#include "test_nodes.h"

// Node 1 diverges; node 0's wait for it then expires (here: thrown once node 1 has thrown).
// Reporting the first failing node in index order printed node 0's timeout, exit 1.
TEST_CASE("Run: a divergence beats the timeout it caused on a lower node, exit 3") {
  std::atomic<bool> diverged{false};
  const int code = strads::testing::RunNodes(2, 1, [&](strads::Runtime& rt) {
    if (rt.node() == 1) {
      diverged.store(true);
      throw strads::DivergenceError("replay diverged on node 1 (test)");
    }
    while (!diverged.load()) std::this_thread::yield();
    throw strads::TimeoutError("node 0 waited 120 s for a message (tag 4) from node 1 (test)");
  });
  CHECK(code == strads::ToInt(strads::ExitCode::kDivergence));
}

// A driver or a body that throws what is no std::exception (a C string, an int): the node fails
// with exit 1 like any other failure. Before, the exception left the node's thread and
// std::terminate ended the process (SIGABRT, no node named).
TEST_CASE("Run: an exception not derived from std::exception fails the node, exit 1") {
  const int thrown_by_driver = strads::testing::RunNodes(2, 1, [](strads::Runtime& rt) {
    if (rt.node() == 1) throw 42;
  });
  CHECK(thrown_by_driver == strads::ToInt(strads::ExitCode::kFailed));
  const int thrown_by_body = strads::testing::RunNodes(1, 2, [](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<int>(
        rt, 100, [](int64_t) { return 0; }, "x");
    strads::AsyncFor(0, 99, [&x](int64_t i) {
      if (i == 70) throw "malformed line";
      x[i] = 1;
    });
  });
  CHECK(thrown_by_body == strads::ToInt(strads::ExitCode::kFailed));
}
