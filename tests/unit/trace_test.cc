// The trace format library (trace/): round trips, truncation at every byte, bit flips,
// versions, manifest verification.
#include <doctest/doctest.h>
#include <lz4frame.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "codec.h"  // EventColumns
#include "scratch_dir.h"
#include "strads/trace/manifest.h"
#include "strads/trace/reader.h"
#include "strads/trace/trace_generated.h"
#include "strads/trace/writer.h"

namespace fs = std::filesystem;
using strads::Event;
using strads::EventKind;
using strads::LockGrantEvent;
using strads::TraceError;
using strads::TraceReader;
using strads::TraceWriter;

namespace {

// A fresh, empty directory, removed at the end of the test.
// Each test's own directory (ctest runs the trace tests at once).
struct TempDir : strads::testing::ScratchDir {
  TempDir() : ScratchDir("strads-trace-test") {}
};

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const uint8_t* data, size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
}

strads::ManifestInfo TestManifest(uint32_t nodes) {
  strads::ManifestInfo m;
  m.program = "/usr/bin/example";
  m.build_id = "size=1;mtime_ns=2";
  m.arguments = {"--input", "data.txt", "--threads=2"};
  m.node_count = nodes;
  m.threads_per_node = 2;
  m.inputs = {{"data.txt", 0x1234567890abcdefULL, 99}};
  m.start_time_ns = 1763800000123456789ULL;
  return m;
}

// An event given by its stored columns (FORMAT.md, "event encoding"), for what the typed
// factories cannot make: unused columns set, an e out of range.
Event Raw(EventKind kind, uint32_t thread, const std::array<uint64_t, 4>& abcd, uint64_t e = 0) {
  return strads::EventColumns::Make(kind, thread, abcd, e);
}

// Events of every kind, with a lock-grant stream shaped like a real run.
std::vector<Event> MixedEvents(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Event> events;
  uint64_t task = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t thread = static_cast<uint32_t>(rng() % 3);
    switch (rng() % 12) {
      case 0:
        events.push_back(
            Event::Delivery({.thread = thread, .source = rng() % 4, .seq = i, .tag = rng() % 5}));
        break;
      case 1:
        events.push_back(Event::Choice({.thread = thread, .point = 1 + rng() % 2, .value = rng()}));
        break;
      case 2:
        events.push_back(Event::OperatorBegin({.thread = 0,
                                               .site = rng() % 3,
                                               .invocation = i / 8,
                                               .time_ns = (5000 + i * 997) * 1000}));
        break;
      case 3:
        events.push_back(Event::OperatorEnd({.thread = 0,
                                             .site = rng() % 3,
                                             .invocation = i / 8,
                                             .time_ns = (5000 + i * 997) * 1000}));
        break;
      case 6:
        events.push_back(Event::Wait({.thread = thread,
                                      .kind = 1 + rng() % 3,
                                      .begin_ns = (5000 + i * 997) * 1000,
                                      .duration_ns = (20 + rng() % 100) * 1000,
                                      .object = rng() % 50}));
        break;
      case 4:
        events.push_back(Event::ThreadDigest({.thread = thread, .acquires = i, .digest = rng()}));
        break;
      case 5:
        events.push_back(Event::Input({.thread = 3,
                                       .site = rng() % 3,
                                       .offset = rng() % 100000,
                                       .bytes = rng() % 5000,
                                       .fnv1a64 = rng()}));
        break;
      case 7:
        events.push_back(Event::Outcome(
            {.thread = 3, .site = rng() % 3, .invocation = i / 8, .digest = rng() & 0xffffffffu}));
        break;
      default: {
        const uint64_t lock = rng() % 50;
        task += 1 + rng() % 3;
        // Lock ids in several spaces (bits 40..63), one of them past the codec's 16 slots.
        const uint64_t space = lock % 4 == 3 ? (uint64_t{1} << 23) + lock : lock % 3;
        events.push_back(Event::LockGrant({.thread = thread,
                                           .lock_id = space << 40 | lock,
                                           .task = task,
                                           .acquire = i + 1,
                                           .from_thread = (thread + 1) % 3,
                                           .from_count = 1 + rng() % (i + 1)}));
      }
    }
  }
  return events;
}

