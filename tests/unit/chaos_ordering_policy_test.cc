// ChaosOrderingPolicy: its delays and yields are counted, so that chaos that injects nothing is
// caught (the chaos tests pass without it: the programs are nondeterministic anyway).
#include "chaos_ordering_policy.h"

#include <doctest/doctest.h>

#include <memory>

namespace {

strads::ChaosOrderingPolicy::Injected RunChaos(uint64_t seed) {
  strads::ChaosOrderingPolicy chaos(std::make_unique<strads::LiveOrderingPolicy>(), seed,
                                    /*node=*/0, /*threads=*/1);
  strads::SeamLock lock;
  for (int64_t task = 0; task < 4096; ++task) {
    chaos.Acquire(lock, 1, 0, task);
    chaos.Release(lock, 1, 0);
  }
  for (uint64_t k = 0; k < 20; ++k) {
    const strads::OperatorSite site{"AsyncFor", "a.cc", 1, k};
    chaos.OperatorBegin(site);
    chaos.OperatorEnd(site);
  }
  return chaos.injected();
}

}  // namespace

TEST_CASE("Chaos: injects delays and yields, as many as its seed says, and counts them") {
  const auto a = RunChaos(1), again = RunChaos(1), other = RunChaos(2);
  MESSAGE("chaos seed 1: " << a.sleeps << " sleeps (" << a.sleep_us << " us), " << a.yields
                           << " yields");
  // 8192 lock calls yield 1 in 16 (~512); 40 operator boundaries sleep 1 in 2 (~20), 4096
  // acquires 1 in 512 (~8): the bound on sleeps fails if either kind of sleep is missing.
  CHECK(a.yields > 256);
  CHECK(a.sleeps > 15);
  CHECK(a.sleep_us > 0);
  CHECK(a.yields == again.yields);
  CHECK(a.sleeps == again.sleeps);
  CHECK(a.sleep_us == again.sleep_us);
  CHECK((a.yields != other.yields || a.sleeps != other.sleeps || a.sleep_us != other.sleep_us));
}
