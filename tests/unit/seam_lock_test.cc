// SeamLock, and the ordered lock protocol (ordered_locks.h) on its lock words.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "strads/seam/ordered_locks.h"

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
      if (last & SeamLock::kHeld) last = lock.TakeWhenReleased();
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

TEST_CASE("seam lock: a free word compares as (thread, number), a held one above every free one") {
  using strads::OrderedLocks;
  constexpr uint64_t kLastThread = SeamLock::kMaxThreads - 1;
  CHECK(SeamLock::ThreadOf(SeamLock::Grant(kLastThread, SeamLock::kMaxNumber)) == kLastThread);
  CHECK(SeamLock::NumberOf(SeamLock::Grant(kLastThread, SeamLock::kMaxNumber)) ==
        SeamLock::kMaxNumber);
  CHECK(SeamLock::ThreadOf(SeamLock::Grant(5, 9) | SeamLock::kHeld) == 5);
  CHECK(SeamLock::NumberOf(SeamLock::Grant(5, 9) | SeamLock::kHeld) == 9);
  // A thread's counts do not reach its thread bits before StartOperator refuses them.
  CHECK(OrderedLocks::kMaxAcquires < SeamLock::kMaxNumber);
  std::mt19937_64 rng(5);
  const auto word = [&] {
    return SeamLock::Grant(rng() % 6, rng() % 50) | (rng() % 4 == 0 ? SeamLock::kHeld : 0);
  };
  for (int i = 0; i < 2000; ++i) {
    const uint64_t a = word(), b = word();
    if ((a | b) & SeamLock::kHeld) continue;
    CAPTURE(a);
    CAPTURE(b);
    const auto as_pair = [](uint64_t w) {
      return std::pair(SeamLock::ThreadOf(w), SeamLock::NumberOf(w));
    };
    CHECK((a < b) == (as_pair(a) < as_pair(b)));
  }
}

TEST_CASE(
    "ordered locks: the inline check's key puts own, partner's, others' and held words apart") {
  // The one compare of the inline threads (PartnerKey against 2^48 + the partner's entry) is
  // right only if the key of a free word of the thread's own is below 2^48, of its partner's
  // 2^48 + the number, of any other thread's from 2^49 up, and of any held word from 2^63 up;
  // and the slow path reads the word back from the key (WordOf).
  using Thread = strads::OrderedLocks::UnloggedInlineThread;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t me = rng() % 40, by = rng() % 40, number = rng() % (uint64_t{1} << 48);
    const bool held = rng() % 3 == 0;
    const uint64_t word = SeamLock::Grant(by, number) | (held ? SeamLock::kHeld : 0);
    const uint64_t mine = SeamLock::Grant(me, 0);
    const uint64_t key = Thread::PartnerKey(word, mine);
    CAPTURE(me);
    CAPTURE(word);
    CHECK(Thread::WordOf(key, mine) == word);
    if (held)
      CHECK(key >= uint64_t{1} << 63);
    else if (by == me)
      CHECK(key < uint64_t{1} << 48);
    else if (by == (me ^ 1))
      CHECK(key == (uint64_t{1} << 48 | number));
    else
      CHECK((key >= uint64_t{1} << 49 && key < uint64_t{1} << 63));
  }
}

TEST_CASE("known grants: a thread follows its own releases and those it learned of") {
  KnownGrants known(3);
  known.StartOperator([](int u) { return uint64_t{10} * static_cast<uint64_t>(u); });
  uint64_t* row = known.row(0);  // thread 0 follows thread 1 up to 10, thread 2 up to 20
  CHECK(KnownGrants::Follows(row, SeamLock::Grant(0, 999)));  // its own
  CHECK(KnownGrants::Follows(row, SeamLock::Grant(1, 10)));
  CHECK_FALSE(KnownGrants::Follows(row, SeamLock::Grant(1, 11)));
  CHECK(KnownGrants::Follows(row, SeamLock::Grant(2, 20)));
  CHECK_FALSE(KnownGrants::Follows(row, SeamLock::Grant(2, 21)));
  KnownGrants::Learn(row, SeamLock::Grant(1, 11));
  CHECK(KnownGrants::Follows(row, SeamLock::Grant(1, 11)));
  CHECK_FALSE(KnownGrants::Follows(row, SeamLock::Grant(1, 12)));
  CHECK(KnownGrants::Follows(known.row(1), SeamLock::Grant(0, 0)));  // before thread 0's first
}