// A small complete trace with one node: sites, every kind, two frames, the first of them with
// two blocks (a Flush inside a frame).
std::vector<Event> WriteSmallTrace(const std::string& dir) {
  strads::ManifestWriter manifest(dir, TestManifest(1));
  manifest.WriteStart();
  const std::vector<Event> events = MixedEvents(60, 7);
  auto writer = TraceWriter::Create(dir, 0, /*frame_content_bytes=*/600);
  writer->DefineSite(0, "AsyncFor", "a.cc", 10);
  writer->Append(std::span(events).subspan(0, 20));
  writer->Flush();
  writer->DefineSite(1, "SyncFor", "b.cc", 20);
  writer->DefineSite(2, "Reduce", "c.cc", 30);
  writer->Append(std::span(events).subspan(20, 25));
  writer->Flush();
  writer->Append(std::span(events).subspan(45));
  writer->Close();
  manifest.WriteCleanClose();
  return events;
}

bool IsPrefix(const std::vector<Event>& prefix, const std::vector<Event>& all) {
  return prefix.size() <= all.size() && std::equal(prefix.begin(), prefix.end(), all.begin());
}

std::string ErrorOf(const std::string& dir) {
  try {
    TraceReader::Open(dir);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

// Writes `events` as node 0's whole log in `dir` and returns the decompressed content of its
// first frame (whole, for the few events of a test).
std::vector<uint8_t> WriteAndDecompress(const std::string& dir, const std::vector<Event>& events) {
  {
    auto writer = TraceWriter::Create(dir, 0);
    writer->Append(events);
    writer->Close();
  }
  const std::vector<uint8_t> file = ReadAll(dir + "/node-0.log");
  LZ4F_dctx* dctx = nullptr;
  REQUIRE_FALSE(LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)));
  std::vector<uint8_t> content(1 << 20);
  size_t out = content.size(), in = file.size();
  const size_t rc = LZ4F_decompress(dctx, content.data(), &out, file.data(), &in, nullptr);
  LZ4F_freeDecompressionContext(dctx);
  REQUIRE(rc == 0);
  content.resize(out);
  return content;
}

}  // namespace

