#include "replay_policy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "debugger_hooks.h"
#include "output_tagger.h"
#include "strads/errors.h"
#include "strads/fnv1a.h"
#include "strads/seam/policy_registry.h"
#include "strads/seam/replay_report.h"
#include "strads/seam/wait_bound.h"
#include "strads/trace/describe.h"
#include "strads/trace/reader.h"
#include "strads/trace/segments.h"

namespace strads {

namespace {

std::unique_ptr<OrderingPolicy> MakeReplayPolicy(const PolicyNode& node, const std::string& dir) {
  return std::make_unique<ReplayOrderingPolicy>(node, dir);
}

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// A command line without argv[0] (spelled differently by different launchers) and without the
// runtime flags that replay sets itself or that cannot change results.
std::vector<std::string> ProgramFlags(const std::vector<std::string>& argv) {
  static const char* const kWithValue[] = {"--threads", "--nodes", "--chaos", "--timeout"};
  std::vector<std::string> flags;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--serialize") continue;
    bool skip = false;
    for (const char* f : kWithValue) {
      if (a == f) skip = true, ++i;                            // --threads 2
      if (a.rfind(std::string(f) + "=", 0) == 0) skip = true;  // --threads=2
    }
    if (!skip) flags.push_back(a);
  }
  return flags;
}

}  // namespace

// Makes mode "replay" available to every program linked with the replayer.
[[maybe_unused]] const bool kReplayRegistered = RegisterOrderingPolicy("replay", MakeReplayPolicy);

