#include "record_policy.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "strads/errors.h"
#include "strads/fnv1a.h"
#include "strads/seam/policy_registry.h"
#include "strads/trace/segments.h"

namespace strads {

// The trace numbers the runtime's choice points itself (it does not see the core).
static_assert(static_cast<uint64_t>(ChoicePoint::kSspPoll) ==
              static_cast<uint64_t>(TraceChoicePoint::kSspPoll));
static_assert(static_cast<uint64_t>(ChoicePoint::kTaskDispatch) ==
              static_cast<uint64_t>(TraceChoicePoint::kTaskDispatch));
static_assert(static_cast<uint64_t>(WaitKind::kLock) ==
              static_cast<uint64_t>(TraceWaitKind::kLock));
static_assert(static_cast<uint64_t>(WaitKind::kMessage) ==
              static_cast<uint64_t>(TraceWaitKind::kMessage));
static_assert(static_cast<uint64_t>(WaitKind::kCollective) ==
              static_cast<uint64_t>(TraceWaitKind::kCollective));

namespace {

// Live record policies of this process, for the crash flusher.
std::mutex live_mu;
std::set<RecordOrderingPolicy*>& Live() {
  static std::set<RecordOrderingPolicy*> live;
  return live;
}

// The crash path. A signal handler may run inside malloc or while its thread holds any lock,
// so it only does async-signal-safe things: it writes a byte to a pipe and waits (poll, bounded)
// for the byte back. The work (locks, encoding, LZ4, write) is done by the crash flusher, an
// ordinary thread created at start that waits in read() and blocks every signal. If the flusher
// cannot finish in time (a lock the crashed thread holds, malloc's included), the handler gives
// up and the signal kills the process as without a recorder.
int crash_wake[2] = {-1, -1};  // handler -> flusher
int crash_done[2] = {-1, -1};  // flusher -> handler
pid_t crash_pid = -1;          // the process whose flusher reads crash_wake (not a fork child)
constexpr int kCrashFlushMs = 2000;

// Tries to lock mu for about `ms` milliseconds (a thread that died holding it never unlocks).
bool TryLockFor(std::mutex& mu, int ms) {
  for (int tries = 0; tries < ms; ++tries) {
    if (mu.try_lock()) return true;
    const timespec one_ms{0, 1000000};
    nanosleep(&one_ms, nullptr);
  }
  return false;
}

void OnFatalSignal(int sig) {
  const int saved_errno = errno;
  char byte = 1;
  if (::getpid() == crash_pid && ::write(crash_wake[1], &byte, 1) == 1) {
    pollfd done{crash_done[0], POLLIN, 0};
    if (::poll(&done, 1, kCrashFlushMs) == 1 && ::read(crash_done[0], &byte, 1) < 0) {
      // Nothing more to do: the process dies below either way.
    }
  }
  errno = saved_errno;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void CrashFlusherLoop() {
  bool flushed = false;
  for (;;) {
    char byte = 0;
    const ssize_t n = ::read(crash_wake[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (!flushed) {
      flushed = true;  // once: a second crashing thread only waits for the first flush
      // The set changes only at a policy's start and end; a thread that crashed holding its
      // mutex leaves the flush to the handler's timeout.
      if (TryLockFor(live_mu, 1000)) {
        for (RecordOrderingPolicy* p : Live()) p->EmergencyFlush();
        live_mu.unlock();
      }
    }
    byte = 1;
    if (::write(crash_done[1], &byte, 1) < 0) return;
  }
}

void InstallCrashHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(crash_wake, O_CLOEXEC) != 0) return;
    if (::pipe2(crash_done, O_CLOEXEC) != 0) return;
    // The flusher must never run a handler itself (it would wait for its own reply).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
      std::thread(CrashFlusherLoop).detach();
    } catch (const std::system_error&) {
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      return;  // no flusher, no handlers: a crash loses the buffered events, as under SIGKILL
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    crash_pid = ::getpid();
    struct sigaction sa {};
    sa.sa_handler = OnFatalSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS}) sigaction(sig, &sa, nullptr);
    // Being stopped (Ctrl-C, a launcher's or a scheduler's SIGTERM) is not a crash, but the
    // buffered events are as worth keeping. Only where the program did not take the signal.
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old_action {};
      if (sigaction(sig, nullptr, &old_action) == 0 && old_action.sa_handler == SIG_DFL)
        sigaction(sig, &sa, nullptr);
    }
  });
}