namespace {

// Counts what the protocol hands to the policy; can end waits.
class CountingPolicy : public strads::OrderedLocks::Policy {
 public:
  void UnorderedGrant(SeamLock&, uint64_t, int thread, int64_t, uint64_t last) override {
    ++unordered[thread];
    strads::KnownGrants::Learn(locks->state(thread).known, last);  // as Record does
  }
  void Waiting(int, uint64_t, int64_t, double seconds) override {
    if (give_up_after >= 0 && seconds > give_up_after) throw std::runtime_error("gave up");
  }
  strads::OrderedLocks* locks = nullptr;
  long unordered[2] = {0, 0};
  double give_up_after = -1;
};

// Two threads' protocol, started, whose waits give up after 50 ms.
struct GivingUpLocks {
  GivingUpLocks() {
    policy.give_up_after = 0.05;
    policy.locks = &locks;
    locks.StartOperator();
  }
  CountingPolicy policy;
  strads::OrderedLocks locks{2, policy};
};

}  // namespace

TEST_CASE("ordered locks: exclusion, counts, and only grants no logged one orders are unordered") {
  CountingPolicy policy;
  strads::OrderedLocks locks(2, policy);
  policy.locks = &locks;
  locks.StartOperator();
  SeamLock lock;
  constexpr int kRounds = 20000;
  long counter = 0;
  auto worker = [&](int t) {
    strads::OrderedLocks::InlineThread me(locks, t);
    for (int i = 0; i < kRounds; ++i) {
      me.Acquire(lock, 7, i);
      ++counter;
      me.Release(lock);
    }
  };
  std::thread other(worker, 1);
  worker(0);
  other.join();
  CHECK(counter == 2 * kRounds);
  CHECK(locks.acquires(0) == kRounds);
  CHECK(locks.acquires(1) == kRounds);
  // A handover to the other thread is unordered at most once per handover, and a run of a
  // thread's own grants never is.
  CHECK(policy.unordered[0] + policy.unordered[1] <= 2 * kRounds);
  // Every thread's change is reported once per operator end.
  int reports = 0;
  locks.ReportChangedThreads([&](int, uint64_t acquires, uint64_t) {
    CHECK(acquires == kRounds);
    ++reports;
  });
  locks.ReportChangedThreads([&](int, uint64_t, uint64_t) { ++reports; });
  CHECK(reports == 2);
}

TEST_CASE("ordered locks: a held lock's taker tells the policy it waits, which may end the wait") {
  GivingUpLocks giving_up;
  strads::OrderedLocks& locks = giving_up.locks;
  SeamLock lock;
  locks.Acquire(lock, 1, 0, 0);
  CHECK_THROWS_WITH_AS(locks.Acquire(lock, 1, 1, 0), "gave up", std::runtime_error);
  locks.Release(lock, 0);
  CHECK((lock.word.load() & SeamLock::kHeld) == 0);
  CHECK(SeamLock::ThreadOf(lock.word.load()) == 0);
}

