// InProcessTransport: P logical nodes as threads of one process (`--nodes P`), with the same
// message flow as P MPI ranks: every Send is a message that lands in the receiver's mailbox.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "strads/seam/transport.h"

namespace strads {

// Appended to errors where one logical node waits for another that went elsewhere: under
// --nodes P the nodes share the program's globals, the usual cause.
const char* SharedGlobalsHint();

// The shared post office of the logical nodes of one process.
class InProcessHub {
 public:
  explicit InProcessHub(int nodes);
  int nodes() const { return static_cast<int>(boxes_.size()); }

 private:
  friend class InProcessTransport;
  struct Mailbox {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Message> messages;                        // arrival order
    std::map<std::pair<int, int>, uint64_t> sent_to_me;  // (source, tag) -> count
  };
  void AbortAll(const std::string& why);

  std::vector<std::unique_ptr<Mailbox>> boxes_;
  std::atomic<bool> aborted_{false};
  std::mutex abort_mu_;
  std::string abort_reason_;
};

class InProcessTransport : public Transport {
 public:
  InProcessTransport(InProcessHub& hub, int node) : hub_(hub), node_(node) {}

  int node() const override { return node_; }
  int nodes() const override { return hub_.nodes(); }
  void Send(int dest, Tag tag, std::vector<std::byte> payload) override;
  Message Receive(int source, Tag tag, double timeout_seconds) override;
  bool Poll(int source, Tag tag) override;
  void Abort(const char* why, int exit_code) noexcept override;

 private:
  InProcessHub& hub_;
  int node_;
};

}  // namespace strads