std::vector<std::string> Arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

std::unique_ptr<OrderingPolicy> MakeRecordPolicy(const PolicyNode& node, const std::string& dir) {
  return std::make_unique<RecordOrderingPolicy>(node, dir);
}

}  // namespace

// Makes mode "record" available to every program linked with the recorder.
[[maybe_unused]] const bool kRecordRegistered = RegisterOrderingPolicy("record", MakeRecordPolicy);

RecordOrderingPolicy::RecordOrderingPolicy(const PolicyNode& node, const std::string& dir)
    : node_(node.node),
      nodes_(node.nodes),
      dir_(dir),
      segments_{0},
      barrier_(node.barrier),
      driver_stream_(static_cast<size_t>(node.threads)),
      locks_(node.threads, *this) {
  // First, while every node is here: a collective, and nothing below throws on some nodes only
  // before it.
  const uint64_t run_id = node.agree ? node.agree(node_ == 0 ? ManifestWriter::NewRunId() : 0)
                                     : ManifestWriter::NewRunId();
  if (static_cast<uint64_t>(node.threads) > SeamLock::kMaxThreads)
    throw CollectiveUsageError("recording: at most " + std::to_string(SeamLock::kMaxThreads) +
                               " threads per node");
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw CollectiveUsageError("cannot create trace directory '" + dir +
                               "': " + std::strerror(errno));
  try {
    writer_ = TraceWriter::Create(dir, node_, TraceWriter::kMaxFrameContentBytes, run_id);
    if (node_ == 0) {
      ManifestInfo info;
      info.program = ManifestWriter::ProgramOfSelf();
      info.build_id = ManifestWriter::BuildIdOfSelf();
      info.arguments = Arguments();
      info.node_count = static_cast<uint32_t>(node.nodes);
      info.threads_per_node = static_cast<uint32_t>(node.threads);
      info.start_time_ns = ManifestWriter::NowNs();
      info.run_id = run_id;
      manifest_ = std::make_unique<ManifestWriter>(dir, info);
      manifest_->WriteStart();
    }
  } catch (const TraceError& e) {
    throw UsageError(std::string("recording: ") + e.what());
  }
  for (size_t s = 0; s <= driver_stream_; ++s) buffers_.push_back(std::make_unique<Buffer>());
  writer_thread_ = std::thread([this] { WriterLoop(); });
  {
    std::lock_guard<std::mutex> lock(live_mu);
    Live().insert(this);
  }
  InstallCrashHandlers();
}

RecordOrderingPolicy::~RecordOrderingPolicy() {
  {
    std::lock_guard<std::mutex> lock(live_mu);
    Live().erase(this);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_thread_.joinable()) writer_thread_.join();
}

void RecordOrderingPolicy::UnorderedGrant(SeamLock&, uint64_t lock_id, int thread, int64_t task,
                                          uint64_t last) {
  GrantState& s = locks_.state(thread);
  // Logged after the releasing thread's latest published release, not only the lock's last:
  // the thread then knows it follows all of them, and fewer of its grants go unordered.
  const uint64_t after = locks_.LatestRelease(last);
  KnownGrants::Learn(s.known, after);
  Append(static_cast<size_t>(thread),
         Event::LockGrant({.thread = static_cast<uint32_t>(thread),
                           .lock_id = lock_id,
                           .task = static_cast<uint64_t>(task),
                           .acquire = SeamLock::NumberOf(s.grant),
                           .from_thread = static_cast<uint32_t>(SeamLock::ThreadOf(after)),
                           .from_count = SeamLock::NumberOf(after)}));
}