ReplayOrderingPolicy::ReplayOrderingPolicy(const PolicyNode& node, const std::string& dir)
    : node_(node.node),
      nodes_(node.nodes),
      log_path_(dir + "/node-" + std::to_string(node.node) + ".log"),
      timeout_seconds_(node.timeout),
      thread_count_(node.threads),
      threads_(new ThreadGrants[static_cast<size_t>(node.threads)]),
      locks_(node.threads, *this) {
  ManifestInfo manifest;
  NodeTrace trace;
  try {
    manifest = TraceReader::ReadManifest(dir + "/manifest");
  } catch (const TraceError& e) {
    throw CollectiveUsageError(std::string("replay: ") + e.what());
  }
  if (manifest.node_count != static_cast<uint32_t>(nodes_))
    throw DivergenceError("replay divergence: " + dir + " was recorded on " +
                              std::to_string(manifest.node_count) + " nodes; this run has " +
                              std::to_string(nodes_) + " (replay with mpiexec -n " +
                              std::to_string(manifest.node_count) +
                              ", or in one process with strads replay --single-process)",
                          /*collective=*/true);
  if (manifest.threads_per_node != static_cast<uint32_t>(thread_count_))
    throw DivergenceError("replay divergence: " + dir + " was recorded with " +
                              std::to_string(manifest.threads_per_node) +
                              " threads per node; this run has " + std::to_string(thread_count_) +
                              " (--threads " + std::to_string(manifest.threads_per_node) + ")",
                          /*collective=*/true);
  if (const char* from = std::getenv(kFromCheckpointVariable); from && *from)
    from_checkpoint_ = std::strtoull(from, nullptr, 10);
  // A trace whose first segments were deleted cannot be replayed from the start.
  if (!from_checkpoint_ && FirstHeldOperator(manifest) > 0)
    throw CollectiveUsageError("replay: " + HeldNote(dir, manifest));
  if (node_ == 0 && manifest.build_id != ManifestWriter::BuildIdOfSelf())
    std::fprintf(stderr,
                 "strads replay: note: %s was rebuilt since the recording (%s, now %s); a "
                 "changed program is reported as a divergence\n",
                 ManifestWriter::ProgramOfSelf().c_str(), manifest.build_id.c_str(),
                 ManifestWriter::BuildIdOfSelf().c_str());
  if (node_ == 0) {
    std::vector<std::string> now;
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    for (std::string arg; std::getline(in, arg, '\0');) now.push_back(arg);
    if (ProgramFlags(now) != ProgramFlags(manifest.arguments)) {
      std::string recorded;
      for (const auto& a : manifest.arguments) recorded += (recorded.empty() ? "" : " ") + a;
      std::fprintf(stderr,
                   "strads replay: note: the recorded run's command line was '%s'; flags that "
                   "change neither the order of events nor what the operators compute replay "
                   "without a divergence\n",
                   recorded.c_str());
    }
  }
  // Streamed chunk by chunk straight into the per-thread grant lists.
  auto split = [this](std::span<const Event> events, uint64_t first) {
    for (size_t k = 0; k < events.size(); ++k) {
      const Event& e = events[k];
      const uint64_t i = first + k;
      if (e.kind() == EventKind::kWait) {  // timing only: nothing to replay
        // A debugger asked to stop before a wait would never stop: stop before the next event
        // of the log instead (this one's successor, moved on again if that is a wait too).
        if (node_ == strads_debugger_break_node && i == strads_debugger_break_event) [[unlikely]]
          strads_debugger_break_event = i + 1;
        continue;
      }
      if (e.kind() != EventKind::kLockGrant) {
        driver_.push_back({e, i});
        continue;
      }
      const LockGrantEvent g = e.lock_grant();
      const auto threads = static_cast<uint64_t>(thread_count_);
      if (g.thread >= threads || g.from_thread >= threads || g.from_thread == g.thread ||
          g.from_count == 0 || g.acquire == 0)
        throw UsageError("replay: " + log_path_ + ": event " + std::to_string(i) +
                         ": impossible lock grant (thread " + std::to_string(g.thread) +
                         " after thread " + std::to_string(g.from_thread) + ", acquire numbers " +
                         std::to_string(g.from_count) + " and " + std::to_string(g.acquire) +
                         ") in a recording with " + std::to_string(thread_count_) + " threads");
      threads_[g.thread].grants.push_back(
          {g.acquire, g.lock_id, g.task, static_cast<uint16_t>(g.from_thread), g.from_count, i});
    }
  };
  try {
    const TraceReader::EventVisitor visitor = split;
    trace = TraceReader::ReadNode(dir, manifest, node_, &visitor,
                                  from_checkpoint_.value_or(kFirstHeldSegment));
    TraceReader::CheckRunOf(log_path_, trace, manifest);
  } catch (const TraceError& e) {
    throw UsageError(std::string("replay: ") + e.what());
  }
  TakeSegmentStates(trace);
  if (!trace.complete)
    incomplete_ = trace.incomplete_reason.empty() ? "incomplete" : trace.incomplete_reason;
  sites_ = std::move(trace.sites);
  for (int t = 0; t < thread_count_; ++t)
    if (!threads_[t].grants.empty())
      locks_.state(t).next_logged = threads_[t].grants.front().acquire;
  if (!driver_.empty()) driver_next_index_.store(driver_.front().index);
  for (size_t i = driver_.size(); i-- > 0;)
    if (driver_[i].event.kind() == EventKind::kOperatorEnd) {
      last_operator_end_ = i + 1;
      break;
    }
  tag_output_ = OutputTagger::Requested();
  if (tag_output_)
    OutputTagger::Enroll(node_,
                         [this](int thread, bool driver) { return NextEventOf(thread, driver); });
}

ReplayOrderingPolicy::~ReplayOrderingPolicy() {
  if (tag_output_) OutputTagger::Withdraw(node_);
}

std::optional<uint64_t> ReplayOrderingPolicy::NextEventOf(int thread, bool driver) const {
  // A worker reads its own grant list (only it advances it); the driver's index is atomic.
  uint64_t grant = kNoEvent;
  if (thread >= 0 && thread < thread_count_) {
    const ThreadGrants& t = threads_[thread];
    if (t.next < t.grants.size()) grant = t.grants[t.next].index;
  }
  const uint64_t driver_event = driver_next_index_.load(std::memory_order_relaxed);
  const uint64_t next = driver || grant == kNoEvent ? std::min(grant, driver_event) : grant;
  if (next == kNoEvent) return std::nullopt;
  return next;
}

