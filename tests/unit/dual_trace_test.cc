// Dual testing in the core: the .dual file format (round trip, defects named by file and line),
// SyncFor BSP emulated serially for P nodes x T threads, and test mode's SSP and Hybrid as BSP.
#include "dual_trace.h"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "strads/errors.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("strads_dual_test_" + name)).string();
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

// The message of the CollectiveUsageError that loading `text` throws ("" if none).
std::string LoadError(const std::string& text) {
  const std::string path = WriteFile("bad.dual", text);
  std::string error;
  try {
    strads::DualTrace trace(path, "", true);
  } catch (const strads::CollectiveUsageError& e) {
    error = e.what();
  }
  std::filesystem::remove(path);
  return error;
}

}  // namespace

TEST_CASE("DualTrace: what a run writes, a follower reads back") {
  const std::string path = TempPath("roundtrip.dual");
  auto order = std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>{12, 10, 11});
  auto other = std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>{10, 11, 12});
  {
    strads::DualTrace out("", path, true);
    out.Start({4, 2});
    out.RecordAsyncFor("a.cc:3", 10, 12, order, 0x1234);
    out.RecordSyncFor("b.cc:9", 0xabcdef);
    out.RecordAsyncFor("a.cc:3", 10, 12, order, 0x1235);  // same order: a "same" record
    out.RecordAsyncFor("a.cc:3", 10, 12, other, 0x1236);
    out.Finish();
  }
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("asyncfor 1 10 12 same a.cc:3\n") != std::string::npos);
  CHECK(text.find("state syncfor 0 0000000000abcdef b.cc:9\n") != std::string::npos);

  strads::DualTrace follow(path, "", true);
  REQUIRE(follow.followed_workers().has_value());
  CHECK(*follow.followed_workers() == strads::SyncTopology{4, 2});
  CHECK(*follow.NextOrder("a.cc:3", 10, 12) == *order);
  CHECK(*follow.NextOrder("a.cc:3", 10, 12) == *order);
  CHECK(*follow.NextOrder("a.cc:3", 10, 12) == *other);
  // A fourth invocation, or another range, is not in the file: the runs differ.
  CHECK_THROWS_WITH_AS(follow.NextOrder("a.cc:3", 10, 12),
                       doctest::Contains("no order for invocation 3 of the AsyncFor at a.cc:3"),
                       strads::CollectiveUsageError);
  strads::DualTrace again(path, "", true);
  CHECK_THROWS_WITH_AS(again.NextOrder("a.cc:3", 0, 2),
                       doctest::Contains(":3: invocation 0 of the AsyncFor at a.cc:3 ran over "
                                         "10..12, this run over 0..2"),
                       strads::CollectiveUsageError);
  std::filesystem::remove(path);
}

TEST_CASE("DualTrace: every defect of a file is reported with its file and line") {
  const std::string ok_head = "strads-dual 1\nworkers 2 1\n";
  CHECK(LoadError(ok_head + "asyncfor 0 0 2 order x.cc:1\n2\n0\n1\nend\n") == "");
  CHECK(LoadError("strads-dual 2\nend\n").find("bad.dual:1: not a strads dual-test file") !=
        std::string::npos);
  CHECK(LoadError(ok_head).find("bad.dual:2: truncated: no 'end' line") != std::string::npos);
  CHECK(LoadError(ok_head + "asyncfor 0 0 2 order x.cc:1\n2\n0\n")
            .find("bad.dual:5: truncated: the order of line 3 lists 2 of 3 indices") !=
        std::string::npos);
  CHECK(LoadError(ok_head + "asyncfor 0 0 2 order x.cc:1\n2\nzero\n1\nend\n")
            .find("bad.dual:5: loop index 'zero' is not an integer") != std::string::npos);
  CHECK(LoadError(ok_head + "asyncfor 0 0 2 order x.cc:1\n2\n2\n1\nend\n")
            .find("bad.dual:5: loop index 2 repeated (first on line 4)") != std::string::npos);
  CHECK(LoadError(ok_head + "asyncfor 0 0 2 order x.cc:1\n2\n7\n1\nend\n")
            .find("bad.dual:5: loop index 7 is outside 0..2") != std::string::npos);
  CHECK(LoadError(ok_head + "asyncfor 1 0 2 order x.cc:1\n2\n0\n1\nend\n")
            .find("bad.dual:3: invocation 1 of x.cc:1, expected 0") != std::string::npos);
  CHECK(LoadError(ok_head + "asyncfor 0 0 2 same x.cc:1\nend\n")
            .find("bad.dual:3: 'same' without a previous invocation") != std::string::npos);
  CHECK(LoadError(ok_head + "asyncfor 0 0 999999999999 order x.cc:1\n0\nend\n")
            .find("bad.dual:3: truncated or corrupt") != std::string::npos);
  CHECK(LoadError("strads-dual 1\nworkers 0 1\nend\n").find("bad.dual:2: expected 'workers P T'") !=
        std::string::npos);
  CHECK(
      LoadError(ok_head + "state syncfor 0 12 x.cc:1\nend\n").find("bad.dual:3: expected 'state") !=
      std::string::npos);
  CHECK(LoadError(ok_head + "bogus\nend\n").find("bad.dual:3: unknown record 'bogus'") !=
        std::string::npos);
  CHECK(LoadError(ok_head + "end\nworkers 1 1\n").find("bad.dual:4: text after the 'end' line") !=
        std::string::npos);
  CHECK(std::string(LoadError("")).find("bad.dual:1: not a strads dual-test file") !=
        std::string::npos);
}