void RecordOrderingPolicy::LockWaited(int thread, uint64_t lock_id, uint64_t begin_ns,
                                      uint64_t duration_ns) {
  Append(static_cast<size_t>(thread),
         Event::Wait({.thread = static_cast<uint32_t>(thread),
                      .kind = static_cast<uint64_t>(TraceWaitKind::kLock),
                      .begin_ns = begin_ns,
                      .duration_ns = duration_ns,
                      .object = lock_id}));
}

void RecordOrderingPolicy::Waited(WaitKind kind, int source, uint64_t begin_ns,
                                  uint64_t duration_ns) {
  if (finishing_) return;  // the clean close's barrier: the log is closed
  DriverAppend(Event::Wait({.thread = static_cast<uint32_t>(driver_stream_),
                            .kind = static_cast<uint64_t>(kind),
                            .begin_ns = begin_ns,
                            .duration_ns = duration_ns,
                            .object = static_cast<uint64_t>(source)}));
}

int RecordOrderingPolicy::NextSource(Tag) { return kAnySource; }

void RecordOrderingPolicy::Delivered(const Message& m) {
  DriverAppend(Event::Delivery({.thread = static_cast<uint32_t>(driver_stream_),
                                .source = static_cast<uint64_t>(m.source),
                                .seq = m.seq,
                                .tag = static_cast<uint64_t>(m.tag)}));
}

uint64_t RecordOrderingPolicy::Choose(ChoicePoint point, uint64_t live_value) {
  DriverAppend(Event::Choice({.thread = static_cast<uint32_t>(driver_stream_),
                              .point = static_cast<uint64_t>(point),
                              .value = live_value}));
  return live_value;
}

uint32_t RecordOrderingPolicy::SiteId(const char* kind, const std::string& file, uint32_t line) {
  const std::string key = std::string(kind) + "@" + file + ":" + std::to_string(line);
  auto [it, inserted] = site_ids_.try_emplace(key, static_cast<uint32_t>(site_ids_.size()));
  if (inserted) {
    // The site must reach the writer before any event naming it: hand the driver's events
    // over first, then the definition.
    std::lock_guard<std::mutex> lock(driver_mu_);
    Handover(driver_stream_);
    Item item;
    item.site = {it->second, kind, file, line};
    Enqueue(std::move(item));
  }
  return it->second;
}

void RecordOrderingPolicy::Input(const std::string& path, uint64_t offset,
                                 std::span<const std::byte> bytes) {
  Fnv1a h;
  h.Update(bytes.data(), bytes.size());
  DriverAppend(Event::Input({.thread = static_cast<uint32_t>(driver_stream_),
                             .site = SiteId("input", path, 0),
                             .offset = offset,
                             .bytes = bytes.size(),
                             .fnv1a64 = h.digest()}));
}

void RecordOrderingPolicy::OperatorBegin(const OperatorSite& site) {
  locks_.StartOperator();
  DriverAppend(Event::OperatorBegin({.thread = static_cast<uint32_t>(driver_stream_),
                                     .site = SiteId(site.kind, site.file, site.line),
                                     .invocation = site.invocation,
                                     .time_ns = SteadyNowNs()}));
}

void RecordOrderingPolicy::OperatorEnd(const OperatorSite& site) {
  // The workers are idle between operators: their counts can be read.
  locks_.ReportChangedThreads([this](int t, uint64_t acquires, uint64_t digest) {
    DriverAppend(Event::ThreadDigest(
        {.thread = static_cast<uint32_t>(t), .acquires = acquires, .digest = digest}));
  });
  DriverAppend(Event::OperatorEnd({.thread = static_cast<uint32_t>(driver_stream_),
                                   .site = SiteId(site.kind, site.file, site.line),
                                   .invocation = site.invocation,
                                   .time_ns = SteadyNowNs()}));
  HandoverAll();  // the workers are idle: their partial buffers can be handed over
}