TEST_CASE("trace: every event kind and site round-trips through writer and reader") {
  TempDir dir;
  strads::ManifestWriter manifest(dir.path, TestManifest(2));
  manifest.WriteStart();
  std::vector<std::vector<Event>> written(2);
  written[0] = MixedEvents(50000, 1);  // several chunks (16384 events each)
  // Extremes: wrap-around deltas, many threads (predictor slots are shared above 255), columns
  // that the kind leaves unused set (other writers may).
  written[0].push_back(Raw(EventKind::kChoice, 300, {UINT64_MAX, 0, UINT64_MAX, UINT64_MAX}));
  written[0].push_back(Raw(EventKind::kChoice, 4000000000u, {0, UINT64_MAX, 1, 0}));
  written[0].push_back(Raw(EventKind::kLockGrant, 7, {UINT64_MAX, 3, 0, 0}));
  written[0].push_back(Event::LockGrant({.thread = 7,
                                         .lock_id = UINT64_MAX,
                                         .task = 4,
                                         .acquire = 5,
                                         .from_thread = UINT32_MAX,
                                         .from_count = 99}));
  written[1] = MixedEvents(10, 2);
  for (int node = 0; node < 2; ++node) {
    auto writer = TraceWriter::Create(dir.path, node);
    writer->DefineSite(0, "AsyncFor", "examples/lda.cc", 42);
    writer->Append(std::span(written[node]).subspan(0, 5));
    writer->Flush();
    writer->DefineSite(7, "SyncFor", "examples/mf.cc", 7);
    writer->Append(std::span(written[node]).subspan(5));
    CHECK(writer->events_written() == written[node].size());
    writer->Close();
    writer->Close();  // idempotent
  }
  {
    const TraceReader r = TraceReader::Open(dir.path);
    CHECK_FALSE(r.complete());  // the manifest is not clean-closed yet
  }
  manifest.WriteCleanClose();
  const TraceReader r = TraceReader::Open(dir.path);
  CHECK(r.complete());
  CHECK(r.manifest() == [] {
    auto m = TestManifest(2);
    m.clean_close = true;
    return m;
  }());
  REQUIRE(r.nodes() == 2);
  for (int node = 0; node < 2; ++node) {
    CHECK(r.complete(node));
    CHECK(r.events(node) == written[node]);
    CHECK(r.bytes_on_disk(node) ==
          fs::file_size(dir.path + "/node-" + std::to_string(node) + ".log"));
    REQUIRE(r.sites(node).size() == 2);
    CHECK(r.sites(node).at(0) == strads::TraceSite{0, "AsyncFor", "examples/lda.cc", 42});
    CHECK(r.sites(node).at(7) == strads::TraceSite{7, "SyncFor", "examples/mf.cc", 7});
  }
  CHECK(r.node(0).chunks >= 4);
  // Chunk times: one per chunk with events, at its first event, written in order.
  const auto& times = r.node(0).chunk_times;
  REQUIRE(times.size() >= 4);
  CHECK(times[0].first_event == 0);
  CHECK(times[1].first_event == 5);  // the Flush after 5 events ended the first chunk
  for (size_t i = 1; i < times.size(); ++i) {
    CHECK(times[i].first_event > times[i - 1].first_event);
    CHECK(times[i].time_ns >= times[i - 1].time_ns);
  }
  CHECK(times[0].time_ns > 0);
}

TEST_CASE("trace: Flush puts every appended event in the file") {
  TempDir dir;
  const std::vector<Event> events = MixedEvents(1000, 3);
  auto writer = TraceWriter::Create(dir.path, 0);
  writer->Append(events);
  writer->Flush();
  // Without Close (as after a SIGKILL): every event is there, the node is incomplete.
  const strads::NodeTrace node = TraceReader::ReadNodeLog(dir.path + "/node-0.log", 0);
  CHECK(node.events == events);
  CHECK_FALSE(node.complete);
  CHECK(node.incomplete_reason.find("final chunk") != std::string::npos);
}

// On its own a truncated log is what a killed writer leaves: a prefix, incomplete. Under a
// manifest that says the run closed cleanly it was cut after the run: corrupt.
TEST_CASE("trace: a node log truncated at every byte reads as a prefix, incomplete") {
  TempDir dir;
  const std::vector<Event> events = WriteSmallTrace(dir.path);
  const std::string log = dir.path + "/node-0.log";
  const std::vector<uint8_t> bytes = ReadAll(log);
  REQUIRE(bytes.size() > 100);
  REQUIRE(TraceReader::ReadManifest(dir.path + "/manifest").clean_close);
  size_t longest = 0;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    WriteAll(log, bytes.data(), cut);
    try {
      const strads::NodeTrace n = TraceReader::ReadNodeLog(log, 0);
      CHECK(IsPrefix(n.events, events));
      CHECK_FALSE(n.complete);
      if (n.events.size() == events.size()) ++longest;
    } catch (const TraceError& e) {
      FAIL("truncation at " << cut << " gave an error: " << e.what());
    }
    try {
      (void)TraceReader::Open(dir.path);
      FAIL("a cut log under a clean close read without an error, cut at " << cut);
    } catch (const TraceError& e) {
      CHECK(std::string(e.what()).find("corrupt: the manifest says the run closed cleanly") !=
            std::string::npos);
    }
  }
  // The file ends right before the final chunk's frame: every event, but incomplete.
  CHECK(longest >= 1);
  WriteAll(log, bytes.data(), bytes.size());
  const TraceReader r = TraceReader::Open(dir.path);
  CHECK(r.complete());
  CHECK(r.events(0) == events);
  CHECK(r.node(0).chunks == 3);
  CHECK(r.node(0).frames == 2);
}

