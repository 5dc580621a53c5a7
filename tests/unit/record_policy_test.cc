// The recorder's writer queue against a disk that does not keep up: a node log that is a pipe
// nobody reads, so that the writer thread blocks in write() as on a stalled filesystem.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "scratch_dir.h"
#include "stderr_capture.h"
#include "strads/seam/ordering.h"
#include "strads/seam/policy_registry.h"
#include "strads/trace/reader.h"

namespace {

uint64_t NextRandom(uint64_t& x) {
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return x;
}

}  // namespace

TEST_CASE("recording: a stalled disk holds the recording thread back; nothing is lost") {
  strads::testing::ScratchDir dir("strads-record-test");
  const std::string log = dir.path + "/node-0.log";
  REQUIRE(::mkfifo(log.c_str(), 0600) == 0);
  // A reader end that reads nothing yet: the writer's open succeeds, its writes fill the pipe.
  const int pipe_read = ::open(log.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(pipe_read >= 0);

  const std::string err = dir.path + "/stderr";
  strads::testing::StderrCapture capture(err);
  strads::PolicyNode node;
  node.barrier = [] {};
  std::unique_ptr<strads::OrderingPolicy> policy =
      strads::MakeRegisteredPolicy("record", node, dir.path);

  // Random values, so that the events do not compress and the writer's first frames fill the
  // pipe: 512 driver buffers of events. Unbounded, the queue took them all at once (200 MB).
  constexpr uint64_t kEvents = uint64_t{512} * 8192;
  std::atomic<uint64_t> made{0};
  std::thread producer([&] {
    uint64_t x = 88172645463325252ULL;
    for (uint64_t i = 0; i < kEvents; ++i) {
      policy->Choose(strads::ChoicePoint::kTaskDispatch, NextRandom(x));
      made.store(i + 1, std::memory_order_relaxed);
    }
  });
  // The producer must stop short of the end while nothing reads: wait until it has made no
  // progress for two seconds (or is done, which fails the check).
  uint64_t last = 0;
  for (int still = 0; still < 20 && made.load() < kEvents;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const uint64_t now = made.load();
    still = now == last ? still + 1 : 0;
    last = now;
  }
  CHECK_MESSAGE(made.load() < kEvents, "the handovers never waited for the stalled writer");
  // And says so once it has waited 5 s (at most 60 s here, for a loaded machine).
  const auto notice = [&] {
    std::ifstream in(err);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (int i = 0; i < 600 && notice().find("waited 5 s for its trace writer") == std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string said = capture.text();
  CHECK_MESSAGE(said.find("node 0 has waited 5 s for its trace writer to take more events "
                          "(trace directory " +
                          dir.path + "): a slow or stalled disk") != std::string::npos,
                said);

  // The disk comes back: everything made reaches the log, in order.
  std::string bytes;
  std::thread reader([&] {
    ::fcntl(pipe_read, F_SETFL, ::fcntl(pipe_read, F_GETFL) & ~O_NONBLOCK);
    char buf[1 << 16];
    for (ssize_t n; (n = ::read(pipe_read, buf, sizeof buf)) > 0;) bytes.append(buf, size_t(n));
  });
  producer.join();
  policy->Finish(true);
  policy.reset();
  reader.join();
  ::close(pipe_read);

  std::filesystem::remove(log);
  std::ofstream(log, std::ios::binary) << bytes;
  uint64_t choices = 0, x = 88172645463325252ULL;
  bool in_order = true;
  strads::TraceReader::ReadNodeLog(log, 0, [&](std::span<const strads::Event> events, uint64_t) {
    for (const strads::Event& e : events) {
      if (e.kind() != strads::EventKind::kChoice) continue;
      ++choices;
      in_order = in_order && e.choice().value == NextRandom(x);
    }
  });
  CHECK(choices == kEvents);
  CHECK(in_order);
}