TEST_CASE("ordered locks: a thread with no logged grant ahead counts, folds and logs as any") {
  // The same acquires, of locks last released by the other thread, through OrderedLocks::Acquire
  // (which folds each acquire into the digest) and through each inline variant (which count only;
  // the lock engine folds the run of acquires its plan fixes at once). All must leave the same
  // lock words, counts and digests, and hand the same grants to the policy: Record runs the
  // unlogged variant, Replay the other, a chaos recording the first, and replay checks digests.
  struct Outcome {
    std::vector<uint64_t> words;
    uint64_t acquires, digest;
    long unordered;
  };
  const auto lock_id = [](int i) { return uint64_t{7} << 40 | static_cast<uint64_t>(i); };
  strads::AcquireRun acquires;
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 4; ++i) acquires.Add(lock_id(i), static_cast<uint64_t>(10 * round + i));
  // Runs drive(locks, lock, acquire(i, round)) on thread 0's side, each of the 4 locks last
  // released by thread 1, and takes the outcome.
  const auto run = [&](const auto& drive) {
    CountingPolicy policy;
    strads::OrderedLocks locks(2, policy);
    policy.locks = &locks;
    std::vector<SeamLock> lock(4);
    for (int i = 0; i < 4; ++i) lock[i].Release(SeamLock::Grant(1, 1));  // thread 1's release
    locks.StartOperator();
    drive(locks, lock);
    Outcome out{{}, locks.acquires(0), locks.state(0).digest, policy.unordered[0]};
    for (const SeamLock& l : lock) out.words.push_back(l.word.load());
    return out;
  };
  const Outcome folded = run([&](strads::OrderedLocks& locks, std::vector<SeamLock>& lock) {
    for (int round = 0; round < 3; ++round)
      for (int i = 0; i < 4; ++i) {
        locks.Acquire(lock[i], lock_id(i), 0, 10 * round + i);
        locks.Release(lock[i], 0);
      }
  });
  const auto inline_thread = [&]<class Thread>(std::type_identity<Thread>) {
    return run([&](strads::OrderedLocks& locks, std::vector<SeamLock>& lock) {
      Thread me(locks, 0);
      for (int round = 0; round < 3; ++round)
        for (int i = 0; i < 4; ++i) {
          me.Acquire(lock[i], lock_id(i), 10 * round + i);
          me.Release(lock[i]);
        }
      me.Fold(acquires);
    });
  };
  const Outcome any = inline_thread(std::type_identity<strads::OrderedLocks::InlineThread>{});
  const Outcome unlogged =
      inline_thread(std::type_identity<strads::OrderedLocks::UnloggedInlineThread>{});
  CHECK(folded.acquires == 12);
  CHECK(folded.unordered == 1);  // thread 1's count 1 is after the start, learned once
  for (const Outcome* o : {&any, &unlogged}) {
    CHECK(o->acquires == folded.acquires);
    CHECK(o->digest == folded.digest);
    CHECK(o->unordered == folded.unordered);
    CHECK(o->words == folded.words);
  }
  // The digest is the fold of every acquire in order (FORMAT.md), so it can tell them apart.
  uint64_t digest = 0;
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 4; ++i)
      digest = strads::FoldAcquire(digest, lock_id(i), static_cast<uint64_t>(10 * round + i));
  CHECK(folded.digest == digest);
}

TEST_CASE("ordered locks: a logged grant learns the latest release its releaser published") {
  // Thread 1 runs two bodies, on lock a and then b, each published after its release; thread 0
  // then takes a (last released at thread 1's count 1: unordered) and b (count 2). Learning
  // thread 1's published count 2 at a's grant, as Record does, leaves b's grant implied.
  struct LearningPolicy : CountingPolicy {
    void UnorderedGrant(SeamLock&, uint64_t, int thread, int64_t, uint64_t last) override {
      ++unordered[thread];
      KnownGrants::Learn(locks->state(thread).known, locks->LatestRelease(last));
    }
  } policy;
  strads::OrderedLocks locks(2, policy);
  policy.locks = &locks;
  locks.StartOperator();
  SeamLock a, b;
  {
    strads::OrderedLocks::UnloggedInlineThread one(locks, 1);
    one.Acquire(a, 1, 10);
    one.Release(a);
    one.Publish();
    CHECK(locks.LatestRelease(SeamLock::Grant(1, 0)) == SeamLock::Grant(1, 1));
    one.Acquire(b, 2, 11);
    one.Release(b);
    one.Publish();
  }
  CHECK(locks.LatestRelease(SeamLock::Grant(1, 1)) == SeamLock::Grant(1, 2));
  CHECK(locks.LatestRelease(SeamLock::Grant(1, 3)) == SeamLock::Grant(1, 3));  // never lower
  {
    strads::OrderedLocks::UnloggedInlineThread zero(locks, 0);
    zero.Acquire(a, 1, 20);
    zero.Release(a);
    zero.Acquire(b, 2, 20);
    zero.Release(b);
  }
  CHECK(policy.unordered[0] == 1);
  CHECK(locks.state(0).known[1] == SeamLock::Grant(1, 2));
}