TEST_CASE("trace: random bit flips give a TraceError or an incomplete prefix, never other events") {
  TempDir dir;
  const std::vector<Event> events = WriteSmallTrace(dir.path);
  const std::string log = dir.path + "/node-0.log";
  const std::vector<uint8_t> bytes = ReadAll(log);
  int errors = 0, prefixes = 0, same = 0;
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> flipped = bytes;
    const int flips = 1 + static_cast<int>(seed % 3);
    for (int i = 0; i < flips; ++i) {
      flipped[rng() % flipped.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    if (flipped == bytes) continue;
    WriteAll(log, flipped.data(), flipped.size());
    try {
      const TraceReader r = TraceReader::Open(dir.path);
      if (r.complete(0)) {
        // A flip in compressed data that decodes to the same bytes (say, a match offset that
        // points at an identical run): the content checksum passes, the events are the same.
        CHECK(r.events(0) == events);
        ++same;
      } else {
        // A flip that makes the log look truncated: a prefix, reported incomplete.
        CHECK(IsPrefix(r.events(0), events));
        ++prefixes;
      }
    } catch (const TraceError& e) {
      const std::string what = e.what();
      CHECK(what.find("node-0.log: offset ") != std::string::npos);
      ++errors;
    }
  }
  MESSAGE("bit flips: " << errors << " errors, " << prefixes << " incomplete prefixes, " << same
                        << " decoded to the same events");
  CHECK(errors > 2500);
}

TEST_CASE("trace: an unknown format version is rejected by name") {
  TempDir dir;
  WriteSmallTrace(dir.path);
  const uint32_t unknown = strads::kTraceFormatVersion + 1;
  const std::string refusal = "got " + std::to_string(unknown) + ", this reader supports " +
                              std::to_string(strads::kTraceFormatVersion);
  SUBCASE("in the manifest") {
    auto m = TestManifest(1);
    m.format_version = unknown;
    strads::ManifestWriter::Write(dir.path, m);
    const std::string what = ErrorOf(dir.path);
    CHECK(what.find("manifest") != std::string::npos);
    CHECK(what.find(refusal) != std::string::npos);
  }
  SUBCASE("in a chunk") {
    flatbuffers::FlatBufferBuilder b;
    b.FinishSizePrefixed(strads::fb::CreateChunk(b, unknown, 0, 0), "STRD");
    std::vector<uint8_t> frame(LZ4F_compressFrameBound(b.GetSize(), nullptr) + 64);
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    const size_t n =
        LZ4F_compressFrame(frame.data(), frame.size(), b.GetBufferPointer(), b.GetSize(), &prefs);
    REQUIRE_FALSE(LZ4F_isError(n));
    WriteAll(dir.path + "/node-0.log", frame.data(), n);
    const std::string what = ErrorOf(dir.path);
    CHECK(what.find("node-0.log") != std::string::npos);
    CHECK(what.find(refusal) != std::string::npos);
  }
}

TEST_CASE("trace: node logs that are not traces are rejected with file, offset and cause") {
  TempDir dir;
  WriteSmallTrace(dir.path);
  const std::string log = dir.path + "/node-0.log";
  std::vector<uint8_t> bytes = ReadAll(log);
  SUBCASE("bad magic") {
    bytes[0] = 'X';
    WriteAll(log, bytes.data(), bytes.size());
    const std::string what = ErrorOf(dir.path);
    CHECK(what.find("node-0.log: offset 0: bad magic") != std::string::npos);
  }
  SUBCASE("garbage after the last frame") {
    bytes.push_back(0x55);
    WriteAll(log, bytes.data(), bytes.size());
    CHECK(ErrorOf(dir.path).find("offset " + std::to_string(bytes.size() - 1) + ": bad magic") !=
          std::string::npos);
  }
  SUBCASE("missing node log of a clean-closed trace") {
    fs::remove(log);
    CHECK(ErrorOf(dir.path).find("node-0.log: offset 0: cannot open") != std::string::npos);
  }
}

TEST_CASE("trace: the manifest is verified") {
  TempDir dir;
  WriteSmallTrace(dir.path);
  const std::string path = dir.path + "/manifest";
  const std::vector<uint8_t> bytes = ReadAll(path);
  SUBCASE("every truncation is an error") {
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      WriteAll(path, bytes.data(), cut);
      CHECK(ErrorOf(dir.path).find("manifest: offset") != std::string::npos);
    }
  }
  SUBCASE("random bytes never crash") {
    std::mt19937_64 rng(5);
    int errors = 0;
    for (int i = 0; i < 2000; ++i) {
      std::vector<uint8_t> garbage = bytes;
      for (int k = 0; k < 4; ++k) garbage[rng() % garbage.size()] = static_cast<uint8_t>(rng());
      WriteAll(path, garbage.data(), garbage.size());
      errors += !ErrorOf(dir.path).empty();
    }
    CHECK(errors == 2000);
  }
  SUBCASE("wrong identifier") {
    std::vector<uint8_t> wrong = bytes;
    wrong[8] = 'X';
    WriteAll(path, wrong.data(), wrong.size());
    CHECK(ErrorOf(dir.path).find("bad magic") != std::string::npos);
  }
  SUBCASE("bad offsets fail the verifier") {
    std::vector<uint8_t> wrong = bytes;
    wrong[4] = 0xf0;  // root offset past the end
    WriteAll(path, wrong.data(), wrong.size());
    CHECK(ErrorOf(dir.path).find("verifier failed") != std::string::npos);
  }
  SUBCASE("missing manifest or directory") {
    fs::remove(path);
    CHECK(ErrorOf(dir.path).find("manifest: offset 0: cannot open") != std::string::npos);
    CHECK(ErrorOf(dir.path + "/nope").find("cannot open trace directory") != std::string::npos);
  }
  SUBCASE("an unclean manifest makes the trace incomplete") {
    auto m = TestManifest(1);
    m.clean_close = false;
    strads::ManifestWriter::Write(dir.path, m);
    const TraceReader r = TraceReader::Open(dir.path);
    CHECK(r.complete(0));
    CHECK_FALSE(r.complete());
  }
}

