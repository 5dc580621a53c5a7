// strads::Run: flags, node start-up (MPI or in-process), error reporting and exit codes.
#include <cxxabi.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <typeinfo>

#include "checkpoint.h"
#include "in_process_transport.h"
#include "loop_body_scope.h"
#include "memory_headroom.h"
#include "memory_report.h"
#include "mpi_transport.h"
#include "node_context.h"
#include "rank_registration.h"
#include "shared_array_files.h"
#include "shared_plans.h"
#include "strads/errors.h"
#include "strads/exit_code.h"
#include "strads/flag_checks.h"
#include "strads/process_limits.h"
#include "strads/runtime.h"
#include "strads/seam/baton.h"
#include "strads/seam/replay_report.h"
#include "strads/seam/wait_bound.h"
#include "thread_pool.h"

namespace strads {

namespace {

// Launched by MPICH's mpiexec (Hydra sets PMI_SIZE for every rank)?
bool UnderMpiexec() { return std::getenv("PMI_SIZE") != nullptr; }

int EnvRank() {
  const char* r = std::getenv("PMI_RANK");
  return r ? std::atoi(r) : 0;
}

std::string BaseName(const char* path) {
  std::string s = path ? path : "strads";
  const auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

// Parses --sync-workers PxT.
std::string ParseTopology(const std::string& text, SyncTopology* out) {
  const auto x = text.find('x');
  int p = 0, t = 0;
  try {
    size_t used_p = 0, used_t = 0;
    if (x == std::string::npos) throw std::invalid_argument("no x");
    p = std::stoi(text.substr(0, x), &used_p);
    t = std::stoi(text.substr(x + 1), &used_t);
    if (used_p != x || used_t != text.size() - x - 1) throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    return "'" + text + "' is not of the form PxT (nodes x threads, e.g. 4x2)";
  }
  if (p < 1 || p > kMaxLocalNodes || t < 1 || t > kMaxThreadsPerNode)
    return "'" + text + "': nodes must be in 1.." + std::to_string(kMaxLocalNodes) +
           " and threads in 1.." + std::to_string(kMaxThreadsPerNode);
  *out = {p, t};
  return {};
}

// The runtime's flags, in their own group of --help. `engine` is the --async-engine text,
// `sync_workers` the --sync-workers text.
void AddRuntimeFlags(CLI::App& app, RuntimeOptions& o, std::string& engine,
                     std::string& sync_workers) {
  const std::string group = "strads runtime";
  app.add_option("--threads", o.threads, "worker threads per node (default: cores / local nodes)")
      ->envname("STRADS_THREADS")
      ->check(CLI::Range(1, kMaxThreadsPerNode))
      ->group(group);
  app.add_option("--nodes", o.nodes, "logical nodes in this process (no mpiexec)")
      ->envname("STRADS_NODES")
      ->check(CLI::Range(1, kMaxLocalNodes))
      ->group(group);
  // NonNegativeInteger: CLI11 alone would wrap "-1" silently to 2^64 - 1.
  app.add_option("--seed", o.seed, "seed of the runtime's random source")
      ->envname("STRADS_SEED")
      ->check(NonNegativeInteger<uint64_t>())
      ->capture_default_str()
      ->group(group);
  app.add_option("--blocks", o.blocks,
                 "AsyncFor scheduler blocks per written DDS (default: chosen per loop from its "
                 "accesses, at most 16)")
      ->envname("STRADS_BLOCKS")
      ->check(CLI::Range(1, 65536))
      ->group(group);
  app.add_option("--async-engine", engine, "AsyncFor engine: schedule (deterministic) or locks")
      ->envname("STRADS_ASYNC_ENGINE")
      ->check(CLI::IsMember({"schedule", "locks"}))
      ->capture_default_str()
      ->group(group);
  app.add_option("--access-check", o.access_check,
                 "AsyncFor: verify that bodies access what reconnaissance recorded: all, sample "
                 "(each plan's first two runs, then a few bodies and a 64th of the rounds per "
                 "call) or off; "
                 "test mode: all")
      ->envname("STRADS_ACCESS_CHECK")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, AccessCheck>{{"all", AccessCheck::kAll},
                                             {"sample", AccessCheck::kSample},
                                             {"off", AccessCheck::kOff}},
          CLI::ignore_case))
      ->default_str("sample")
      ->group(group);
  app.add_flag("--schedule-report", o.schedule_report,
               "print each AsyncFor plan's bodies, rounds, groups per round, balance and "
               "estimated speed-up over serial, and the time its reconnaissance and planning "
               "took (stderr, node 0)")
      ->envname("STRADS_SCHEDULE_REPORT")
      ->group(group);
  app.add_flag("--memory-report", o.memory_report,
               "print each node's resident bytes per DDS and for loop plans when the driver "
               "returns (stderr)")
      ->envname("STRADS_MEMORY_REPORT")
      ->group(group);
  app.add_flag("--private-pages", o.private_pages,
               "with --nodes P, each logical node keeps its own copy of every page it reads, as "
               "an MPI rank does (by default the nodes share the pages of values they only read)")
      ->group(group);
  app.add_option("--timeout", o.timeout, "seconds a node waits for another before failing")
      ->envname("STRADS_TIMEOUT")
      ->check(CLI::Validator(
          [](std::string& text) {
            double seconds = 0;
            try {
              size_t used = 0;
              seconds = std::stod(text, &used);
              if (used != text.size()) throw std::invalid_argument("junk");
            } catch (const std::exception&) {
              return "'" + text + "' is not a number of seconds";
            }
            const std::string error = WaitBoundError(seconds);
            return error.empty() ? error : "'" + text + "' " + error;
          },
          ""))
      ->capture_default_str()
      ->group(group);
  app.add_option("--memory-limit", o.memory_limit,
                 "most memory this process may hold resident, as 512M or 20G (powers of 1024); "
                 "the runtime's large allocations (DDSs, reconnaissance, plans) refuse to go "
                 "beyond it, as beyond the machine's available memory and its cgroup's limit, "
                 "which they always respect")
      ->envname("STRADS_MEMORY_LIMIT")
      ->type_name("SIZE")
      ->transform(CLI::Validator(
          [](std::string& text) {
            const auto bytes = ParseMemorySize(text);
            if (!bytes)
              return "'" + text + "' is not a size (a whole number of bytes, 1 .. 2^62, with an " +
                     "optional K, M, G or T)";
            text = std::to_string(*bytes);
            return std::string();
          },
          ""))
      ->group(group);
  app.add_option("--chaos", o.chaos,
                 "inject random delays and yields seeded by SEED at the ordering points")
      ->envname("STRADS_CHAOS")
      ->check(NonNegativeInteger<uint64_t>())
      ->type_name("SEED")
      ->group(group);
  app.add_flag("--serialize", o.serialize,
               "run one thread of the process at a time (for debuggers; single-process replay)")
      ->envname("STRADS_SERIALIZE")
      ->group(group);
  app.add_option("--order-out", o.order_out,
                 "write each AsyncFor site's serial order (one index per line) to FILE")
      ->type_name("FILE")
      ->group(group);
  app.add_option("--checkpoint", o.checkpoint_dir,
                 "write checkpoints to DIR (with --checkpoint-every or --checkpoint-seconds)")
      ->type_name("DIR")
      ->envname("STRADS_CHECKPOINT")
      ->group(group);
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "checkpoint at the end of every N-th operator invocation (AsyncFor, SyncFor)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->type_name("N")
      ->envname("STRADS_CHECKPOINT_EVERY")
      ->group(group);
  app.add_option("--checkpoint-seconds", o.checkpoint_seconds,
                 "checkpoint at the first operator end S seconds after the last checkpoint")
      // CLI::Range alone lets NaN through (every comparison with NaN is false).
      ->check(CLI::Validator(
                  [](std::string& text) {
                    return std::isnan(std::strtod(text.c_str(), nullptr))
                               ? "'" + text + "' is not a number of seconds"
                               : std::string();
                  },
                  "") &
              CLI::Range(0.001, 1e9))
      ->type_name("S")
      ->envname("STRADS_CHECKPOINT_SECONDS")
      ->group(group);
  app.add_option("--checkpoint-keep", o.checkpoint_keep, "complete checkpoints kept")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str()
      ->envname("STRADS_CHECKPOINT_KEEP")
      ->group(group);
  app.add_option("--restart", o.restart,
                 "run again from the latest complete checkpoint of DIR, or from DIR/ckpt-N: "
                 "operators up to it are skipped and their results restored")
      ->type_name("DIR")
      ->envname("STRADS_RESTART")
      ->group(group);
  app.add_flag("--test-mode", o.test_mode,
               "dual testing: AsyncFor schedules (no locks), SyncFor SSP and Hybrid run as BSP")
      ->envname("STRADS_TEST_MODE")
      ->group(group);
  app.add_option("--dual-out", o.dual_out,
                 "test mode: write the serial execution equivalent to this run and the state "
                 "after every loop to FILE")
      ->type_name("FILE")
      ->group(group);
  app.add_option("--dual-in", o.dual_in,
                 "test mode: run every AsyncFor in the order FILE (a --dual-out file) lists and "
                 "SyncFor for its workers")
      ->type_name("FILE")
      ->group(group);
  app.add_option("--sync-workers", sync_workers,
                 "test mode, one node of one thread: SyncFor BSP computes serially what P nodes "
                 "of T threads compute")
      ->type_name("PxT")
      ->check(CLI::Validator(
          [](std::string& text) {
            SyncTopology ignored;
            return ParseTopology(text, &ignored);
          },
          ""))
      ->group(group);
}

// Cores per node: the process's usable cores shared by the nodes on it (mpiexec's local ranks,
// or the in-process nodes).
int DefaultThreads(bool mpi, int in_process_nodes) {
  const int cores = UsableCores();
  int local = in_process_nodes;
  if (mpi) {
    const char* n = std::getenv("MPI_LOCALNRANKS");
    local = n ? std::max(1, std::atoi(n)) : 1;
  }
  return std::max(1, cores / local);
}

// The threads one process may start: each in-process node's workers plus one helper thread per
// node (the recorder's writer). Beyond it, threads on a machine of a few cores only wait for
// each other, each reserves a stack, and together they exhaust the user's process limit, which
// every other program of that user shares (--nodes 256 --threads 1024 asked for 262 144).
constexpr int64_t kMaxProcessThreads = 4096;

// "" if `options` start at most kMaxProcessThreads threads in this process, else why not.
std::string ProcessThreadsError(const RuntimeOptions& options) {
  const int64_t total = int64_t{options.nodes} * (options.threads + 1);
  if (total <= kMaxProcessThreads) return "";
  return "--nodes " + std::to_string(options.nodes) + " x (--threads " +
         std::to_string(options.threads) + " + 1 helper) = " + std::to_string(total) +
         " threads in one process, over the bound of " + std::to_string(kMaxProcessThreads) +
         " (more threads than cores only wait, and they exhaust the user's process limit): use "
         "fewer nodes or threads, or mpiexec";
}

// How a node's driver ended.
enum class Outcome { kOk, kFailed, kUsage, kAborted, kDiverged };

int ExitCodeOf(Outcome o) {
  switch (o) {
    case Outcome::kOk:
    case Outcome::kAborted:
      return ToInt(ExitCode::kOk);
    case Outcome::kUsage:
      return ToInt(ExitCode::kBadInput);
    case Outcome::kDiverged:
      return ToInt(ExitCode::kDivergence);
    case Outcome::kFailed:
      break;
  }
  return ToInt(ExitCode::kFailed);
}

// The node whose failure to report, or -1 if none failed. When one node diverges, the others
// fail after it (a wait for the diverged node expires before the abort reaches it): the
// divergence is the cause and wins, then bad input, then any other failure; among equals, the
// lowest node.
int MostInformativeFailure(const std::vector<Outcome>& outcomes) {
  for (const Outcome wanted : {Outcome::kDiverged, Outcome::kUsage, Outcome::kFailed})
    for (size_t n = 0; n < outcomes.size(); ++n)
      if (outcomes[n] == wanted) return static_cast<int>(n);
  return -1;
}

// The demangled type of the exception being handled ("int", "char const*").
std::string CurrentExceptionType() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (type == nullptr) return "unknown";
  int status = 0;
  char* name = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string readable = status == 0 && name != nullptr ? name : type->name();
  std::free(name);
  return readable;
}

