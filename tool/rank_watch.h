// `strads run`'s watch over the ranks of one attempt: which rank died first
// (core/include/strads/rank_watch.h has the protocol, docs/checkpoints.md the story).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace strads::tool {

class RankWatch {
 public:
  struct Death {
    int rank;
    pid_t pid;
  };

  // Creates the semaphore set and starts watching. If the kernel refuses the set (no System V
  // IPC), the watch is off: env_value() is "" and DiedFirst() nothing.
  RankWatch();
  // Removes the set (which wakes every waiting thread) and joins the threads.
  ~RankWatch();
  RankWatch(const RankWatch&) = delete;
  RankWatch& operator=(const RankWatch&) = delete;

  // The value of STRADS_RANK_WATCH for the child ("" when off).
  std::string env_value() const;
  // After the child ended: the rank whose death came before every other rank's end, if a
  // registered rank died (a rank that returned from its program never counts).
  std::optional<Death> DiedFirst() const;

 private:
  void Dispatch();           // starts a watcher for each rank that registers
  void WatchRank(int rank);  // waits for rank's death and takes the first token with it

  int set_ = -1;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::thread> watchers_;  // guarded by mu_
  std::thread dispatcher_;
};

}  // namespace strads::tool