void RecordOrderingPolicy::OperatorOutcome(const OperatorSite& site,
                                           FunctionRef<uint64_t()> digest) {
  DriverAppend(Event::Outcome({.thread = static_cast<uint32_t>(driver_stream_),
                               .site = SiteId(site.kind, site.file, site.line),
                               .invocation = site.invocation,
                               .digest = digest()}));
  std::lock_guard<std::mutex> lock(driver_mu_);
  Handover(driver_stream_);
}

void RecordOrderingPolicy::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  drained_cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void RecordOrderingPolicy::Finish(bool ok) {
  finishing_ = true;
  HandoverAll();
  Drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_thread_.join();
  std::string error = writer_error_;
  if (error.empty()) {
    try {
      if (ok)
        writer_->Close();
      else
        writer_->Flush();
    } catch (const TraceError& e) {
      error = e.what();
    }
  }
  if (!error.empty()) throw std::runtime_error("recording failed: " + error);
  if (!ok) return;
  // Clean close once every node closed its log.
  barrier_();
  if (manifest_) {
    try {
      manifest_->WriteCleanClose();
    } catch (const TraceError& e) {
      throw std::runtime_error(std::string("recording failed: ") + e.what());
    }
  }
}

// Segment rotation at checkpoints: apart from the event path above.
std::string RecordOrderingPolicy::CheckpointWritten(uint64_t operators) {
  HandoverAll();  // an operator end: the workers are idle, every event so far goes in
  {
    // Holding mu_ once the writer is idle keeps it from starting a batch (or its periodic
    // Flush) while the file changes under it.
    std::unique_lock<std::mutex> lock(mu_);
    drained_cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
    if (!writer_error_.empty()) return "recording: " + writer_error_;
    try {
      writer_->StartSegment(operators);
    } catch (const TraceError& e) {
      writer_error_ = e.what();
      return std::string("recording: ") + e.what();
    }
  }
  // The segment starts with each worker's lock state, so that a replay from this checkpoint
  // can start the threads' counts and digests where they stood (FORMAT.md, "segments").
  for (int t = 0; t < locks_.threads(); ++t) {
    const GrantState& state = locks_.state(t);
    if (state.acquires() == 0) continue;
    DriverAppend(Event::ThreadDigest({.thread = static_cast<uint32_t>(t),
                                      .acquires = state.acquires(),
                                      .digest = state.digest}));
  }
  if (manifest_) segments_.push_back(operators);
  return "";
}

void RecordOrderingPolicy::CheckpointsKept(const std::string& dir, std::span<const uint64_t> kept) {
  if (!manifest_ || kept.empty()) return;
  // Until a checkpoint of this run is deleted the trace keeps everything from the start; then
  // only the segments that a replay from a kept checkpoint reads.
  bool deleted_any = false;
  for (const uint64_t s : segments_)  // every segment but node-K.log starts at a checkpoint
    deleted_any = deleted_any || (s > 0 && std::find(kept.begin(), kept.end(), s) == kept.end());
  std::vector<uint64_t> held, dropped;
  for (const uint64_t s : segments_)
    (!deleted_any || s >= kept.front() ? held : dropped).push_back(s);
  std::vector<uint64_t> listed;
  for (const uint64_t k : kept)
    if (std::find(held.begin(), held.end(), k) != held.end()) listed.push_back(k);
  try {
    // The manifest first: a crash between the two leaves files no manifest names (ignored),
    // never a manifest naming deleted files.
    manifest_->WriteSegments(dir, held, listed);
  } catch (const TraceError& e) {
    throw std::runtime_error(std::string("recording failed: ") + e.what());
  }
  for (const uint64_t s : dropped)
    for (int k = 0; k < nodes_; ++k) std::remove(NodeLogPath(dir_, k, s).c_str());
  segments_ = std::move(held);
}