void ReplayOrderingPolicy::Diverge(int thread, const std::string& expected,
                                   const std::string& actual) {
  std::string report = "replay divergence on node " + std::to_string(node_);
  if (thread >= 0) report += ", thread " + std::to_string(thread);
  report += operator_.empty() ? " (before the first operator)" : " " + operator_;
  report += ":\n  expected " + expected + "\n  actual   " + actual;
  if (!incomplete_.empty())
    report += "\n  (the trace is incomplete: " + incomplete_ +
              "; a replay can only follow it as far as it goes)";
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    if (failure_.empty()) failure_ = report, first = true;
  }
  // `strads replay` prints the report from here: an MPI job that aborts may lose the stderr of
  // its ranks.
  if (first) WriteReplayReport(node_, ".txt", report);
  failed_.store(true, std::memory_order_release);
  strads_debugger_divergence(node_, report.c_str());
  throw DivergenceError(report);
}

void ReplayOrderingPolicy::TakeSegmentStates(const NodeTrace& trace) {
  // A segment after a cut starts with a thread digest per worker that had taken a lock: its
  // state at the cut, not an operator's end (FORMAT.md, "segments"). They are the first driver
  // events of the segment (the recorder appends them right after the cut).
  std::vector<DriverEvent> kept;
  kept.reserve(driver_.size());
  size_t next = 0;
  bool in_state = false, restores = false;
  for (const DriverEvent& d : driver_) {
    while (next < trace.segments.size() && d.index >= trace.segments[next].first_event) {
      const SegmentRead& segment = trace.segments[next++];
      in_state = segment.start > 0;
      restores = next == 1 && from_checkpoint_ && segment.start == *from_checkpoint_;
    }
    if (in_state && d.event.kind() == EventKind::kThreadDigest) {
      const ThreadDigestEvent state = d.event.thread_digest();
      if (state.thread >= static_cast<uint64_t>(thread_count_))
        throw UsageError("replay: " + log_path_ + ": event " + std::to_string(d.index) +
                         ": the lock state of thread " + std::to_string(state.thread) +
                         " in a recording with " + std::to_string(thread_count_) + " threads");
      if (restores)
        locks_.RestoreThread(static_cast<int>(state.thread), state.acquires, state.digest);
      continue;
    }
    in_state = false;
    kept.push_back(d);
  }
  driver_ = std::move(kept);
}

uint64_t ReplayOrderingPolicy::RecordedInvocation(uint64_t id, uint64_t recorded, uint64_t now) {
  if (!from_checkpoint_) return now;
  return now + invocation_offset_.try_emplace(id, recorded - now).first->second;
}

void ReplayOrderingPolicy::Restored(uint64_t operators) {
  if (!from_checkpoint_)
    throw CollectiveUsageError(
        "replay: the program restarted from a checkpoint (--restart) in a replay from the "
        "start: replay it with strads replay --from-checkpoint");
  if (operators != *from_checkpoint_)
    throw CollectiveUsageError("replay: the program restarted from checkpoint " +
                               std::to_string(operators) + ", the replay follows the trace from " +
                               std::to_string(*from_checkpoint_));
  restored_ = true;
}

void ReplayOrderingPolicy::ThrowFailure() {
  std::lock_guard<std::mutex> lock(failure_mu_);
  throw DivergenceError(failure_);
}

void ReplayOrderingPolicy::Waiting(int thread, uint64_t lock_id, int64_t task, double seconds) {
  if (failed_.load(std::memory_order_acquire)) ThrowFailure();
  if (seconds <= timeout_seconds_) return;
  const Grant* g = threads_[thread].awaited;
  Diverge(thread,
          g ? LoggedText(thread, *g) + ": thread " + std::to_string(g->from) +
                  " to release at count " + std::to_string(g->from_number) + " first"
            : RequestText(lock_id, thread, task),
          "no such grant after waiting " + WaitText(timeout_seconds_) +
              ": the recorded order cannot be reproduced");
}

std::string ReplayOrderingPolicy::RequestText(uint64_t lock_id, int thread, int64_t task) const {
  return "lock request lock " + std::to_string(lock_id) + " task " + std::to_string(task) +
         " (acquire " + std::to_string(locks_.acquires(thread)) + " of thread " +
         std::to_string(thread) + ")";
}