TEST_CASE("trace: ManifestWriter helpers") {
  TempDir dir;
  const std::string file = dir.path + "/input.txt";
  WriteAll(file, reinterpret_cast<const uint8_t*>("a"), 1);
  const strads::InputChecksum sum = strads::ManifestWriter::ChecksumFile(file);
  CHECK(sum.size == 1);
  CHECK(sum.fnv1a64 == 0xaf63dc4c8601ec8cULL);  // FNV-1a 64 of "a"
  CHECK(strads::ManifestWriter::BuildIdOfSelf().find("size=") == 0);
  CHECK_FALSE(strads::ManifestWriter::ProgramOfSelf().empty());
  CHECK_THROWS_AS(strads::ManifestWriter::ChecksumFile(dir.path + "/none"), TraceError);
  CHECK_THROWS_AS(TraceWriter::Create(dir.path + "/none", 0), TraceError);
}

TEST_CASE("trace: the writer refuses an e field it cannot encode") {
  TempDir dir;
  auto writer = TraceWriter::Create(dir.path, 0);
  const Event too_wide = Raw(EventKind::kLockGrant, 1, {5, 6, 7, 8}, uint64_t{1} << 32);
  CHECK_THROWS_AS(writer->Append(std::span(&too_wide, 1)), TraceError);
  const Event not_a_grant = Raw(EventKind::kChoice, 0, {1, 1, 0, 0}, 1);
  CHECK_THROWS_AS(writer->Append(std::span(&not_a_grant, 1)), TraceError);
}

