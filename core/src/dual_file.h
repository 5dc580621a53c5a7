// Reading a dual-test file (the format: strads/dual_trace.h) with every line validated. No MPI,
// no Runtime: the runtime's --dual-in and `strads dualtest` read through this one parser.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace strads {

// A dual-test file that cannot be read or is not valid. The message names the file and, for a
// defect in it, the line: "run.dual:5: loop index '-x' is not an integer".
class DualFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DualFile {
  // The `workers` line: SyncFor ran as `nodes` x `threads`.
  struct Workers {
    int nodes = 1;
    int threads = 1;
  };
  // One AsyncFor invocation: the loop range and its serial order.
  struct Order {
    int64_t first = 0, last = 0;
    std::shared_ptr<const std::vector<int64_t>> indices;  // shared with a `same` invocation
    int64_t line = 0;                                     // of the `asyncfor` record
  };
  // A `state` line: the state after one loop invocation.
  struct State {
    std::string loop;  // "asyncfor" or "syncfor"
    int64_t invocation = 0;
    uint64_t digest = 0;  // FNV-1a of what the loop wrote
    std::string site;     // FILE:LINE
  };

  // What Read accepts of a file's end.
  enum class Ending {
    kComplete,  // the `end` line, written as the run finished
    kStopped,   // also a run that stopped (its error, a kill): the records before the missing
                // `end` line or a record cut short; other defects still throw
  };

  // Reads and validates `path`. Throws DualFileError.
  static DualFile Read(const std::string& path, Ending ending = Ending::kComplete);

  bool ended = false;  // the `end` line was read

  std::optional<Workers> workers;
  std::map<std::string, std::vector<Order>> orders;  // AsyncFor site -> invocations in order
  std::vector<State> states;                         // in file order
};

}  // namespace strads