std::string ReplayOrderingPolicy::LoggedText(int thread, const Grant& g) const {
  return "(event " + std::to_string(g.index) + " of " + BaseName(log_path_) + ") " +
         Describe(Event::LockGrant({.thread = static_cast<uint32_t>(thread),
                                    .lock_id = g.lock_id,
                                    .task = g.task,
                                    .acquire = g.acquire,
                                    .from_thread = g.from,
                                    .from_count = g.from_number}),
                  sites_);
}

void ReplayOrderingPolicy::TakeLogged(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) {
  ThreadGrants& t = threads_[thread];
  GrantState& s = locks_.state(thread);
  s.Count();
  if (tag_output_) OutputTagger::NameThread(node_, thread);
  // The lock's last release must be the recorded one.
  BeforeReplayEvent(node_, t.grants[t.next].index);
  const Grant& g = t.grants[t.next++];
  s.next_logged = t.next < t.grants.size() ? t.grants[t.next].acquire : 0;
  if (g.lock_id != lock_id || g.task != static_cast<uint64_t>(task))
    Diverge(thread, LoggedText(thread, g), RequestText(lock_id, thread, task));
  // The recording took it after thread g.from's release at count g.from_number (the lock's last
  // release, or a later one of that thread's): wait for that release, then take the lock, whose
  // last release this thread must then follow.
  const uint64_t after = SeamLock::Grant(g.from, g.from_number);
  t.awaited = &g;
  locks_.AwaitPublished(after, thread, lock_id, task);
  const uint64_t last = locks_.Take(lock, SeamLock::kAnyRelease, thread, lock_id, task);
  t.awaited = nullptr;
  KnownGrants::Learn(s.known, after);
  if (!KnownGrants::Follows(s.known, last)) {
    lock.word.store(last, std::memory_order_release);  // as it was
    Diverge(thread, LoggedText(thread, g),
            RequestText(lock_id, thread, task) + " taken after thread " +
                std::to_string(SeamLock::ThreadOf(last)) + "'s release at count " +
                std::to_string(SeamLock::NumberOf(last)) +
                ", which the recorded grant did not follow");
  }
}

void ReplayOrderingPolicy::UnorderedGrant(SeamLock& lock, uint64_t lock_id, int thread,
                                          int64_t task, uint64_t last) {
  lock.word.store(last & ~SeamLock::kHeld, std::memory_order_release);  // as it was
  Diverge(thread,
          "no logged grant for this request: the recording granted it after grants this thread "
          "had already been ordered after",
          RequestText(lock_id, thread, task) + ", but the lock was last released by thread " +
              std::to_string(SeamLock::ThreadOf(last)) + " at count " +
              std::to_string(SeamLock::NumberOf(last)));
}

const ReplayOrderingPolicy::DriverEvent& ReplayOrderingPolicy::ExpectDriver(
    EventKind kind, const std::string& actual) {
  if (failed_.load(std::memory_order_acquire)) ThrowFailure();
  if (driver_next_ == driver_.size())
    Diverge(-1,
            "nothing: the recording ends here" +
                std::string(incomplete_.empty() ? "" : " (the recorded run died)") + " (" +
                std::to_string(driver_.size()) + " events of " + BaseName(log_path_) + " replayed)",
            actual);
  const DriverEvent& d = driver_[driver_next_];
  BeforeReplayEvent(node_, d.index);
  if (d.event.kind() != kind)
    Diverge(d.event.kind() == EventKind::kThreadDigest ? static_cast<int>(d.event.thread()) : -1,
            "(event " + std::to_string(d.index) + " of " + BaseName(log_path_) + ") " +
                Describe(d.event, sites_),
            actual);
  ++driver_next_;
  driver_next_index_.store(driver_next_ < driver_.size() ? driver_[driver_next_].index : kNoEvent,
                           std::memory_order_relaxed);
  return d;
}

