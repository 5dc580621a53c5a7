// trace_bench: bytes per event and Append+Flush throughput of TraceWriter on synthetic
// lock-grant streams shaped like a real run (2 threads, increasing tasks with gaps, lock ids
// from a few thousand rows), reduced as the Record policy does (only grants that earlier logged
// ones do not order are events). Prints numbers; asserts nothing (design.md section 7).
//
//   trace_bench [EVENTS=10000000] [DIR=/tmp]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "strads/trace/reader.h"
#include "strads/trace/writer.h"

namespace {

using Clock = std::chrono::steady_clock;

enum class Shape { kRowLocks, kRandomLocks };

// Generates lock grants in batches. kRowLocks: each task is a nonzero of a sparse matrix with
// 4000 rows and 1..20 nonzeros per row, stored by row; the task locks its row, so a lock id
// repeats for consecutive tasks of a thread. kRandomLocks: each task locks a uniformly random
// one of 4000 rows (a column-lock pattern: the worst case for compression).
class Generator {
 public:
  explicit Generator(Shape shape) : shape_(shape), rng_(42) {
    task_[0] = 0;
    task_[1] = 1ull << 32;  // thread 1 starts in the second half of the range
    row_[0] = 0;
    row_[1] = kRows / 2;
  }
  // Fills `batch` with logged grants; returns how many grants (logged or implied) that took.
  uint64_t Fill(std::vector<strads::Event>& batch) {
    std::uniform_int_distribution<int> coin(0, 99);
    std::uniform_int_distribution<uint64_t> any_row(0, kRows - 1);
    uint64_t grants = 0;
    for (size_t filled = 0; filled < batch.size(); ++grants) {
      if (coin(rng_) < 30) thread_ ^= 1;  // runs of the same thread, then a switch
      const int t = thread_;
      const int r = coin(rng_);
      task_[t] += r < 80 ? 1 : (r < 95 ? 2 : 1 + r % 7);  // increasing with gaps
      uint64_t lock;
      if (shape_ == Shape::kRowLocks) {
        if (left_in_row_[t] == 0) {
          row_[t] = (row_[t] + 1) % kRows;
          left_in_row_[t] = 1 + coin(rng_) % 20;
        }
        --left_in_row_[t];
        lock = row_[t];
      } else {
        lock = any_row(rng_);
      }
      const uint64_t number = ++acquires_[t];
      const int previous = last_[lock];
      const uint64_t previous_number = last_number_[lock];
      last_[lock] = t;
      last_number_[lock] = number;
      if (previous == t || previous_number <= known_[t]) continue;  // implied
      known_[t] = previous_number;
      batch[filled++] = strads::Event::LockGrant({.thread = static_cast<uint32_t>(t),
                                                  .lock_id = lock,
                                                  .task = task_[t],
                                                  .acquire = number,
                                                  .from_thread = static_cast<uint32_t>(previous),
                                                  .from_count = previous_number});
    }
    return grants;
  }

 private:
  static constexpr uint64_t kRows = 4000;
  Shape shape_;
  std::mt19937_64 rng_;
  int thread_ = 0;
  uint64_t task_[2];
  uint64_t row_[2];
  int left_in_row_[2] = {0, 0};
  uint64_t acquires_[2] = {0, 0};
  uint64_t known_[2] = {0, 0};  // of the other thread
  std::vector<int> last_ = std::vector<int>(kRows, 0);
  std::vector<uint64_t> last_number_ = std::vector<uint64_t>(kRows, 0);
};

void Run(const char* name, Shape shape, uint64_t events, const std::string& base) {
  const std::string dir = base + "/trace_bench_" + name;
  std::filesystem::create_directories(dir);
  Generator gen(shape);
  std::vector<strads::Event> batch(1 << 16);
  double seconds = 0;
  uint64_t grants = 0;
  {
    auto writer = strads::TraceWriter::Create(dir, 0);
    uint64_t done = 0, since_flush = 0;
    while (done < events) {
      batch.resize(std::min<uint64_t>(batch.capacity(), events - done));
      grants += gen.Fill(batch);
      const auto t0 = Clock::now();
      writer->Append(batch);
      since_flush += batch.size();
      if (since_flush >= 1000000) {  // a periodic flush, as the Record policy does
        writer->Flush();
        since_flush = 0;
      }
      seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      done += batch.size();
    }
    const auto t0 = Clock::now();
    writer->Close();
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  strads::ManifestWriter(dir, strads::ManifestInfo{}).WriteCleanClose();
  const auto t0 = Clock::now();
  const strads::NodeTrace node = strads::TraceReader::ReadNodeLog(dir + "/node-0.log", 0);
  const double read_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double in_mb = static_cast<double>(events * sizeof(strads::Event)) / 1e6;
  std::printf(
      "%-13s events %llu: file %llu bytes = %.3f bytes/event (encoded %.3f bytes/event, LZ4 "
      "ratio %.2f, vs %zu-byte Event struct %.1fx); Append+Flush %.3f s = %.1f M events/s = "
      "%.0f MB/s of Events; read %.3f s = %.1f M events/s; complete %s, events match count %s; "
      "%.1f grants per logged one\n",
      name, static_cast<unsigned long long>(events),
      static_cast<unsigned long long>(node.file_bytes),
      static_cast<double>(node.file_bytes) / static_cast<double>(events),
      static_cast<double>(node.raw_bytes) / static_cast<double>(events),
      static_cast<double>(node.raw_bytes) / static_cast<double>(node.file_bytes),
      sizeof(strads::Event),
      static_cast<double>(events * sizeof(strads::Event)) / static_cast<double>(node.file_bytes),
      seconds, static_cast<double>(events) / seconds / 1e6, in_mb / seconds, read_seconds,
      static_cast<double>(events) / read_seconds / 1e6, node.complete ? "yes" : "NO",
      node.events.size() == events ? "yes" : "NO",
      static_cast<double>(grants) / static_cast<double>(events));
  if (!std::getenv("TRACE_BENCH_KEEP")) std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000000;
  const std::string base = argc > 2 ? argv[2] : "/tmp";
  try {
    Run("row-locks", Shape::kRowLocks, events, base);
    Run("random-locks", Shape::kRandomLocks, events, base);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