TEST_CASE("ordered locks: a replayed logged grant awaits its releaser's published release") {
  GivingUpLocks giving_up;
  strads::OrderedLocks& locks = giving_up.locks;
  SeamLock lock;
  locks.AwaitPublished(SeamLock::Grant(1, 0), 0, 7, 0);  // published before any acquire
  locks.Acquire(lock, 7, 1, 0);  // thread 1's count 1, through the non-inline path
  CHECK_THROWS_WITH_AS(locks.AwaitPublished(SeamLock::Grant(1, 1), 0, 7, 0), "gave up",
                       std::runtime_error);  // taken, not yet released
  locks.Release(lock, 1);
  locks.AwaitPublished(SeamLock::Grant(1, 1), 0, 7, 0);
  CHECK_THROWS_WITH_AS(locks.AwaitPublished(SeamLock::Grant(1, 2), 0, 7, 0), "gave up",
                       std::runtime_error);
  // A thread restored from a checkpoint has published its count there.
  locks.RestoreThread(1, 5, 0);
  locks.AwaitPublished(SeamLock::Grant(1, 5), 0, 7, 0);
}

TEST_CASE("ordered locks: an inline thread logs exactly the grants its row does not order") {
  // The inline threads decide "implied" in one compare for the thread's own and its partner's
  // releases and go to the row for any other thread's: random releases by every thread, on
  // 2 to 5 threads (an odd count leaves the last thread with no partner), must hand the policy
  // exactly the grants KnownGrants::Follows does not order, as a copy of the row decides.
  class Recording : public strads::OrderedLocks::Policy {
   public:
    void UnorderedGrant(SeamLock&, uint64_t lock_id, int thread, int64_t task,
                        uint64_t last) override {
      lasts.push_back(last);
      CHECK(lock_id == 1000 + static_cast<uint64_t>(task));  // the acquire's, off the fast path
      KnownGrants::Learn(locks->state(thread).known, last);
    }
    strads::OrderedLocks* locks = nullptr;
    std::vector<uint64_t> lasts;
  };
  std::mt19937_64 rng(11);
  const auto check = [&]<class Thread>(std::type_identity<Thread>, int threads, int me) {
    Recording policy;
    strads::OrderedLocks locks(threads, policy);
    policy.locks = &locks;
    for (int u = 0; u < threads; ++u) locks.RestoreThread(u, 5 + 3 * static_cast<uint64_t>(u), 0);
    locks.StartOperator();
    std::vector<uint64_t> row(locks.state(me).known, locks.state(me).known + threads);
    std::vector<uint64_t> expected;
    Thread inline_thread(locks, me);
    for (int i = 0; i < 400; ++i) {
      const auto by = static_cast<uint64_t>(rng() % static_cast<uint64_t>(threads));
      SeamLock lock;
      lock.Release(SeamLock::Grant(by, rng() % 40));
      const uint64_t last = lock.word.load();
      if (!KnownGrants::Follows(row.data(), last)) {
        expected.push_back(last);
        KnownGrants::Learn(row.data(), last);
      }
      const uint64_t lock_id = 1000 + static_cast<uint64_t>(i);
      inline_thread.Acquire(lock, lock_id, i);
      inline_thread.Release(lock);
    }
    CHECK(policy.lasts == expected);
    return expected.size();
  };
  for (int threads = 2; threads <= 5; ++threads)
    for (int me = 0; me < threads; ++me) {
      CAPTURE(threads);
      CAPTURE(me);
      const size_t logged =
          check(std::type_identity<strads::OrderedLocks::InlineThread>{}, threads, me);
      CHECK(logged > 0);  // the case has grants to log and grants to imply
      CHECK(logged < 400);
      check(std::type_identity<strads::OrderedLocks::UnloggedInlineThread>{}, threads, me);
    }
}

