// A strads program that dies of SIGSEGV in the middle of a lock-engine AsyncFor, while its
// lock-grant events are still in the recorder's thread buffer: only the crash handler can get
// them to disk. Run with --threads 2: thread 1 runs bodies 500..999, each taking a fresh lock of
// its own, and a fresh lock counts as last granted to thread 0, so each of its grants is logged:
// 101 of them (bodies 500..600) are buffered when body 600 crashes.
// Used by record_flushes_on_sigsegv.
#include <csignal>
#include <cstdio>

#include "strads/strads.h"

int main(int argc, char** argv) {
  return strads::Run(argc, argv, [](strads::Runtime& rt) {
    auto& x = strads::MakeDVector<double>(
        rt, 1000, [](int64_t) { return 1.0; }, "x");
    int runs_of_600 = 0;  // the first is reconnaissance, the second the real execution
    strads::AsyncFor(0, 999, [&x, &runs_of_600](int64_t i) {
      x[i] += 1.0;
      if (i == 600 && ++runs_of_600 == 2) std::raise(SIGSEGV);
    });
    std::printf("not reached\n");
  });
}