int ReplayOrderingPolicy::NextSource(Tag tag) {
  const std::string actual = "a message with tag " + std::to_string(static_cast<int>(tag));
  const DriverEvent& d = ExpectDriver(EventKind::kDelivery, actual);
  const DeliveryEvent delivery = d.event.delivery();
  // A node never delivers its own messages through the seam: a recorded source that is this
  // node, or none of the run's, is a trace that cannot be followed.
  if (delivery.tag != static_cast<uint64_t>(tag) ||
      delivery.source >= static_cast<uint64_t>(nodes_) ||
      delivery.source == static_cast<uint64_t>(node_))
    Diverge(-1, "(event " + std::to_string(d.index) + ") " + Describe(d.event, sites_), actual);
  pending_delivery_ = &d;
  return static_cast<int>(delivery.source);
}

void ReplayOrderingPolicy::Delivered(const Message& m) {
  const DriverEvent* d = pending_delivery_;
  pending_delivery_ = nullptr;
  uint64_t seq = m.seq;
  if (d != nullptr && from_checkpoint_)  // the restarted transport numbers from 0
    seq += seq_offset_
               .try_emplace({d->event.delivery().source, d->event.delivery().tag},
                            d->event.delivery().seq - m.seq)
               .first->second;
  if (d == nullptr || static_cast<uint64_t>(m.source) != d->event.delivery().source ||
      seq != d->event.delivery().seq)
    Diverge(
        -1,
        d ? "(event " + std::to_string(d->index) + ") " + Describe(d->event, sites_)
          : std::string("no delivery"),
        "delivery of message " + std::to_string(m.seq) + " from node " + std::to_string(m.source));
}

uint64_t ReplayOrderingPolicy::Choose(ChoicePoint point, uint64_t live_value) {
  const std::string actual = std::string("choice ") +
                             ChoicePointName(static_cast<uint64_t>(point)) + " (live value " +
                             std::to_string(live_value) + ")";
  const DriverEvent& d = ExpectDriver(EventKind::kChoice, actual);
  const ChoiceEvent choice = d.event.choice();
  if (choice.point != static_cast<uint64_t>(point))
    Diverge(-1, "(event " + std::to_string(d.index) + ") " + Describe(d.event, sites_), actual);
  return choice.value;
}

void ReplayOrderingPolicy::Input(const std::string& path, uint64_t offset,
                                 std::span<const std::byte> bytes) {
  // Read before the checkpoint: logged in the segments before it (replayed from the start).
  if (from_checkpoint_ && !restored_) return;
  Fnv1a h;
  h.Update(bytes.data(), bytes.size());
  const std::string actual = "input of " + std::to_string(bytes.size()) + " bytes at offset " +
                             std::to_string(offset) + " of '" + path + "', FNV-1a " +
                             Hex16(h.digest());
  const DriverEvent& d = ExpectDriver(EventKind::kInput, actual);
  const InputEvent input = d.event.input();
  const auto site =
      input.site <= UINT32_MAX ? sites_.find(static_cast<uint32_t>(input.site)) : sites_.end();
  // The bytes decide: the same content under another name or folder is the same input.
  if (site == sites_.end() || input.offset != offset || input.bytes != bytes.size() ||
      input.fnv1a64 != h.digest())
    Diverge(-1, "(event " + std::to_string(d.index) + ") " + Describe(d.event, sites_),
            actual + "\n  the input file changed since the recording");
  if (site->second.file != path && renamed_inputs_.insert(site->second.file + '\0' + path).second)
    std::fprintf(stderr,
                 "strads replay: note: node %d reads '%s' where the recording read '%s': the "
                 "same bytes, replaying\n",
                 node_, path.c_str(), site->second.file.c_str());
}

OperatorEvent ReplayOrderingPolicy::ExpectOperator(EventKind kind, const char* what,
                                                   const OperatorSite& site) {
  const std::string actual = std::string(what) + " " + site.kind + " at " + BaseName(site.file) +
                             ":" + std::to_string(site.line) + " (invocation " +
                             std::to_string(site.invocation) + ")";
  const DriverEvent& d = ExpectDriver(kind, actual);
  const OperatorEvent logged = d.event.operator_event();
  const auto it =
      logged.site <= UINT32_MAX ? sites_.find(static_cast<uint32_t>(logged.site)) : sites_.end();
  if (it == sites_.end() || it->second.kind != site.kind || it->second.line != site.line ||
      BaseName(it->second.file) != BaseName(site.file) ||
      logged.invocation != RecordedInvocation(logged.site, logged.invocation, site.invocation))
    Diverge(-1, "(event " + std::to_string(d.index) + ") " + Describe(d.event, sites_), actual);
  return logged;
}