// Runs the driver on one node; returns how it ended and, if it failed, why.
Outcome RunNode(internal::NodeSetup setup, Transport& transport, const Driver& driver,
                std::string* why, bool* collective) {
  try {
    setup.transport = &transport;
    Runtime rt(setup);
    try {
      driver(rt);
      // A node still waiting in an operator that this one skipped learns it here at once.
      rt.context().collectives().DriverReturned();
      rt.context().checkpoints().DriverReturned();
      if (rt.options().memory_report) std::fputs(DescribeNodeMemory(rt).c_str(), stderr);
      if (rt.context().dual() != nullptr) rt.context().dual()->Finish();
      rt.context().FinishOrdering(true);
    } catch (...) {
      rt.context().FinishOrdering(false);
      throw;
    }
    return Outcome::kOk;
  } catch (const AbortedError&) {
    return Outcome::kAborted;
  } catch (const DivergenceError& e) {
    *why = e.what();
    *collective = e.collective();
    return Outcome::kDiverged;
  } catch (const CollectiveUsageError& e) {
    *why = e.what();
    *collective = true;
    return Outcome::kUsage;
  } catch (const UsageError& e) {
    // A rule a body broke (an index out of range, a DDS the plan does not know): which loop and
    // which body follow, as for any exception a body throws.
    *why = e.what() + internal::LoopBodyScope::FailureNote();
    return Outcome::kUsage;
  } catch (const std::exception& e) {
    // Thrown by a loop body: the loop's site and the body's index follow (loop_body_scope.h).
    *why = e.what() + internal::LoopBodyScope::FailureNote();
    return Outcome::kFailed;
  } catch (...) {
    // A driver or a loop body may throw what is no std::exception (`throw "bad line"`, an int):
    // let through, it ended the process in std::terminate, naming neither the node nor the value.
    *why = "an exception of type " + CurrentExceptionType() +
           " (not derived from std::exception, so it carries no message)" +
           internal::LoopBodyScope::FailureNote();
    return Outcome::kFailed;
  }
}

