// The exceptions the runtime throws. Every message names the node and what was wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace strads {

// Wrong use of the API or bad input (flags, data files): the program's fault, not the runtime's.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input that every node detects alike (collective operators agree on errors), so that
// only one node reports it and all exit with code 2.
class CollectiveUsageError : public UsageError {
 public:
  using UsageError::UsageError;
};

// A bounded wait ran out: a peer is dead, stuck, or the nodes disagree about what to do next.
class TimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Replay: the program asked for an ordering event the recording does not have next (the
// program, its input, its flags or the node or thread count changed). The message is the
// divergence report. `collective`: every node detected it alike (only one reports it).
class DivergenceError : public std::runtime_error {
 public:
  explicit DivergenceError(const std::string& report, bool collective = false)
      : std::runtime_error(report), collective_(collective) {}
  bool collective() const { return collective_; }

 private:
  bool collective_;
};

// Another node failed first; this node stops without a report of its own.
class AbortedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace strads
