// strads::Run's report when several in-process nodes fail: the most informative one wins.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include "stderr_capture.h"
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

namespace {

// strads::Run's report of a run of `driver` on `nodes` x `threads`, which must fail (exit 1).
std::string FailureReport(int nodes, int threads, const strads::Driver& driver) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("strads_run_report_test_" + std::to_string(getpid())))
                               .string();
  std::string report;
  {
    strads::testing::StderrCapture capture(path);
    const int code = strads::testing::RunNodes(nodes, threads, driver);
    report = capture.text();
    CHECK(code == strads::ToInt(strads::ExitCode::kFailed));
  }
  std::filesystem::remove(path);
  return report;
}

// "run_report_test.cc:LINE" + the rest of the note, as the report has it.
std::string Site(int line, const std::string& body) {
  return "run_report_test.cc:" + std::to_string(line) + ", " + body + ")";
}

}  // namespace

// An exception from a loop body: the report names the loop's call and the body. Before, it was
// the exception's message alone ("node 0: bad record"), which left the program's author to find
// the loop that ran the body. On 2 threads the exception reaches the driver through the thread
// pool; the first call of an AsyncFor throws in reconnaissance, a later one in a planned round.
TEST_CASE("Run: an exception thrown by a loop body is reported with the loop's site and index") {
  for (const int calls : {1, 2}) {
    CAPTURE(calls);
    int line = 0;
    const std::string report = FailureReport(1, 2, [&](strads::Runtime& rt) {
      auto& x = strads::MakeDVector<int>(
          rt, 100, [](int64_t) { return 0; }, "x");
      for (int call = 1; call <= calls; ++call) {
        line = __LINE__ + 1;
        strads::AsyncFor(0, 99, [&x, call, calls](int64_t i) {
          if (call == calls && i == 70) throw std::runtime_error("bad record");
          x[i] += 1;
        });
      }
    });
    CAPTURE(report);
    CHECK(report.find(": bad record (in AsyncFor at ") != std::string::npos);
    CHECK(report.find(Site(line, "the body of index 70")) != std::string::npos);
  }
  int line = 0;
  std::string report = FailureReport(1, 2, [&](strads::Runtime& rt) {
    auto& data = strads::MakeDVector<float>(rt, 10, [](int64_t i) { return float(i); });
    auto& w = strads::MakeDVector<double>(
        rt, 1, [](int64_t) { return 0.0; }, "w");
    strads::Replicate(rt, w);
    line = __LINE__ + 1;
    strads::SyncFor(
        data, 2,
        [&w](std::span<const float> batch) {
          for (float v : batch) {
            if (v == 7) throw std::out_of_range("value 7");
            w[0] += v;
          }
        },
        strads::BSP());
  });
  CAPTURE(report);
  CHECK(report.find("value 7 (in SyncFor at ") != std::string::npos);
  CHECK(report.find(Site(line, "the mini-batch from index 6")) != std::string::npos);
  report = FailureReport(1, 2, [&](strads::Runtime&) {
    line = __LINE__ + 1;
    strads::ParallelFor(8, [](int64_t piece) {
      if (piece == 5) throw std::runtime_error("piece failed");
    });
  });
  CHECK(report.find("piece failed (in ParallelFor at ") != std::string::npos);
  CHECK(report.find(Site(line, "piece 5")) != std::string::npos);
  // Not derived from std::exception: the same note after the type.
  std::atomic<int> line_of_nodes{0};  // both nodes write it
  report = FailureReport(2, 1, [&](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<int>(
        rt, 100, [](int64_t) { return 0; }, "x");
    line_of_nodes = __LINE__ + 1;
    strads::AsyncFor(0, 99, [&x](int64_t i) {
      if (i == 30) throw 7;
      x[i] = 1;
    });
  });
  CHECK(report.find("an exception of type int") != std::string::npos);
  CHECK(report.find(Site(line_of_nodes, "the body of index 30")) != std::string::npos);
}

// An error that is not a body's keeps its message alone: the driver's own, thrown after it
// caught a body's exception (the note goes with the exception that the body threw).
TEST_CASE("Run: an exception from the driver names no loop") {
  const std::string report = FailureReport(1, 2, [](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<int>(
        rt, 10, [](int64_t) { return 0; }, "x");
    try {
      strads::AsyncFor(0, 9, [&x](int64_t i) {
        if (i == 3) throw std::runtime_error("body failed");
        x[i] = 1;
      });
    } catch (const std::runtime_error&) {
    }
    throw std::runtime_error("driver failed");
  });
  CHECK(report.find(": driver failed\n") != std::string::npos);
}
