// Runtime: one node of a strads program (design.md section 3).
//
// A program hands its driver to strads::Run, which starts the nodes and runs the driver once
// per node: one node per MPI rank under mpiexec, or P logical nodes as threads of this process
// with `--nodes P`. Every node runs the same driver (control replication): sequential
// statements run identically on every node, and operators on DDS are collective.
//
//   int main(int argc, char** argv) {
//     CLI::App app{"my trainer"};
//     int epochs = 10;
//     app.add_option("--epochs", epochs);
//     return strads::Run(app, argc, argv, [&](strads::Runtime& rt) { ... });
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace strads {

namespace internal {
class NodeContext;
struct NodeSetup;
}  // namespace internal

// How AsyncFor runs its bodies.
enum class AsyncEngine {
  kSchedule,  // conflict-free rounds from reconnaissance: deterministic, serializable
  kLocks,     // element locks only (Figure 2(b) across nodes): nondeterministic
};

// Which AsyncFor bodies verify that they access what their reconnaissance recorded
// (--access-check; docs/async_for.md). A mismatch is an error naming the body and the elements.
enum class AccessCheck {
  kOff,
  kSample,  // each plan's first two executions whole, then a rotating 64th of its rounds
  kAll,     // every body of every call (always in test mode)
};

// The shape SyncFor aggregates for: nodes x threads per node.
struct SyncTopology {
  int nodes = 1;
  int threads = 1;
  bool operator==(const SyncTopology&) const = default;
};

// The runtime's flags (strads::Run parses them; `--help` lists them).
struct RuntimeOptions {
  // Worker threads per node: --threads N, at least 1 (the flag refuses 0), or without the flag
  // the cores of the affinity mask / local nodes, which strads::Run sets for the 0 here.
  int threads = 0;
  int nodes = 1;      // logical nodes in this process (--nodes); 1 under mpiexec
  uint64_t seed = 1;  // seed of rt.rng(), identical on every node
  int blocks = 0;     // AsyncFor scheduler blocks per written DDS; 0: chosen per loop
  AsyncEngine async_engine = AsyncEngine::kSchedule;
  AccessCheck access_check = AccessCheck::kSample;
  bool schedule_report = false;  // node 0 describes each AsyncFor plan on stderr
  bool memory_report = false;    // each node reports its resident bytes on stderr at the end
  double timeout = 120;          // seconds any wait for another node may last
  // --memory-limit: bytes this process may hold resident (0: only the machine and its cgroup
  // bound it); the runtime refuses its large allocations beyond it (memory_headroom.h).
  int64_t memory_limit = 0;
  std::string order_out;  // write each AsyncFor site's serial order here (node 0)
  // Under --nodes P, every logical node keeps its own copy of each page it reads, as an MPI rank
  // does; by default the nodes of one process share the pages of owners' values they only read.
  bool private_pages = false;
  // Test mode (--test-mode, dual testing): only what has a serial equivalent runs. AsyncFor
  // uses the schedule engine, SyncFor SSP(s) and Hybrid run as BSP.
  bool test_mode = false;
  std::string dual_in, dual_out;    // follow / write a dual-test file
  SyncTopology sync_workers{0, 0};  // --sync-workers PxT; 0: the run's own
  bool serialize = false;           // one thread of the process at a time (for debuggers)
  std::optional<uint64_t> chaos;    // seed of random delays at the ordering points
  // Checkpoints and restart (docs/checkpoints.md).
  std::string checkpoint_dir;     // --checkpoint DIR: write checkpoints there
  int64_t checkpoint_every = 0;   // every N operator invocations
  double checkpoint_seconds = 0;  // or at the first operator end S seconds after the last one
  int checkpoint_keep = 2;        // complete checkpoints kept
  std::string restart;            // --restart DIR (its latest checkpoint) or DIR/ckpt-N
};

class Runtime {
 public:
  // Made by strads::Run for each node; a program never makes one.
  explicit Runtime(const internal::NodeSetup& setup);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The runtime of the calling driver thread. Operators without a Runtime argument use it.
  static Runtime& Current();

  int node() const { return node_; }
  int nodes() const { return nodes_; }
  int threads() const { return threads_; }
  bool leader() const { return node_ == 0; }
  uint64_t seed() const { return options_.seed; }
  const RuntimeOptions& options() const { return options_; }
  // Seeded with seed(): the same stream on every node as long as every node draws alike.
  std::mt19937_64& rng() { return rng_; }

  // The serial order equivalent to the last AsyncFor run: running its bodies one by one in this
  // order gives the same result bit for bit. Reported by the leader (node 0), the one node whose
  // plans list every body; empty on the other nodes, and after the lock engine, which has none.
  // Made on the first request after the AsyncFor (a plan does not keep it otherwise).
  const std::vector<int64_t>& last_serial_order() const;

  // The engines' side of this node (transport, threads, ordering seam, DDS registry, loop
  // plans). Its type is internal: programs have no use for it.
  internal::NodeContext& context() { return *context_; }

 private:
  friend class internal::NodeContext;

  RuntimeOptions options_;
  int node_, nodes_, threads_;
  std::mt19937_64 rng_;
  // The last AsyncFor's serial order, made by its source when first asked for (none: null).
  std::function<std::vector<int64_t>()> last_serial_order_source_;
  mutable std::shared_ptr<const std::vector<int64_t>> last_serial_order_;
  std::unique_ptr<internal::NodeContext> context_;
};

using Driver = std::function<void(Runtime&)>;

// Adds the runtime's flags to `app`, parses the command line, starts the nodes, runs `driver`
// on each and returns the process exit code (exit_code.h): 0, 1 (a node failed), 2 (bad flags
// or input) or 3 (replay divergence: the program does not do what the recording did).
int Run(CLI::App& app, int argc, char** argv, const Driver& driver);
int Run(int argc, char** argv, const Driver& driver);

}  // namespace strads