// Under `strads replay` (STRADS_REPLAY_REPORTS, a directory), a rank that fails writes its report
// to a file before MPI_Abort, which may lose the stderr of every other rank; `strads replay`
// prints them all. A divergence is written by the replayer as node-K.txt, any other failure here
// as node-K.error.txt.
void ReportForReplay(int node, const std::string& report) {
  WriteReplayReport(node, ".error.txt", report);
}

int RunUnderMpi(const std::string& prog, const internal::NodeSetup& setup, const Driver& driver) {
  const RuntimeOptions& options = setup.options;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  int code = 0;
  std::optional<internal::RankRegistration> registration;
  {
    MpiTransport transport;
    // Under `strads run`, which names the rank that died first (strads/rank_watch.h): a return
    // from here is no death.
    registration.emplace(transport.node(), transport.nodes());
    if (options.nodes != 1 && transport.nodes() > 1) {
      if (transport.node() == 0)
        std::fprintf(stderr, "%s: --nodes %d cannot be combined with mpiexec -n %d\n", prog.c_str(),
                     options.nodes, transport.nodes());
      MPI_Finalize();
      registration->Finished();
      return ToInt(ExitCode::kBadInput);
    }
    std::string why;
    bool collective = false;
    const Outcome outcome = RunNode(setup, transport, driver, &why, &collective);
    std::fflush(stdout);
    if ((outcome == Outcome::kUsage || outcome == Outcome::kDiverged) && collective) {
      if (transport.node() == 0) std::fprintf(stderr, "%s: %s\n", prog.c_str(), why.c_str());
      code = ExitCodeOf(outcome);
    } else if (outcome != Outcome::kOk) {
      const std::string msg = prog + ": node " + std::to_string(transport.node()) + ": " + why +
                              internal::LastCheckpointNote(options);
      if (outcome != Outcome::kDiverged) ReportForReplay(transport.node(), msg);
      registration->BeforeAbort();
      transport.Abort(msg.c_str(), ExitCodeOf(outcome));  // does not return
    }
  }
  MPI_Finalize();
  registration->Finished();
  return code;
}

