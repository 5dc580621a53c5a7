#include "in_process_transport.h"

#include <chrono>

#include "strads/errors.h"
#include "strads/seam/baton.h"
#include "strads/seam/wait_bound.h"

namespace strads {

// Logical nodes are threads of one process: what differs from mpiexec is that they share the
// program's globals, the usual reason why one node waits for another that went elsewhere.
const char* SharedGlobalsHint() {
  return "; under --nodes the logical nodes are threads of one process and share its global and "
         "static variables: a global the program writes (a model, a random generator, a counter) "
         "is a likely cause. Keep such state in DDSs or in locals of the driver lambda, or check "
         "with mpiexec -n P";
}

InProcessHub::InProcessHub(int nodes) {
  for (int p = 0; p < nodes; ++p) boxes_.push_back(std::make_unique<Mailbox>());
}

void InProcessHub::AbortAll(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(abort_mu_);
    if (aborted_.load()) return;
    abort_reason_ = why;
    aborted_.store(true);
  }
  for (auto& box : boxes_) {
    std::lock_guard<std::mutex> lock(box->mu);
    box->cv.notify_all();
  }
}

void InProcessTransport::Send(int dest, Tag tag, std::vector<std::byte> payload) {
  InProcessHub::Mailbox& box = *hub_.boxes_.at(dest);
  std::lock_guard<std::mutex> lock(box.mu);
  Message m;
  m.source = node_;
  m.tag = tag;
  m.seq = box.sent_to_me[{node_, static_cast<int>(tag)}]++;
  m.payload = std::move(payload);
  box.messages.push_back(std::move(m));
  box.cv.notify_all();
}

Message InProcessTransport::Receive(int source, Tag tag, double timeout_seconds) {
  InProcessHub::Mailbox& box = *hub_.boxes_.at(node_);
  const auto deadline = DeadlineAfter(timeout_seconds);
  auto match = [&] {
    for (auto it = box.messages.begin(); it != box.messages.end(); ++it)
      if (it->tag == tag && (source == kAnySource || it->source == source)) return it;
    return box.messages.end();
  };
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(box.mu);
      const auto it = match();
      if (it != box.messages.end()) {
        Message m = std::move(*it);
        box.messages.erase(it);
        return m;
      }
    }
    // Wait without the baton; take it back only after letting go of the mailbox.
    Baton::Released released;
    std::unique_lock<std::mutex> lock(box.mu);
    const bool ready = box.cv.wait_until(
        lock, deadline, [&] { return match() != box.messages.end() || hub_.aborted_.load(); });
    if (hub_.aborted_.load()) throw AbortedError("another node failed");
    if (!ready)
      throw TimeoutError(ReceiveTimeoutMessage(node_, timeout_seconds, tag, source) +
                         SharedGlobalsHint());
  }
}

bool InProcessTransport::Poll(int source, Tag tag) {
  InProcessHub::Mailbox& box = *hub_.boxes_[node_];
  std::lock_guard<std::mutex> lock(box.mu);
  for (const Message& m : box.messages)
    if (m.tag == tag && (source == kAnySource || m.source == source)) return true;
  return false;
}

void InProcessTransport::Abort(const char* why, int) noexcept {
  try {
    hub_.AbortAll(why);
  } catch (...) {
  }
}

}  // namespace strads