// Append writes a batch's columns through cursors and sets their sizes once a run of events is
// encoded: an event it refuses in the middle of a batch must leave the events before it whole
// (they are written, the refused one is not), and a batch longer than a chunk, whose columns
// grow past their first allocation, must read back as appended.
TEST_CASE("trace: a refused event leaves the batch's earlier events whole; batches span chunks") {
  TempDir dir;
  auto writer = TraceWriter::Create(dir.path, 0);
  std::vector<Event> events = MixedEvents(3 * TraceWriter::kMaxEventsPerChunk + 17, 2);
  writer->Append(events);
  std::vector<Event> bad_batch = MixedEvents(100, 2);
  bad_batch[60] = Raw(EventKind::kChoice, 0, {1, 1, 0, 0}, 1);  // e set on a choice
  CHECK_THROWS_AS(writer->Append(bad_batch), TraceError);
  events.insert(events.end(), bad_batch.begin(), bad_batch.begin() + 60);
  CHECK(writer->events_written() == events.size());
  writer->Close();
  const strads::NodeTrace node = TraceReader::ReadNodeLog(dir.path + "/node-0.log", 0);
  CHECK(node.complete);
  CHECK(node.events == events);
}

TEST_CASE("trace: the writer refuses an outcome digest over 32 bits") {
  TempDir dir;
  auto writer = TraceWriter::Create(dir.path, 0);
  const Event wide =
      Event::Outcome({.thread = 2, .site = 1, .invocation = 0, .digest = 1ULL << 32});
  CHECK_THROWS_AS(writer->Append(std::span(&wide, 1)), TraceError);
}

TEST_CASE("trace: times are stored in microseconds, each predicted from the thread's last") {
  TempDir dir;
  // An operator begin, a wait inside it, its end and outcome, the next begin (FORMAT.md,
  // "columns": times, outcome).
  const std::vector<Event> events = {
      Event::OperatorBegin({.thread = 2, .site = 1, .invocation = 0, .time_ns = 1000999}),
      Event::Wait({.thread = 2, .kind = 2, .begin_ns = 1030500, .duration_ns = 25999, .object = 1}),
      Event::OperatorEnd({.thread = 2, .site = 1, .invocation = 0, .time_ns = 1100000}),
      Event::Outcome({.thread = 2, .site = 1, .invocation = 0, .digest = 0x89abcdef}),
      Event::OperatorBegin({.thread = 2, .site = 1, .invocation = 1, .time_ns = 1100040}),
  };
  const std::vector<uint8_t> content = WriteAndDecompress(dir.path, events);
  const auto* chunk = flatbuffers::GetSizePrefixedRoot<strads::fb::Chunk>(content.data());
  const std::vector<uint8_t> c(chunk->c()->begin(), chunk->c()->end());
  // 1000 us -> zigzag 2000 = D0 0F; the wait's 25 us; 1100 - (1030 + 25) = 45 -> 90 = 5A;
  // the digest's 4 bytes; the next begin 1100 - 1100 = 0.
  CHECK(c == std::vector<uint8_t>{0xD0, 0x0F, 0x19, 0x5A, 0xEF, 0xCD, 0xAB, 0x89, 0x00});
  const std::vector<uint8_t> b(chunk->b()->begin(), chunk->b()->end());
  CHECK(b == std::vector<uint8_t>{0x00, 0x3C, 0x00, 0x00, 0x02});  // the wait's 1030 - 1000 = 30
  const strads::NodeTrace node = TraceReader::ReadNodeLog(dir.path + "/node-0.log", 0);
  const std::vector<Event>& read = node.events;
  REQUIRE(read.size() == events.size());
  CHECK(read[0].operator_event().time_ns == 1000000);  // truncated to the microsecond
  CHECK(read[1].wait().begin_ns == 1030000);
  CHECK(read[1].wait().duration_ns == 25000);
  CHECK(read[2].operator_event().time_ns == 1100000);
  CHECK(read[3].outcome().digest == 0x89abcdef);
  CHECK(read[4].operator_event().time_ns == 1100000);
}

