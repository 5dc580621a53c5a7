#include "rank_watch.h"

#include <sys/ipc.h>
#include <sys/sem.h>

#include <cerrno>
#include <ctime>

#include "strads/rank_watch.h"

namespace strads::tool {

namespace rw = strads::rank_watch;

namespace {

// semctl's fourth argument, which the caller defines (semctl(2)).
union SemArg {
  int val;
  semid_ds* buf;
  unsigned short* array;
};

// A semop of `n` operations; false when it failed (the set was removed: the watch is over).
bool SemOp(int set, sembuf* ops, size_t n, const timespec* timeout = nullptr) {
  for (;;) {
    if (::semtimedop(set, ops, n, timeout) == 0) return true;
    if (errno != EINTR) return false;
  }
}

}  // namespace

RankWatch::RankWatch() {
  set_ = ::semget(IPC_PRIVATE, rw::kSemaphores, IPC_CREAT | 0600);
  if (set_ < 0) return;
  SemArg one{.val = 1};
  ::semctl(set_, rw::kFirstToken, SETVAL, one);
  dispatcher_ = std::thread([this] { Dispatch(); });
}

RankWatch::~RankWatch() {
  if (set_ < 0) return;
  stopping_ = true;
  ::semctl(set_, 0, IPC_RMID);
  dispatcher_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& t : watchers_) t.join();
}

std::string RankWatch::env_value() const {
  return set_ < 0 ? "" : std::to_string(set_) + "@" + rw::ThisHost();
}

void RankWatch::Dispatch() {
  std::vector<bool> watched(rw::kMaxRanks, false);
  std::vector<unsigned short> values(rw::kSemaphores);
  const timespec tick = {0, 200'000'000};  // to notice stopping_ without a registration
  while (!stopping_) {
    sembuf take = {static_cast<unsigned short>(rw::kRegistered), -1, 0};
    if (!SemOp(set_, &take, 1, &tick)) {
      if (errno == EAGAIN) continue;  // the tick
      return;                         // removed
    }
    SemArg all{.array = values.data()};
    if (::semctl(set_, 0, GETALL, all) != 0) return;
    for (int rank = 0; rank < rw::kMaxRanks; ++rank) {
      if (watched[rank] || values[rw::EverSem(rank)] == 0) continue;
      watched[rank] = true;
      std::lock_guard<std::mutex> lock(mu_);
      watchers_.emplace_back([this, rank] { WatchRank(rank); });
    }
  }
}

void RankWatch::WatchRank(int rank) {
  // Completed by the kernel inside the exit of the first watched rank to die; the others stay
  // queued (their alive semaphore is 0 too, but the token is gone) until the set is removed.
  sembuf ops[3] = {{static_cast<unsigned short>(rw::AliveSem(rank)), 0, 0},
                   {static_cast<unsigned short>(rw::kFirstToken), -1, 0},
                   {static_cast<unsigned short>(rw::DiedFirstSem(rank)), 1, 0}};
  SemOp(set_, ops, 3);
}

std::optional<RankWatch::Death> RankWatch::DiedFirst() const {
  if (set_ < 0) return std::nullopt;
  std::vector<unsigned short> values(rw::kSemaphores);
  SemArg all{.array = values.data()};
  if (::semctl(set_, 0, GETALL, all) != 0) return std::nullopt;
  for (int rank = 0; rank < rw::kMaxRanks; ++rank) {
    if (values[rw::DiedFirstSem(rank)] == 0) continue;
    // Only the rank operated on its "ever" semaphore (a completed semop records its caller's
    // pid on every semaphore it names, the watcher's wait on "alive" too).
    const int pid = ::semctl(set_, rw::EverSem(rank), GETPID);
    return Death{rank, static_cast<pid_t>(pid)};
  }
  return std::nullopt;
}

}  // namespace strads::tool
