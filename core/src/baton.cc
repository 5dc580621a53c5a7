#include "strads/baton.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace strads {

std::atomic<bool> Baton::enabled_{false};

namespace {

// A ticket lock: takers are served in arrival order, so a thread that gives the baton up and
// asks for it again at once (a spin wait) cannot starve the thread it waits for.
std::mutex mu;
std::condition_variable cv;
uint64_t next_ticket = 0, serving = 0;

}  // namespace

void Baton::Take() {
  std::unique_lock<std::mutex> lock(mu);
  const uint64_t mine = next_ticket++;
  cv.wait(lock, [mine] { return serving == mine; });
}

void Baton::Give() {
  {
    std::lock_guard<std::mutex> lock(mu);
    ++serving;
  }
  cv.notify_all();
}

}  // namespace strads
