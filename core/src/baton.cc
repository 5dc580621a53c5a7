#include "strads/seam/baton.h"

#include <cstdint>

#include "thread_pool.h"  // UsableCores

namespace strads {

std::atomic<bool> Baton::enabled_{false};

namespace {

// A ticket lock: takers are served in arrival order, so a thread that gives the baton up and
// asks for it again at once (a spin wait) cannot starve the thread it waits for. 32-bit
// counters (they wrap harmlessly) so that waiting is a plain futex on `serving`.
std::atomic<uint32_t> next_ticket{0}, serving{0};

// How long a taker spins before it sleeps. A replay hands the baton over at every grant that
// waits for another thread (tens of thousands per second): spinning makes such a hand-over a
// cache-line transfer instead of a futex wake-up and a context switch (about 6 us here).
// Only with a second core (UsableCores): on one, the holder cannot run while the next taker
// spins, so such a spin only delays the hand-over it waits for. (It is rare there: the waits
// that hand the baton on yield first, so the holder usually gives it back before the taker
// asks; two threads handing it over 40 000 times under taskset -c 0 took 2.2 us a hand-over
// with and without the spin.)
constexpr int kSpins = 4000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void Baton::Take() {
  static const int spins = UsableCores() > 1 ? kSpins : 0;
  const uint32_t mine = next_ticket.fetch_add(1, std::memory_order_relaxed);
  for (;;) {
    uint32_t now = serving.load(std::memory_order_acquire);
    // Only the next in line spins: on an oversubscribed machine more spinners would take the
    // cores from the thread that holds the baton.
    for (int i = 0; i < spins && now != mine && mine - now == 1; ++i) {
      CpuRelax();
      now = serving.load(std::memory_order_acquire);
    }
    if (now == mine) return;
    serving.wait(now, std::memory_order_acquire);
  }
}

void Baton::Give() {
  serving.fetch_add(1, std::memory_order_release);
  serving.notify_all();
}

}  // namespace strads