TEST_CASE("trace: a node log of another node or another run is refused, naming it") {
  TempDir dir;
  strads::ManifestInfo info = TestManifest(2);
  info.run_id = 0x1111;
  info.clean_close = true;
  strads::ManifestWriter::Write(dir.path, info);
  const auto write = [&](int node, uint64_t run_id) {
    auto writer = TraceWriter::Create(dir.path, node, TraceWriter::kMaxFrameContentBytes, run_id);
    writer->Append(MixedEvents(50, static_cast<uint64_t>(node)));
    writer->Close();
  };
  write(0, 0x1111);
  SUBCASE("both of the run: read") {
    write(1, 0x1111);
    CHECK(ErrorOf(dir.path).empty());
    CHECK(TraceReader::Open(dir.path).manifest().run_id == 0x1111);
  }
  SUBCASE("swapped") {
    write(1, 0x1111);
    fs::rename(dir.path + "/node-0.log", dir.path + "/tmp");
    fs::rename(dir.path + "/node-1.log", dir.path + "/node-0.log");
    fs::rename(dir.path + "/tmp", dir.path + "/node-1.log");
    const std::string what = ErrorOf(dir.path);
    CHECK(what.find("node-0.log: offset 0: chunk 0") != std::string::npos);
    CHECK(what.find("this is node 1's log, read as node 0's") != std::string::npos);
  }
  SUBCASE("from another recording") {
    write(1, 0x2222);
    const std::string what = ErrorOf(dir.path);
    CHECK(what.find("node-1.log: offset 0: recorded by another run (run id 0000000000002222) "
                    "than the manifest's (0000000000001111)") != std::string::npos);
  }
}

TEST_CASE("trace: the FORMAT.md example encodes to the bytes the document shows") {
  TempDir dir;
  const uint64_t space1 = uint64_t{1} << 40;
  const LockGrantEvent grants[] = {
      {.thread = 1, .lock_id = 17, .task = 5000, .acquire = 1, .from_thread = 0, .from_count = 3},
      {.thread = 1,
       .lock_id = space1 + 4,
       .task = 5001,
       .acquire = 4,
       .from_thread = 0,
       .from_count = 9},
      {.thread = 0, .lock_id = 17, .task = 101, .acquire = 12, .from_thread = 1, .from_count = 2},
  };
  std::vector<Event> events;
  for (const LockGrantEvent& g : grants) events.push_back(Event::LockGrant(g));
  // One frame holding one size-prefixed chunk: decompress it and look at the columns.
  const std::vector<uint8_t> content = WriteAndDecompress(dir.path, events);
  const auto* chunk = flatbuffers::GetSizePrefixedRoot<strads::fb::Chunk>(content.data());
  const auto bytes = [](const flatbuffers::Vector<uint8_t>* v) {
    return std::vector<uint8_t>(v->begin(), v->end());
  };
  CHECK(chunk->event_count() == 3);
  CHECK(bytes(chunk->kinds()) == std::vector<uint8_t>{0x01, 0x01, 0x01});
  CHECK(bytes(chunk->threads()) ==
        std::vector<uint8_t>{0x01, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01});
  CHECK(bytes(chunk->a()) == std::vector<uint8_t>{0x22, 0x08, 0x22});
  CHECK(bytes(chunk->b()) == std::vector<uint8_t>{0x90, 0x4E, 0x02, 0xCA, 0x01});
  CHECK(bytes(chunk->c()) == std::vector<uint8_t>{0x06, 0x0C, 0x04});
  CHECK(bytes(chunk->d()) == std::vector<uint8_t>{0x02, 0x06, 0x18});
}

