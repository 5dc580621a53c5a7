// A strads program that dies of a signal (CRASH_SIGNAL=SEGV, ABRT or TERM) in the middle of its
// second lock-engine AsyncFor, while both worker threads are appending events. Run with
// --threads 2: thread 0 runs bodies 0..499, each locking x[i]; thread 1 runs bodies 500..999.
// In the first call body 500 waits until thread 0 is done, and bodies 501..600 each lock
// x[i - 500] as well, last granted to thread 0 at a later acquire than any thread 1 followed
// before: 100 logged grants. The first call's events are handed to the writer at its end but not
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
    // Body 600 runs three times: reconnaissance (one thread, in order), then each call.
    std::atomic<int> low_bodies{0};
    int runs_of_500 = 0, runs_of_600 = 0;
    for (int call = 0; call < 2; ++call) {
      strads::AsyncFor(0, 999, [&](int64_t i) {
        x[i] += 1.0;
        if (i < 500) ++low_bodies;
        if (i > 500) x[i - 500] += 1.0;
        if (i == 500 && ++runs_of_500 == 2) {
          // Bounded: with one thread, body 500 runs after 0..499 anyway.
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
          while (low_bodies < 1000 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
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
