// The ordered lock protocol (GrantState in ordering.h) and KnownGrants on its lock words.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "strads/seam/known_grants.h"
#include "strads/seam/ordering.h"

using strads::KnownGrants;
using strads::SeamLock;

TEST_CASE("seam lock: an exchange returns the last release, a taker that found it held loses it") {
  SeamLock lock;
  CHECK(lock.Exchange() == 0);  // fresh: thread 0, count 0, free
  // Held: a second exchange does not take it, and overwrites the (unreleased) word.
  CHECK((lock.Exchange() & SeamLock::kHeld) != 0);
  // The holder's release stamps it whole, so nothing a waiter wrote survives.
  lock.word.store(SeamLock::Grant(3, 7), std::memory_order_release);
  const uint64_t last = lock.Exchange();
  CHECK((last & SeamLock::kHeld) == 0);
  CHECK(SeamLock::ThreadOf(last) == 3);
  CHECK(SeamLock::NumberOf(last) == 7);
}

TEST_CASE("seam lock: the ordered protocol excludes, and every release is stamped by its thread") {
  SeamLock lock;
  constexpr int kRounds = 20000;
  long counter = 0;  // guarded by `lock` only
  std::vector<uint64_t> stamps[2];
  auto worker = [&](int t) {
    uint64_t grant = SeamLock::Grant(static_cast<uint64_t>(t), 0);
    for (int i = 0; i < kRounds; ++i) {
      uint64_t last = lock.Exchange();
      if (last & SeamLock::kHeld) last = strads::LiveOrderingPolicy::SpinExchange(lock);
      grant += SeamLock::Grant(0, 1);
      stamps[t].push_back(last);
      ++counter;
      lock.word.store(grant, std::memory_order_release);
    }
  };
  std::thread other(worker, 1);
  worker(0);
  other.join();
  CHECK(counter == 2 * kRounds);
  // Each taker saw a release: its own previous one or the other thread's, never a held word,
  // and each thread's own counts only grow.
  for (int t = 0; t < 2; ++t) {
    uint64_t own = 0;
    for (uint64_t w : stamps[t]) {
      REQUIRE((w & SeamLock::kHeld) == 0);
      REQUIRE(SeamLock::NumberOf(w) <= kRounds);
      if (SeamLock::ThreadOf(w) == t && SeamLock::NumberOf(w) != 0) {
        CHECK(SeamLock::NumberOf(w) > own);
        own = SeamLock::NumberOf(w);
      }
    }
  }
}

TEST_CASE("known grants: a thread follows its own releases and those it learned of") {
  KnownGrants known(3);
  known.StartOperator([](int u) { return uint64_t{10} * static_cast<uint64_t>(u); });
  uint64_t* row = known.row(0);  // thread 0 follows thread 1 up to 10, thread 2 up to 20
  CHECK(KnownGrants::Follows(row, SeamLock::Grant(0, 999)));  // its own
  CHECK(KnownGrants::Follows(row, SeamLock::Grant(1, 10)));
  CHECK_FALSE(KnownGrants::Follows(row, SeamLock::Grant(1, 11)));
  CHECK(KnownGrants::Follows(row, SeamLock::Grant(2, 20) | SeamLock::kHeld));
  CHECK_FALSE(KnownGrants::Follows(row, SeamLock::Grant(2, 21)));
  KnownGrants::Learn(row, SeamLock::Grant(1, 11));
  CHECK(KnownGrants::Follows(row, SeamLock::Grant(1, 11)));
  CHECK_FALSE(KnownGrants::Follows(row, SeamLock::Grant(1, 12)));
  CHECK(KnownGrants::Follows(known.row(1), SeamLock::Grant(0, 0)));  // before thread 0's first
}