TEST_CASE("trace: a flipped byte in a chunk of an unfinished frame is a checksum mismatch") {
  // After a crash, the last frame has no end and no LZ4 content checksum: only the chunk
  // checksum stands between a flipped bit and a silently different event.
  TempDir dir;
  const std::vector<Event> events = MixedEvents(200, 11);
  const std::vector<uint8_t> content = WriteAndDecompress(dir.path, events);
  // The first chunk holds the events; flip the low bit of its column b's first byte (a varint
  // byte stays a varint byte: the chunk still decodes, to other events).
  const auto* chunk = flatbuffers::GetSizePrefixedRoot<strads::fb::Chunk>(content.data());
  REQUIRE(chunk->event_count() == events.size());
  const size_t at = static_cast<size_t>(chunk->b()->data() - content.data());
  const auto reframe = [&](bool flip) {  // the content as one frame that never ended
    std::vector<uint8_t> body = content;
    if (flip) body[at] ^= 0x01;
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    LZ4F_cctx* cctx = nullptr;
    REQUIRE_FALSE(LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)));
    std::vector<uint8_t> frame(LZ4F_compressBound(body.size(), &prefs) + LZ4F_HEADER_SIZE_MAX);
    size_t n = LZ4F_compressBegin(cctx, frame.data(), frame.size(), &prefs);
    n += LZ4F_compressUpdate(cctx, frame.data() + n, frame.size() - n, body.data(), body.size(),
                             nullptr);
    n += LZ4F_flush(cctx, frame.data() + n, frame.size() - n, nullptr);
    LZ4F_freeCompressionContext(cctx);
    WriteAll(dir.path + "/node-0.log", frame.data(), n);
  };
  reframe(false);  // intact: read, incomplete (no frame end), every event
  const strads::NodeTrace intact = TraceReader::ReadNodeLog(dir.path + "/node-0.log", 0);
  CHECK_FALSE(intact.complete);
  CHECK(intact.events == events);
  reframe(true);
  CHECK_THROWS_WITH_AS(TraceReader::ReadNodeLog(dir.path + "/node-0.log", 0),
                       doctest::Contains("chunk checksum mismatch"), TraceError);
}

// The FlatBuffers verifier aligns a vector's length (to 4), not its elements: a manifest whose
// offset was moved (manifest_fuzzer found one) can hold a [ulong] whose elements are 4-aligned
// only. The reader copies them as bytes. Here the segment list is relinked to a copy placed so,
// and must read back as written; a uint64_t load of it is a misaligned load, which the
// sanitizer build (scripts/sanitize.sh asan, UBSan fatal) fails on.
TEST_CASE("trace: a manifest's lists of 64-bit numbers read right when only 4-aligned") {
  TempDir dir;
  strads::ManifestWriter writer(dir.path, TestManifest(1));
  writer.WriteStart();
  writer.WriteSegments("/checkpoints", {0, 5, 9}, {5, 9});
  const std::string path = dir.path + "/manifest";
  std::vector<uint8_t> bytes = ReadAll(path);
  REQUIRE(bytes.size() > 8);
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(
      strads::fb::GetSizePrefixedManifest(bytes.data()));
  const flatbuffers::voffset_t slot =
      table->GetOptionalFieldOffset(strads::fb::Manifest::VT_SEGMENTS);
  REQUIRE(slot != 0);
  const size_t field =
      static_cast<size_t>(reinterpret_cast<const uint8_t*>(table) + slot - bytes.data());
  while (bytes.size() % 8 != 0) bytes.push_back(0);
  const size_t at = bytes.size();  // the copy's length 8-aligned, so its elements are not
  const uint32_t count = 3;
  bytes.resize(at + 4 + 3 * 8);
  std::memcpy(bytes.data() + at, &count, 4);
  const uint64_t segments[3] = {0, 5, 9};
  std::memcpy(bytes.data() + at + 4, segments, sizeof segments);
  const auto relative = static_cast<uint32_t>(at - field);
  std::memcpy(bytes.data() + field, &relative, 4);
  const auto prefix = static_cast<uint32_t>(bytes.size() - 4);
  std::memcpy(bytes.data(), &prefix, 4);
  WriteAll(path, bytes.data(), bytes.size());
  const strads::ManifestInfo read = TraceReader::ReadManifest(path);
  CHECK(read.segments == std::vector<uint64_t>{0, 5, 9});
  CHECK(read.checkpoints == std::vector<uint64_t>{5, 9});
}
