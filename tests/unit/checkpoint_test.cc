// Checkpoints and restart (core/src/checkpoint.h, docs/checkpoints.md) on in-process nodes: the
// DDS kinds' SaveOwned/RestoreOwned round trip, and a driver restarted from a checkpoint ends
// with the DDS, maps and reduction results of an uninterrupted run.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "scratch_dir.h"
#include "stderr_capture.h"
#include "strads/dmap.h"
#include "strads/dmultimap.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace {

using strads::Runtime;
using strads::testing::RunNodes;

std::string FreshDir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("strads_checkpoint_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

// What a run of Epochs() leaves, per node.
struct Outcome {
  std::vector<double> sums;  // the Sum of every epoch, as the driver saw it
  uint64_t checksum = 0;
  std::vector<std::pair<int64_t, double>> map;  // m, gathered
  std::vector<std::pair<int64_t, int64_t>> multimap;
};

// Four epochs of an AsyncFor that changes v, each followed by a Sum the driver keeps in a dmap.
strads::Driver Epochs(std::vector<Outcome>& out) {
  return [&out](Runtime& rt) {
    auto& v = strads::MakeDVector<double>(
        rt, 1000, [](int64_t i) { return 0.5 * i; }, "v");
    auto& m = strads::MakeDMap<int64_t, double>(rt, {}, "sums");
    std::vector<std::pair<int64_t, int64_t>> mine;
    for (int64_t k = rt.node(); k < 20; k += rt.nodes()) mine.emplace_back(k % 7, k);
    auto& mm = strads::MakeDMultimap<int64_t, int64_t>(rt, mine, "multi");
    Outcome& o = out[rt.node()];
    for (int epoch = 1; epoch <= 4; ++epoch) {
      strads::AsyncFor(0, v.size() - 1, [&v, epoch](int64_t i) { v[i] = v[i] * 0.75 + epoch; });
      const double sum = strads::Sum(rt, v, [](double x) { return x; });
      m[epoch] = sum + static_cast<double>(rt.rng()() % 1000);
      o.sums.push_back(sum);
    }
    o.checksum = strads::Checksum(rt, {&v});
    o.map = m.Gather();
    o.multimap = mm.Gather();
  };
}

bool SameOutcome(const Outcome& a, const Outcome& b) {
  return a.sums == b.sums && a.checksum == b.checksum && a.map == b.map && a.multimap == b.multimap;
}

}  // namespace

TEST_CASE("dvector and maps: RestoreLocal/RestoreOwned read back what Save wrote") {
  std::vector<uint8_t> ok(2, 0);
  REQUIRE(RunNodes(2, 1, [&](Runtime& rt) {
            auto& v = strads::MakeDVector<int64_t>(rt, 101, [](int64_t i) { return i * i; });
            auto& m = strads::MakeDMap<int64_t, int64_t>(
                rt, {{rt.node() * 10 + 1, 5}, {rt.node() * 10 + 2, 6}}, "m");
            strads::ByteWriter dv, dm;
            v.SaveOwned(dv);
            m.SaveLocal(dm);
            const auto saved_v = dv.Take(), saved_m = dm.Take();
            const auto before = m.local();
            for (int64_t& x : v.local()) x = -1;
            m.ForEachLocal([](const int64_t&, int64_t& x) { x = -1; });
            strads::ByteReader rv(saved_v), rm(saved_m);
            v.RestoreOwned(rv);
            m.RestoreLocal(rm);
            bool same =
                rv.remaining() == 0 && rm.remaining() == 0 && m.local() == before && m.size() == 4;
            for (int64_t i = v.owned_begin(); i < v.owned_end(); ++i)
              same = same && v.data()[i] == i * i;
            ok[rt.node()] = same ? 1 : 0;
          }) == 0);
  CHECK(ok == std::vector<uint8_t>{1, 1});
}

