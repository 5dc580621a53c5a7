#include "rank_registration.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/sem.h>
#include <unistd.h>

#include <cstdio>

#include "strads/rank_watch.h"

namespace strads::internal {

namespace rw = strads::rank_watch;

namespace {

// For the crash handler, set once before it is installed.
int crash_set = -1;
int crash_rank = -1;
int crash_ranks = 0;
struct sigaction previous[4];
constexpr int kCrashSignals[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT};

// Whether process `pid` has begun to exit (PF_EXITING in /proc/PID/stat's flags, set at the
// start of the kernel's do_exit, long before its semaphores are undone) or is gone.
// Async-signal-safe.
bool Exiting(int pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  // Fields after the command, which ends at the last ')': state is field 3, flags field 9.
  const char* p = nullptr;
  for (ssize_t i = 0; i < n; ++i)
    if (buf[i] == ')') p = buf + i;
  if (p == nullptr) return false;
  int field = 2;
  unsigned long flags = 0;
  char state = 0;
  for (++p; *p != '\0' && field < 9; ++p) {
    if (*p != ' ') continue;
    ++field;
    if (field == 3) state = p[1];
    if (field == 9)
      for (const char* q = p + 1; *q >= '0' && *q <= '9'; ++q) flags = flags * 10 + (*q - '0');
  }
  constexpr unsigned long kPfExiting = 0x4;
  return state == 'Z' || state == 'X' || (flags & kPfExiting) != 0;
}

// When another registered rank (not finished) has begun to exit, this rank's end is that death's
// consequence (MPICH's UCX aborts a rank whose copy from a dead peer fails; a wait for it fails):
// it waits until the exiting rank's death is counted (its alive semaphore at 0, at most 5 s),
// and marks itself finished, so that neither its own end nor the ones Hydra then causes are
// taken for the first death. A dying process's semaphores are undone only after its memory is
// torn down, which on a loaded machine can take longer than the consequence. Async-signal-safe.
void YieldToExitingRank(int set, int rank, int ranks) {
  for (int other = 0; other < ranks && other < rw::kMaxRanks; ++other) {
    if (other == rank || ::semctl(set, rw::AliveSem(other), GETVAL) != 1) continue;
    const int pid = ::semctl(set, rw::EverSem(other), GETPID);  // set by that rank alone
    if (pid <= 0 || !Exiting(pid)) continue;
    sembuf dead = {static_cast<unsigned short>(rw::AliveSem(other)), 0, 0};
    const timespec limit = {5, 0};
    ::semtimedop(set, &dead, 1, &limit);
    sembuf finished = {static_cast<unsigned short>(rw::AliveSem(rank)), 1, 0};
    ::semop(set, &finished, 1);
    return;
  }
}

void OnCrash(int sig) {
  YieldToExitingRank(crash_set, crash_rank, crash_ranks);
  for (int i = 0; i < 4; ++i)
    if (kCrashSignals[i] == sig) ::sigaction(sig, &previous[i], nullptr);
  ::raise(sig);
}

}  // namespace

RankRegistration::RankRegistration(int rank, int ranks) {
  const int set = rw::SetFromEnvironment();
  if (set < 0 || rank < 0 || rank >= rw::kMaxRanks) return;
  sembuf ops[3] = {{static_cast<unsigned short>(rw::AliveSem(rank)), 1, SEM_UNDO},
                   {static_cast<unsigned short>(rw::EverSem(rank)), 1, 0},
                   {static_cast<unsigned short>(rw::kRegistered), 1, 0}};
  if (::semop(set, ops, 3) != 0) return;
  set_ = set;
  rank_ = rank;
  for (int waited_ms = 0; waited_ms < 10000; ++waited_ms) {
    const int waiting = ::semctl(set, rw::AliveSem(rank), GETZCNT);
    if (waiting != 0) break;  // queued, or -1: the set is gone
    ::usleep(1000);
  }
  crash_set = set;
  crash_rank = rank;
  crash_ranks = ranks;
  struct sigaction sa = {};
  sa.sa_handler = OnCrash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NODEFER;
  for (int i = 0; i < 4; ++i) ::sigaction(kCrashSignals[i], &sa, &previous[i]);
}

void RankRegistration::BeforeAbort() {
  if (set_ >= 0) YieldToExitingRank(set_, rank_, crash_ranks);
}

void RankRegistration::Finished() {
  if (set_ < 0) return;
  sembuf op = {static_cast<unsigned short>(rw::AliveSem(rank_)), 1, 0};
  ::semop(set_, &op, 1);
  set_ = -1;
}

}  // namespace strads::internal