TEST_CASE("ordered locks: an inline thread waits for a held lock, whoever released it last") {
  // A held word keeps the last release it was taken after (TakeWhenReleased's take), so it
  // may name the taker's own thread or its partner's with a number the check would imply: the
  // held bit must send it off the fast path all the same, to wait (here: until the policy's
  // first Waiting call, after about a thousand tries, gives up), and the lock must stay held.
  // Few cases: each wait yields about a thousand times, slow on a loaded machine.
  const auto check = [&]<class Thread>(std::type_identity<Thread>, int threads, int me, int by) {
    CAPTURE(threads);
    CAPTURE(me);
    CAPTURE(by);
    CountingPolicy policy;
    policy.give_up_after = 0;
    strads::OrderedLocks locks(threads, policy);
    policy.locks = &locks;
    for (int u = 0; u < threads; ++u) locks.RestoreThread(u, 10, 0);
    locks.StartOperator();
    SeamLock lock;  // held, taken after `by`'s acquire 3 (at or before the row's entry, 10)
    lock.word.store(SeamLock::Grant(static_cast<uint64_t>(by), 3) | SeamLock::kHeld);
    Thread inline_thread(locks, me);
    CHECK_THROWS_WITH_AS(inline_thread.Acquire(lock, 1, 0), "gave up", std::runtime_error);
    CHECK((lock.word.load() & SeamLock::kHeld) != 0);
  };
  // Its own release and its partner's, on 2 threads; its own as the last of 3 (no partner).
  for (const auto& [threads, me, by] :
       {std::tuple{2, 0, 0}, std::tuple{2, 0, 1}, std::tuple{2, 1, 1}, std::tuple{2, 1, 0},
        std::tuple{3, 2, 2}}) {
    check(std::type_identity<strads::OrderedLocks::InlineThread>{}, threads, me, by);
    check(std::type_identity<strads::OrderedLocks::UnloggedInlineThread>{}, threads, me, by);
  }
}

TEST_CASE("ordered locks: an inline thread hands exactly its logged acquires to TakeLogged") {
  // Replay sets next_logged, the acquire number of the thread's next logged grant; the inline
  // thread must call TakeLogged for that acquire and no other, after any count so far.
  class Logged : public strads::OrderedLocks::Policy {
   public:
    void UnorderedGrant(SeamLock&, uint64_t, int, int64_t, uint64_t) override {}
    void TakeLogged(SeamLock& lock, uint64_t, int thread, int64_t task) override {
      strads::GrantState& s = locks->state(thread);
      s.Count();
      taken.push_back(s.acquires());
      CHECK(static_cast<uint64_t>(task) == s.acquires());
      locks->Take(lock, SeamLock::kAnyRelease, thread, 1, task);
      s.next_logged = next < ahead.size() ? ahead[next++] : 0;
    }
    strads::OrderedLocks* locks = nullptr;
    std::vector<uint64_t> ahead, taken;
    size_t next = 0;
  };
  for (uint64_t start : {uint64_t{0}, uint64_t{7}}) {
    CAPTURE(start);
    Logged policy;
    strads::OrderedLocks locks(3, policy);
    policy.locks = &locks;
    locks.RestoreThread(1, start, 0);
    locks.StartOperator();
    policy.ahead = {start + 4, start + 5, start + 9};
    locks.state(1).next_logged = start + 1;
    {
      strads::OrderedLocks::InlineThread me(locks, 1);
      SeamLock lock;
      for (uint64_t a = start + 1; a <= start + 12; ++a) {
        me.Acquire(lock, 1, static_cast<int64_t>(a));
        me.Release(lock);
      }
    }
    CHECK(policy.taken == std::vector<uint64_t>{start + 1, start + 4, start + 5, start + 9});
    CHECK(locks.acquires(1) == start + 12);
  }
}

TEST_CASE("acquire runs: folded ahead from any digest, split or whole, as acquire by acquire") {
  std::mt19937_64 rng(3);
  std::vector<std::pair<uint64_t, uint64_t>> acquires(1000);
  for (auto& [id, task] : acquires) id = rng(), task = rng() % 100000;
  const uint64_t start = rng();
  uint64_t one_by_one = start;
  strads::AcquireRun whole, head, tail;
  for (size_t i = 0; i < acquires.size(); ++i) {
    const auto [id, task] = acquires[i];
    one_by_one = strads::FoldAcquire(one_by_one, id, task);
    whole.Add(id, task);
    (i < 400 ? head : tail).Add(id, task);
  }
  CHECK(whole.Apply(start) == one_by_one);
  CHECK(tail.Apply(head.Apply(start)) == one_by_one);
  // The order counts: two acquires swapped give another digest.
  strads::AcquireRun swapped;
  for (size_t i = 0; i < acquires.size(); ++i) {
    const size_t j = i == 10 ? 11 : i == 11 ? 10 : i;
    swapped.Add(acquires[j].first, acquires[j].second);
  }
  CHECK(swapped.Apply(start) != one_by_one);
}