TEST_CASE("a driver restarted from a checkpoint ends as the uninterrupted run") {
  const std::string dir = FreshDir("restart");
  for (int nodes : {1, 2}) {
    CAPTURE(nodes);
    std::vector<Outcome> full(nodes), checkpointed(nodes), restarted(nodes);
    REQUIRE(RunNodes(nodes, 2, Epochs(full)) == 0);
    REQUIRE(RunNodes(nodes, 2, Epochs(checkpointed),
                     {"--checkpoint", dir, "--checkpoint-every", "1", "--checkpoint-keep", "3"}) ==
            0);
    // Kept: the last 3 of the 4 checkpoints, each complete.
    CHECK(!std::filesystem::exists(dir + "/ckpt-1"));
    for (int c = 2; c <= 4; ++c)
      CHECK(std::filesystem::exists(dir + "/ckpt-" + std::to_string(c) + "/MANIFEST"));
    REQUIRE(RunNodes(nodes, 2, Epochs(restarted), {"--restart", dir + "/ckpt-2"}) == 0);
    for (int n = 0; n < nodes; ++n) {
      CHECK(SameOutcome(full[n], checkpointed[n]));
      CHECK(SameOutcome(full[n], restarted[n]));
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a restarted driver that returns before its checkpoint's operator is refused") {
  const std::string dir = FreshDir("early");
  auto loops = [](int calls) {
    return [calls](Runtime& rt) {
      auto& v = strads::MakeDVector<int64_t>(
          rt, 64, [](int64_t i) { return i; }, "v");
      for (int c = 0; c < calls; ++c)
        strads::AsyncFor(0, v.size() - 1, [&v](int64_t i) { v[i] += 1; });
    };
  };
  REQUIRE(RunNodes(2, 1, loops(4), {"--checkpoint", dir, "--checkpoint-every", "4"}) == 0);
  CHECK(RunNodes(2, 1, loops(4), {"--restart", dir}) == 0);
  CHECK(RunNodes(2, 1, loops(3), {"--restart", dir}) == 2);
  std::filesystem::remove_all(dir);
}

namespace {

// A driver that keeps its own state from element reads between the calls (Lasso's scheduler
// reads the picked coefficients): restarted, it reads the values of before the restore point.
// `mode`: 0 reads through a const reference (a read for sure); 1 reads a map's pairs, which
// before the restore point are the first run's (only driver code and creation operators, both
// run again, make or change maps); 2 only writes the DDS (through a non-const reference), which
// the restore overwrites. The driver's state, folded over the calls, per node.
strads::Driver DriverState(int mode, std::vector<int64_t>& out) {
  return [mode, &out](Runtime& rt) {
    auto& v = strads::MakeDVector<int64_t>(
        rt, 256, [](int64_t i) { return i; }, "v");
    const auto& read_v = v;
    auto& m = strads::MakeDMap<int64_t, int64_t>(rt, {}, "m");
    int64_t state = 0;
    for (int call = 1; call <= 4; ++call) {
      strads::AsyncFor(0, v.size() - 1, [&v, call](int64_t i) { v[i] = v[i] * 3 + call; });
      if (mode == 0) state = state * 31 + read_v[call];
      if (mode == 1) state = state * 31 + m.Get(call - 1).value_or(-1) + m.Gather().size();
      if (mode == 2) v[call] = call;
      m[call] = call;
    }
    out[rt.node()] = state * 1000003 + static_cast<int64_t>(strads::Checksum(rt, {&v}) % 1000);
  };
}

}  // namespace

TEST_CASE("a restart whose driver reads DDS elements before the restore point says so") {
  strads::testing::ScratchDir dir("strads-checkpoint-reads");
  for (int mode : {0, 1, 2}) {
    CAPTURE(mode);
    std::vector<int64_t> full(2), restarted(2);
    const std::string at = dir.path + "/" + std::to_string(mode);
    REQUIRE(RunNodes(2, 1, DriverState(mode, full),
                     {"--checkpoint", at, "--checkpoint-every", "3"}) == 0);
    std::string said;
    {
      strads::testing::StderrCapture capture(dir.path + "/stderr");
      REQUIRE(RunNodes(2, 1, DriverState(mode, restarted), {"--restart", at}) == 0);
      said = capture.text();
    }
    const bool told = said.find("before the restore point") != std::string::npos;
    if (mode != 0) {
      // Map reads and DDS writes: the restart ends as the first run, and says nothing.
      CHECK(restarted == full);
      CHECK_MESSAGE(!told, said);
      continue;
    }
    // The reads saw this run's values: the driver's state differs from the first run's (so the
    // note is not a false alarm), and the note names what was read and where the run stands.
    CHECK(restarted != full);
    CHECK_MESSAGE(told, said);
    CHECK(said.find("'v' element 1") != std::string::npos);
    CHECK(said.find("1 of the checkpoint's 3 operators skipped") != std::string::npos);
    // Once a run, on node 0 only.
    CHECK(said.find("before the restore point") == said.rfind("before the restore point"));
  }
}

TEST_CASE("--checkpoint-seconds: node 0's clock decides, every node writes the same checkpoint") {
  const std::string dir = FreshDir("seconds");
  // Each call waits past the period first, so that every operator end is due: what is written
  // does not depend on how fast the machine is.
  REQUIRE(RunNodes(2, 1,
                   [](Runtime& rt) {
                     auto& v = strads::MakeDVector<int64_t>(rt, 64, [](int64_t i) { return i; });
                     for (int c = 0; c < 3; ++c) {
                       std::this_thread::sleep_for(std::chrono::milliseconds(20));
                       strads::AsyncFor(0, v.size() - 1, [&v](int64_t i) { v[i] += 1; });
                     }
                   },
                   {"--checkpoint", dir, "--checkpoint-seconds", "0.01", "--checkpoint-keep",
                    "1"}) == 0);
  CHECK(std::filesystem::exists(dir + "/ckpt-3/MANIFEST"));
  CHECK(std::filesystem::exists(dir + "/ckpt-3/node-1.ckpt"));
  CHECK(!std::filesystem::exists(dir + "/ckpt-2"));
  std::filesystem::remove_all(dir);
}

namespace {

// Four AsyncFor calls that change w, over input data that no body writes (the driver writes one
// element of it after the second call when `write_data`): the checksum of both, per node.
strads::Driver DataAndWeights(bool write_data, std::vector<uint64_t>& out) {
  return [write_data, &out](Runtime& rt) {
    auto& data = strads::MakeDVector<int64_t>(
        rt, 4000, [](int64_t i) { return i * 7 % 1000; }, "data");
    const auto& input = data;  // read-only in the bodies
    auto& w = strads::MakeDVector<int64_t>(
        rt, 4000, [](int64_t) { return 0; }, "w");
    for (int call = 1; call <= 4; ++call) {
      strads::AsyncFor(0, w.size() - 1, [&w, &input, call](int64_t i) { w[i] += input[i] * call; });
      if (write_data && call == 2) data[5] = 12345;
    }
    out[rt.node()] = strads::Checksum(rt, {&data, &w});
  };
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE(
    "incremental checkpoints: an unchanged DDS is referred to, kept while referred to, and "
    "read through the reference") {
  namespace fs = std::filesystem;
  const std::string dir = FreshDir("incremental");
  std::vector<uint64_t> full(2), checkpointed(2), restarted(2);
  REQUIRE(RunNodes(2, 1, DataAndWeights(false, full)) == 0);
  REQUIRE(RunNodes(2, 1, DataAndWeights(false, checkpointed),
                   {"--checkpoint", dir, "--checkpoint-every", "1", "--checkpoint-keep", "2"}) ==
          0);
  CHECK(checkpointed == full);
  // data is written once, in ckpt-1; ckpt-2..4 refer to it. Kept: ckpt-3 and ckpt-4, and ckpt-1
  // as data only (no MANIFEST: no restart point); ckpt-2 is gone.
  CHECK(fs::exists(dir + "/ckpt-1/node-0.ckpt"));
  CHECK(!fs::exists(dir + "/ckpt-1/MANIFEST"));
  CHECK(!fs::exists(dir + "/ckpt-2"));
  CHECK(FileText(dir + "/ckpt-4/MANIFEST").find("\ndata 1\n") != std::string::npos);
  // Each node owns 2000 elements of 8 bytes of each DDS: ckpt-1 writes both, ckpt-4 only w
  // (and a reference of a few bytes).
  const auto first = fs::file_size(dir + "/ckpt-1/node-0.ckpt");
  const auto last = fs::file_size(dir + "/ckpt-4/node-0.ckpt");
  CHECK(first >= last + 2000 * 8 - 64);
  REQUIRE(RunNodes(2, 1, DataAndWeights(false, restarted), {"--restart", dir + "/ckpt-3"}) == 0);
  CHECK(restarted == full);

  // A referred-to part that was damaged is refused, naming the file that holds it.
  {
    std::fstream f(dir + "/ckpt-1/node-1.ckpt", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(first / 4));  // inside data, the first part
    f.put('\x5a');
  }
  CHECK(RunNodes(2, 1, DataAndWeights(false, restarted), {"--restart", dir}) == 2);

  // The driver writes data after the second call: ckpt-3 writes it again, and the restarts
  // from ckpt-3 and ckpt-4 give the uninterrupted run's checksum.
  std::vector<uint64_t> written(2), written_full(2);
  REQUIRE(RunNodes(2, 1, DataAndWeights(true, written_full)) == 0);
  CHECK(written_full != full);
  REQUIRE(RunNodes(2, 1, DataAndWeights(true, written),
                   {"--checkpoint", dir, "--checkpoint-every", "1", "--checkpoint-keep", "2"}) ==
          0);
  CHECK(!fs::exists(dir + "/ckpt-1"));
  CHECK(FileText(dir + "/ckpt-4/MANIFEST").find("\ndata 3\n") != std::string::npos);
  for (const char* from : {"/ckpt-3", "/ckpt-4"}) {
    CAPTURE(from);
    REQUIRE(RunNodes(2, 1, DataAndWeights(true, written), {"--restart", dir + from}) == 0);
    CHECK(written == written_full);
  }
  fs::remove_all(dir);
}