void ReplayOrderingPolicy::OperatorBegin(const OperatorSite& site) {
  const OperatorEvent begin = ExpectOperator(EventKind::kOperatorBegin, "operator_begin", site);
  // A run that died in this operator left only part of its events (its threads' grants, its
  // deliveries): replaying them would report the missing ones as divergences, or wait for
  // them. The replay stops where the recording does.
  if (!incomplete_.empty() && !ended_operator_after(driver_next_))
    Diverge(-1,
            "nothing more: the recording ends here (the recorded run died): the trace has "
            "the begin of this operator, not its end",
            std::string(site.kind) + " at " + BaseName(site.file) + ":" +
                std::to_string(site.line) + " (invocation " + std::to_string(site.invocation) +
                ")");
  operator_ = "in " + DescribeSite(sites_, begin.site) + " (invocation " +
              std::to_string(site.invocation) + ")";
  // The workers are idle between operators: every grant so far comes before any to come.
  locks_.StartOperator();
  strads_debugger_operator_begin(node_, begin.site, site.invocation, site.kind, site.file,
                                 site.line);
}

void ReplayOrderingPolicy::OperatorEnd(const OperatorSite& site) {
  locks_.ReportChangedThreads([this](int t, uint64_t acquires, uint64_t digest) {
    const std::string actual = "thread " + std::to_string(t) + ": " + std::to_string(acquires) +
                               " lock acquires, digest " + Hex16(digest);
    const DriverEvent& d = ExpectDriver(EventKind::kThreadDigest, actual);
    const ThreadDigestEvent logged = d.event.thread_digest();
    if (logged.thread != static_cast<uint32_t>(t) || logged.acquires != acquires ||
        logged.digest != digest)
      Diverge(t, "(event " + std::to_string(d.index) + ") " + Describe(d.event, sites_),
              actual + "\n  the thread's lock requests differ from the recording");
  });
  const OperatorEvent end = ExpectOperator(EventKind::kOperatorEnd, "operator_end", site);
  operator_ = "after " + DescribeSite(sites_, end.site) + " (invocation " +
              std::to_string(site.invocation) + ")";
}

void ReplayOrderingPolicy::OperatorOutcome(const OperatorSite& site,
                                           FunctionRef<uint64_t()> digest) {
  const uint64_t now = digest();
  const std::string actual = "outcome of " + std::string(site.kind) + " at " + BaseName(site.file) +
                             ":" + std::to_string(site.line) + " (invocation " +
                             std::to_string(site.invocation) + "): written state digest " +
                             Hex16(now);
  const DriverEvent& d = ExpectDriver(EventKind::kOutcome, actual);
  const OutcomeEvent logged = d.event.outcome();
  if (logged.invocation != RecordedInvocation(logged.site, logged.invocation, site.invocation) ||
      logged.digest != now)
    Diverge(-1, "(event " + std::to_string(d.index) + ") " + Describe(d.event, sites_),
            actual +
                "\n  every recorded order was followed up to here, but the operator wrote other "
                "values: the program's arithmetic (its code or a flag) differs from the "
                "recording's");
}

void ReplayOrderingPolicy::Finish(bool ok) {
  if (!ok || failed_.load(std::memory_order_acquire)) return;
  if (from_checkpoint_ && !restored_)
    Diverge(-1,
            "a restart from checkpoint " + std::to_string(*from_checkpoint_) +
                ", where this replay starts",
            "the program finished without restarting from it (STRADS_RESTART)");
  if (driver_next_ < driver_.size()) {
    const DriverEvent& d = driver_[driver_next_];
    Diverge(-1,
            "(event " + std::to_string(d.index) + " of " + BaseName(log_path_) + ") " +
                Describe(d.event, sites_) + " and " +
                std::to_string(driver_.size() - driver_next_ - 1) + " more",
            "the program finished");
  }
}

}  // namespace strads
