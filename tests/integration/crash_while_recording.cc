// A strads program that dies of SIGSEGV in the middle of a lock-engine AsyncFor, while its
// lock-grant events are still in the recorder's thread buffer: only the crash handler can get
// them to disk. Every body takes a lock of its own, so every grant is a first grant and logged.
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