int RunInProcess(const std::string& prog, const internal::NodeSetup& setup, const Driver& driver) {
  const RuntimeOptions& options = setup.options;
  const int p = options.nodes;
  InProcessHub hub(p);
  // The nodes of this process share the pages of owners' values they only read
  // (shared_array_files.h).
  SharedArrayFiles shared_files;
  // And one AsyncFor cell table and schedule a planning, not one a node (shared_plans.h).
  SharedPlans shared_plans(p);
  internal::NodeSetup node_setup = setup;
  if (p > 1 && !options.private_pages) {
    node_setup.shared_files = &shared_files;
    node_setup.shared_plans = &shared_plans;
  }
  std::vector<Outcome> outcomes(p, Outcome::kOk);
  std::vector<std::string> why(p);
  std::vector<std::thread> nodes;
  std::vector<std::unique_ptr<InProcessTransport>> transports;
  for (int n = 0; n < p; ++n) transports.push_back(std::make_unique<InProcessTransport>(hub, n));
  auto body = [&](int n) {
    Baton::Held held;  // with --serialize, one thread of the process runs at a time
    bool collective = false;
    outcomes[n] = RunNode(node_setup, *transports[n], driver, &why[n], &collective);
    if (outcomes[n] != Outcome::kOk && outcomes[n] != Outcome::kAborted)
      transports[n]->Abort(why[n].c_str(), ExitCodeOf(outcomes[n]));
  };
  for (int n = 1; n < p; ++n) {
    try {
      nodes.emplace_back(body, n);
    } catch (const std::system_error& e) {
      // The nodes started so far wait for this one: abort them, so that they end and can be
      // joined (a joinable std::thread destroyed terminates the process).
      const std::string why = "cannot start the thread of node " + std::to_string(n) + " of " +
                              std::to_string(p) + " (--nodes): " + e.what();
      transports[0]->Abort(why.c_str(), ToInt(ExitCode::kFailed));
      for (auto& t : nodes) t.join();
      std::fprintf(stderr, "%s: %s\n", prog.c_str(), why.c_str());
      return ToInt(ExitCode::kFailed);
    }
  }
  body(0);  // node 0 on the main thread, so that a debugger's first thread is node 0
  for (auto& t : nodes) t.join();
  std::fflush(stdout);
  const int n = MostInformativeFailure(outcomes);
  if (n < 0) return ToInt(ExitCode::kOk);
  if (p > 1 && outcomes[n] == Outcome::kFailed)
    std::fprintf(stderr, "%s: node %d: %s%s\n", prog.c_str(), n, why[n].c_str(),
                 internal::LastCheckpointNote(options).c_str());
  else
    std::fprintf(stderr, "%s: %s\n", prog.c_str(), why[n].c_str());
  return ExitCodeOf(outcomes[n]);
}

}  // namespace

