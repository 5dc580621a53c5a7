// The exit codes of strads programs (strads::Run) and of the `strads` tool. They are the same
// numbers, so that `strads record`, `strads replay` and `strads dualtest` can pass a program's
// status through and a script can tell the cases apart.
#pragma once

namespace strads {

enum class ExitCode : int {
  kOk = 0,          // the run finished; a replay also reproduced its recording
  kFailed = 1,      // a node failed: an error in the program or the runtime, a timeout
  kBadInput = 2,    // bad flags, data, trace or dual-test files: the user's to fix
  kDivergence = 3,  // replay: the program did not do what the recording did
};

constexpr int ToInt(ExitCode code) { return static_cast<int>(code); }

}  // namespace strads
