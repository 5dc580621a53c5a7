// Which rank of a job died first: the contract between `strads run`, which watches, and the
// ranks of the programs it runs, which register (docs/checkpoints.md, "A rank dies").
//
// MPICH's mpiexec ends every rank as soon as one dies and names a PID that is not the dead
// rank's, and a watcher that polls the ranks from outside sees them all gone at once. The
// kernel knows the order: `strads run` creates a System V semaphore set and, for each rank
// that registered, a thread blocks in one semop that needs the rank's "alive" semaphore at 0
// and takes the one "first" token. A rank holds its alive semaphore at 1 with SEM_UNDO, so its
// death (any signal, any exit) drops it to 0, and the kernel completes the waiting semop inside
// that exit, before any other rank can die. Only one semop can take the token: the "died first"
// semaphore it raises names the rank, whether or not the watching thread ever runs again.
//
// Header-only: the tool uses it without linking the core. The ranks' side is
// core/src/rank_registration.h.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace strads::rank_watch {

// "SEMID@HOST": set by `strads run` for its child. Ranks on another host (whose kernel does not
// hold the set) do not register.
inline constexpr const char* kEnv = "STRADS_RANK_WATCH";
inline constexpr int kMaxRanks = 1024;

// The semaphores of the set.
inline constexpr int kFirstToken = 0;                   // 1 until a rank's death takes it
inline constexpr int kRegistered = 1;                   // +1 per rank registration (never undone)
inline int AliveSem(int rank) { return 2 + 3 * rank; }  // 1 while rank runs (SEM_UNDO)
inline int EverSem(int rank) { return 3 + 3 * rank; }   // 1 once rank registered
inline int DiedFirstSem(int rank) { return 4 + 3 * rank; }  // 1 if rank's death took the token
inline constexpr int kSemaphores = 2 + 3 * kMaxRanks;

inline std::string ThisHost() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// The set this process's ranks register with, or -1 (not under `strads run`, or another host).
inline int SetFromEnvironment() {
  const char* text = std::getenv(kEnv);
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  const long id = std::strtol(text, &end, 10);
  if (end == text || *end != '@' || id < 0 || std::string(end + 1) != ThisHost()) return -1;
  return static_cast<int>(id);
}

}  // namespace strads::rank_watch