void RecordOrderingPolicy::Handover(size_t stream) {
  if (buffers_[stream]->used == 0) return;
  Item item;
  item.buffer = std::move(buffers_[stream]);
  {
    // Recycled buffers: a fresh 300 KiB allocation per handover would cost page faults on the
    // recording thread.
    std::unique_lock<std::mutex> lock(mu_);
    const auto room = [this] { return queue_.size() < kMaxQueuedItems; };
    if (!room_cv_.wait_for(lock, kStallNotice, room)) {
      if (!std::exchange(stall_noticed_, true))
        std::fprintf(stderr,
                     "strads: recording: node %d has waited %lld s for its trace writer to take "
                     "more events (trace directory %s): a slow or stalled disk holds the run "
                     "back\n",
                     node_, static_cast<long long>(kStallNotice.count()), dir_.c_str());
      room_cv_.wait(lock, room);
    }
    if (!free_.empty()) {
      buffers_[stream] = std::move(free_.back());
      free_.pop_back();
    }
    queue_.push_back(std::move(item));
  }
  cv_.notify_one();
  if (!buffers_[stream]) buffers_[stream] = std::make_unique<Buffer>();
}

void RecordOrderingPolicy::HandoverAll() {
  for (size_t s = 0; s < driver_stream_; ++s) Handover(s);
  std::lock_guard<std::mutex> lock(driver_mu_);
  Handover(driver_stream_);
}

void RecordOrderingPolicy::DriverAppend(const Event& e) {
  std::lock_guard<std::mutex> lock(driver_mu_);
  Append(driver_stream_, e);
}

void RecordOrderingPolicy::Enqueue(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void RecordOrderingPolicy::WriterLoop() {
  using Clock = std::chrono::steady_clock;
  auto last_flush = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait_for(lock, kFlushInterval, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty() && stop_) return;
    // Operator ends hand the events over; they reach the file at most every kFlushInterval, so
    // that short operators share chunks and write()s (each chunk has fixed costs).
    const bool flush = Clock::now() - last_flush >= kFlushInterval;
    std::deque<Item> batch;
    batch.swap(queue_);
    busy_ = true;
    lock.unlock();
    room_cv_.notify_all();
    try {
      if (writer_error_.empty()) {
        for (Item& item : batch) {
          if (item.buffer)
            writer_->Append({item.buffer->events.get(), item.buffer->used});
          else
            writer_->DefineSite(item.site.id, item.site.kind, item.site.file, item.site.line);
        }
        if (flush) {
          writer_->Flush();
          last_flush = Clock::now();
        }
      }
    } catch (const std::exception& e) {
      writer_error_ = e.what();
    }
    lock.lock();
    for (Item& item : batch)
      if (item.buffer && free_.size() < 64) {
        item.buffer->used = 0;
        free_.push_back(std::move(item.buffer));
      }
    busy_ = false;
    drained_cv_.notify_all();
  }
}

void RecordOrderingPolicy::EmergencyFlush() noexcept {
  // On the crash flusher thread, never in a signal handler. Waits (at most a second) until the
  // writer thread is between batches, then writes what was handed over and the driver's buffer,
  // and keeps both mutexes, so that nothing touches the file or the driver's buffer again.
  // Worker buffers are left out: their threads may still be appending (a copy would race and
  // could tear the last event), and they hold only the unfinished operator, which a replay
  // never replays (docs/recording.md, "What the crash handler can lose, exactly").
  // One deadline for both ways the writer can be busy: holding mu_, or writing a batch outside
  // it with busy_ set (a loop that only retried the lock passed in microseconds in that case).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    if (mu_.try_lock()) {
      if (!busy_) break;
      mu_.unlock();
    }
    if (std::chrono::steady_clock::now() >= deadline) return;
    const timespec one_ms{0, 1000000};
    nanosleep(&one_ms, nullptr);
  }
  // mu_ is held and the writer is idle from here on: it is never handed back.
  try {
    for (Item& item : queue_) {
      if (item.buffer)
        writer_->Append({item.buffer->events.get(), item.buffer->used});
      else
        writer_->DefineSite(item.site.id, item.site.kind, item.site.file, item.site.line);
    }
    queue_.clear();
    if (TryLockFor(driver_mu_, 1000)) {
      Buffer& driver = *buffers_[driver_stream_];
      if (driver.used) writer_->Append({driver.events.get(), driver.used}), driver.used = 0;
    }
    writer_->Flush();
  } catch (...) {
  }
}

}  // namespace strads
