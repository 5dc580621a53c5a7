// A strads program that dies of a signal (CRASH_SIGNAL=SEGV, ABRT or TERM) in the middle of its
// second lock-engine AsyncFor, while both worker threads are appending events. Run with
// --threads 2: thread 0 runs bodies 0..499, each locking x[i]; thread 1 runs bodies 500..999,
// and bodies 501..600 each lock x[i - 500] as well. In the first call the two threads go in
// lockstep: thread 1 starts body 500 + k + 1 only once thread 0 finished body k + 1, and thread 0
// finishes body k + 2 only once thread 1 started body 500 + k + 1, so that each of thread 1's
// grants of x[1..100] is last released by thread 0 at a later acquire than any release of thread
// 0 that thread 1 followed before (the one it learned at its previous logged grant, at most
// body k's): 100 logged grants. The first call's events are handed to the writer at its end but not
// yet written (the writer writes once a second): only the crash path gets them to disk. The
// second call crashes in body 600 while thread 0 may still be recording its bodies. Used by the
// record_flushes_on_* tests (record_crash_signal.sh).
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "strads/strads.h"

int main(int argc, char** argv) {
  const char* name = std::getenv("CRASH_SIGNAL");
  const int crash_signal = !name                            ? SIGSEGV
                           : std::strcmp(name, "TERM") == 0 ? SIGTERM
                           : std::strcmp(name, "ABRT") == 0 ? SIGABRT
                                                            : SIGSEGV;
  return strads::Run(argc, argv, [crash_signal](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<double>(
        rt, 1000, [](int64_t) { return 1.0; }, "x");
    // Every body runs once in reconnaissance (on any thread, in any order), then in each call.
    std::atomic<int> runs_of_600{0}, runs{0};
    // The lockstep of the first call: its runs are those after reconnaissance's 1000.
    std::atomic<int> low_done{0}, high_started{0};
    const auto await = [](const std::atomic<int>& counter, int at_least) {
      // Bounded: with one thread the other's bodies never run meanwhile.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (counter < at_least && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    };
    for (int call = 0; call < 2; ++call) {
      strads::AsyncFor(0, 999, [&](int64_t i) {
        const int run = ++runs;
        x[i] += 1.0;
        if (i > 500) x[i - 500] += 1.0;
        if (call == 0 && run > 1000) {
          if (i >= 1 && i <= 101) await(high_started, static_cast<int>(i));
          if (i < 500) low_done = static_cast<int>(i) + 1;
          if (i >= 500 && i <= 600) {
            high_started = static_cast<int>(i) - 499;
            await(low_done, static_cast<int>(i) - 498);
          }
        }
        if (i == 600 && ++runs_of_600 == 3) {
          if (crash_signal == SIGABRT) std::abort();
          std::raise(crash_signal);
        }
      });
    }
    std::printf("not reached\n");
  });
}
