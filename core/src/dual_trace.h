// DualTrace: the files of discrepancy-free dual testing (thesis section 5.5, Figure 15).
//
// A run in test mode (--test-mode) can write (--dual-out FILE) what it executed as a serial
// program, and can follow (--dual-in FILE) what another run wrote. The file is text, one record
// per line, written by node 0:
//
//   strads-dual 1                              first line: format and version
//   workers P T                                SyncFor ran as P nodes x T threads (see below)
//   asyncfor K FIRST LAST order SITE           invocation K of the AsyncFor at SITE (FILE:LINE)
//   I                                          ... followed by its serial order, LAST-FIRST+1
//   ...                                        loop indices, one per line
//   asyncfor K FIRST LAST same SITE            invocation K ran the same order as invocation K-1
//   state asyncfor K HEX SITE                  FNV-1a of the DDSs the loop wrote, after it
//   state syncfor K HEX SITE                   FNV-1a of the SyncFor parameters, after it
//   end                                        the run finished: a file without it is truncated
//
// K counts the invocations of each site from 0. A run that follows a file runs invocation K of
// every AsyncFor site in the recorded order (OrderedAsyncFor's machinery: conflicting bodies keep
// that order, the others run in parallel), and SyncFor BSP as `workers` says: with one node and
// one thread it emulates the P x T aggregation serially (sync_for.h), with P nodes of T threads
// it runs as usual, otherwise it refuses. `state` lines are the run's outcome per iteration; a
// follower ignores them. Everything read is validated: a defect is a CollectiveUsageError naming
// the file and the line. Every node reads the followed file (on a cluster: a shared path).
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strads/runtime.h"

namespace strads {

class DualTrace {
 public:
  using Order = std::shared_ptr<const std::vector<int64_t>>;

  // Loads `in_path` (empty: follow nothing) and, on the leader, creates `out_path` (empty: write
  // nothing) with `workers` as its topology. Throws CollectiveUsageError on a bad input file,
  // UsageError if the output cannot be created.
  DualTrace(const std::string& in_path, const std::string& out_path, bool leader);

  bool following() const { return !in_path_.empty(); }
  // The `workers` line of the followed file, if any.
  std::optional<SyncTopology> followed_workers() const { return in_workers_; }

  // Writes the header; call once, before any record, with the topology SyncFor runs as.
  void Start(SyncTopology workers);

  // The recorded order of the next invocation of the AsyncFor at `site` over [first, last].
  // Throws CollectiveUsageError if the file has none or it is for other bounds.
  Order NextOrder(const std::string& site, int64_t first, int64_t last);

  // Records one AsyncFor invocation (its serial order and the state after it) or SyncFor one.
  void RecordAsyncFor(const std::string& site, int64_t first, int64_t last, const Order& order,
                      uint64_t state);
  void RecordSyncFor(const std::string& site, uint64_t state);

  // Writes the `end` line: the run completed.
  void Finish();

 private:
  struct Entry {
    int64_t first, last;
    Order order;
    int64_t line;  // in the input file
  };
  void Load(const std::string& path);
  void Write(const std::string& text);

  std::string in_path_, out_path_;
  std::optional<SyncTopology> in_workers_;
  std::map<std::string, std::vector<Entry>> in_;               // site -> entries by invocation
  std::map<std::string, size_t> followed_;                     // site -> invocations taken
  std::unique_ptr<std::ofstream> out_;                         // leader only
  std::map<std::string, std::pair<uint64_t, Order>> written_;  // "kind site" -> count, last order
};

}  // namespace strads