namespace {

// A SyncFor program whose result depends on the order and grouping of every addition: two
// parameters (one with the default average, one with a custom aggregation), uneven mini-batches.
std::vector<double> SyncProgram(int nodes, int threads, std::vector<std::string> extra, bool re,
                                strads::SyncOption option = strads::BSP()) {
  std::mutex mu;
  std::vector<double> result;
  const int rc = strads::testing::RunNodes(
      nodes, threads,
      [&](strads::Runtime& rt) {
        auto& data =
            strads::MakeDVector<double>(rt, 37, [](int64_t i) { return std::sin(i * 1.7) + 0.1; });
        auto& w = strads::MakeDVector<double>(rt, 5, [](int64_t i) { return 0.1 * i; });
        auto& v = strads::MakeDVector<std::array<float, 2>>(rt, 3, [](int64_t) {
          return std::array<float, 2>{1, 1};
        });
        strads::Replicate(rt, w);
        strads::RegisterAggregationFunc(
            v, [](const std::array<float, 2>& before, std::span<const std::array<float, 2>> d) {
              std::array<float, 2> out = before;
              for (size_t k = 0; k < d.size(); ++k)
                for (int c = 0; c < 2; ++c) out[c] = out[c] * 0.9f + d[k][c] * float(k + 1);
              return out;
            });
        for (int epoch = 0; epoch < 3; ++epoch)
          strads::SyncFor(
              data, 3,
              [&w, &v](std::span<const double> batch) {
                for (double x : batch) {
                  const int64_t j = static_cast<int64_t>(std::fabs(x) * 5) % 5;
                  w[j] += x * w[(j + 1) % 5] + 0.01;
                  v[j % 3][0] += static_cast<float>(x);
                }
              },
              option, re);
        const auto& wc = static_cast<const strads::dvector<double>&>(w);
        const auto& vc = static_cast<const strads::dvector<std::array<float, 2>>&>(v);
        std::lock_guard<std::mutex> lock(mu);
        if (rt.leader()) {
          result.assign(wc.data(), wc.data() + 5);
          for (int i = 0; i < 3; ++i) result.push_back(vc.data()[i][0]);
        }
      },
      extra);
  REQUIRE(rc == 0);
  return result;
}

}  // namespace

TEST_CASE("SyncFor BSP emulated on one node of one thread equals P nodes x T threads") {
  for (bool re : {false, true}) {
    CAPTURE(re);
    for (auto [p, t] : {std::pair{2, 1}, {2, 2}, {4, 1}, {3, 2}}) {
      CAPTURE(p);
      CAPTURE(t);
      const std::vector<double> parallel = SyncProgram(p, t, {"--test-mode"}, re);
      const std::string workers = std::to_string(p) + "x" + std::to_string(t);
      const std::vector<double> serial = SyncProgram(1, 1, {"--sync-workers", workers}, re);
      CHECK(parallel == serial);
      // It can fail: the emulation of another shape computes something else.
      CHECK(SyncProgram(1, 1, {"--sync-workers", "1x1"}, re) != parallel);
    }
  }
}

TEST_CASE("Test mode runs SyncFor SSP and Hybrid as BSP") {
  const std::vector<double> bsp = SyncProgram(2, 2, {}, false);
  CHECK(SyncProgram(2, 2, {"--test-mode"}, false, strads::SSP(2)) == bsp);
  CHECK(SyncProgram(2, 2, {"--test-mode"}, false, strads::Hybrid()) == bsp);
}

TEST_CASE("--sync-workers is refused on more than one node or thread") {
  const int rc =
      strads::testing::RunNodes(2, 1, [](strads::Runtime&) {}, {"--sync-workers", "4x1"});
  CHECK(rc == 2);
}
