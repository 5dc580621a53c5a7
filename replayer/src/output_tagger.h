// `strads replay --tag-output` (STRADS_REPLAY_TAG_OUTPUT=1; rr's -M): every line the replayed
// program prints on stdout or stderr starts with "[node K event N] ", N being the index (in
// node-K.log, as `strads trace dump` numbers it) of the next event the printing thread takes:
// the driver thread (also worker 0) takes the driver events and worker 0's lock grants, a worker
// thread its own lock grants. `strads gdb --event N` and `strads break-event N` stop before that
// event, so after the line. A worker with no grant left is tagged with the driver's next event,
// which other threads' writes are not ordered with. "[node K end]": no event left.
//
// The replayed process tags its own lines, at the time of the write, because only it knows
// which thread writes and where that thread is in its log (a reader of the output pipes would
// see the lines late). It hooks the program's output paths when the first node enrolls: C stdio
// (stdout and stderr are replaced by unbuffered fopencookie streams) and std::cout, std::cerr
// and std::clog (their stream buffers are replaced). Each thread assembles its own lines and
// writes each whole line, with its tag, in one write(2) to fd 1 or 2, so the lines of different
// threads and nodes never mix. Output written to fd 1 or 2 directly is not tagged.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

namespace strads {

class OutputTagger {
 public:
  // For a thread of the node (worker `thread`, -1 if it never took a lock grant; `driver`: the
  // node's driver thread), the index of the next event it takes; nullopt when none is left.
  using NextEvent = std::function<std::optional<uint64_t>(int thread, bool driver)>;

  // Whether this run asked for tagged output (STRADS_REPLAY_TAG_OUTPUT=1).
  static bool Requested();

  // `node` tags its lines with `next` from now on; the calling thread is its driver. The first
  // enrolment hooks the output paths.
  static void Enroll(int node, NextEvent next);
  // `node` has no event left (its policy ends): its later lines are tagged "[node K end]".
  static void Withdraw(int node);
  // The calling thread is worker thread `thread` of `node`. A thread never named (a worker that
  // takes no lock grant) is tagged with the process's node when it has only one, else
  // "[node ?]".
  static void NameThread(int node, int thread);
};

}  // namespace strads