int Run(CLI::App& app, int argc, char** argv, const Driver& driver) {
  internal::NodeSetup setup;
  RuntimeOptions& options = setup.options;
  std::string engine = "schedule", sync_workers;
  AddRuntimeFlags(app, options, engine, sync_workers);
  const bool mpi = UnderMpiexec();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Under mpiexec every rank parses the same flags: let rank 0 speak for all.
    const int code = mpi && EnvRank() != 0 ? e.get_exit_code() : app.exit(e);
    return ToInt(code == 0 ? ExitCode::kOk : ExitCode::kBadInput);
  }
  const std::string prog = BaseName(argc > 0 ? argv[0] : nullptr);
  options.async_engine = engine == "locks" ? AsyncEngine::kLocks : AsyncEngine::kSchedule;
  if (!sync_workers.empty()) ParseTopology(sync_workers, &options.sync_workers);
  if (!options.dual_in.empty() || !options.dual_out.empty() || options.sync_workers.nodes > 0)
    options.test_mode = true;
  if (options.test_mode) options.access_check = AccessCheck::kAll;
  // The element-lock engine has no serial equivalent by design; the schedule engine runs the
  // same loop bodies serializably, so test mode switches to it rather than refuse the program.
  if (options.test_mode && options.async_engine == AsyncEngine::kLocks) {
    options.async_engine = AsyncEngine::kSchedule;
    if (!mpi || EnvRank() == 0)
      std::fprintf(stderr, "%s: test mode: --async-engine locks runs as schedule\n", prog.c_str());
  }
  if (const char* bug = std::getenv("STRADS_INJECT_BUG"); bug != nullptr && *bug != '\0') {
    const std::string b = bug;
    if (b == "conflicting-round") {
      setup.inject_bug = internal::InjectedBug::kConflictingRound;
    } else if (b == "aggregation-order") {
      setup.inject_bug = internal::InjectedBug::kAggregationOrder;
    } else {
      if (!mpi || EnvRank() == 0)
        std::fprintf(stderr,
                     "%s: STRADS_INJECT_BUG='%s': expected conflicting-round or "
                     "aggregation-order (test only)\n",
                     prog.c_str(), bug);
      return ToInt(ExitCode::kBadInput);
    }
  }
  if (options.checkpoint_dir.empty() !=
          (options.checkpoint_every == 0 && options.checkpoint_seconds == 0) ||
      (options.checkpoint_every > 0 && options.checkpoint_seconds > 0)) {
    if (!mpi || EnvRank() == 0)
      std::fprintf(stderr,
                   "%s: --checkpoint DIR needs exactly one of --checkpoint-every N and "
                   "--checkpoint-seconds S, and they need --checkpoint\n",
                   prog.c_str());
    return ToInt(ExitCode::kBadInput);
  }
  if (options.threads == 0) options.threads = DefaultThreads(mpi, options.nodes);
  if (const std::string error = ProcessThreadsError(options); !error.empty()) {
    if (!mpi || EnvRank() == 0) std::fprintf(stderr, "%s: %s\n", prog.c_str(), error.c_str());
    return ToInt(ExitCode::kBadInput);
  }
  if (options.serialize) Baton::Enable();
  return mpi ? RunUnderMpi(prog, setup, driver) : RunInProcess(prog, setup, driver);
}

int Run(int argc, char** argv, const Driver& driver) {
  CLI::App app{"a strads program"};
  return Run(app, argc, argv, driver);
}

}  // namespace strads
