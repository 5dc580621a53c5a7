// A strads program that dies of SIGSEGV (with CRASH_SIGNAL=TERM: of SIGTERM) in the middle of a
// lock-engine AsyncFor, while its lock-grant events are still in the recorder's thread buffer:
// only the recorder's signal handler can get them to disk. Run with --threads 2: thread 0 runs
// bodies 0..499, each locking x[i]; thread 1 runs bodies 500..999. Body 500 waits until thread 0
// is done, and bodies 501..600 each lock x[i - 500] as well, last granted to thread 0 at a later
// acquire than any thread 1 followed before: 100 logged grants are buffered when body 600
// crashes. Used by record_flushes_on_sigsegv and record_flushes_on_sigterm.
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
  const int crash_signal = name && std::strcmp(name, "TERM") == 0 ? SIGTERM : SIGSEGV;
  return strads::Run(argc, argv, [crash_signal](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<double>(
        rt, 1000, [](int64_t) { return 1.0; }, "x");
    // Every body runs twice: reconnaissance (one thread, in order), then the real execution.
    std::atomic<int> low_bodies{0};
    int runs_of_500 = 0, runs_of_600 = 0;
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
      if (i == 600 && ++runs_of_600 == 2) std::raise(crash_signal);
    });
    std::printf("not reached\n");
  });
}
