// ThreadPool: work on every thread, and a failure to start a thread that is an error, not an
// abort ("terminate called": a constructor that threw left joinable threads behind).
#include "thread_pool.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

TEST_CASE("thread pool: work runs once on every thread") {
  strads::ThreadPool pool(4);
  std::atomic<int> mask{0};
  pool.RunOnAll([&](int t) { mask.fetch_or(1 << t); });
  CHECK(mask.load() == 0xf);
}

TEST_CASE("thread pool: runs() counts the calls that woke workers") {
  strads::ThreadPool pool(2), alone(1);
  for (int k = 0; k < 3; ++k) {
    pool.RunOnAll([](int) {});
    alone.RunOnAll([](int) {});
  }
  CHECK(pool.runs() == 3);
  CHECK(alone.runs() == 0);  // one thread: the work runs on the caller, nothing is woken
}

// The process's address space is bounded so that thread stacks (8 MB each by default) run out
// after a few threads, in a child process so that the bound does not reach the other tests.
// Exit 0: the constructor threw a runtime_error naming the thread; killed by a signal: it
// terminated the process (or hung, bounded by an alarm).
TEST_CASE("thread pool: a thread that cannot start is an error naming it, not an abort") {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    alarm(30);  // a hang (as without the fix: terminate inside the doctest child) fails too
    long pages = 0;
    if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
      std::fclose(statm);
    }
    const rlim_t in_use = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
    const struct rlimit bound = {in_use + (64 << 20), in_use + (64 << 20)};
    if (pages == 0 || setrlimit(RLIMIT_AS, &bound) != 0) _exit(3);
    try {
      strads::ThreadPool pool(1000);
      _exit(4);  // all 1000 started: the bound did not bite
    } catch (const std::runtime_error& e) {
      _exit(std::strstr(e.what(), "cannot start worker thread") != nullptr ? 0 : 5);
    }
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CAPTURE(status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

// Thousands of short calls, the case the spin serves: each runs once on every thread, and a
// worker's exception still reaches the caller on whichever path (spin or sleep) it waited.
TEST_CASE("thread pool: many short calls run each once on every thread and pass errors on") {
  strads::ThreadPool pool(3);
  std::atomic<int64_t> runs[3] = {0, 0, 0};
  for (int call = 0; call < 20000; ++call) {
    pool.RunOnAll([&](int t) { runs[t].fetch_add(1, std::memory_order_relaxed); });
  }
  for (auto& r : runs) CHECK(r.load() == 20000);
  for (int call = 0; call < 100; ++call) {
    CHECK_THROWS_WITH_AS(pool.RunOnAll([&](int t) {
      if (t == 1 + call % 2) throw std::runtime_error("worker failed");
    }),
                         "worker failed", std::runtime_error);
  }
  int sum = 0;
  pool.RunOnAll([&](int t) {
    if (t == 0) sum = 1;
  });
  CHECK(sum == 1);
}

// The spin is bounded: a worker with nothing to do goes to sleep on its condition variable, and
// wakes from there for the next call. Polls the pool's state, not a clock; the bound (minutes)
// is only there so that a worker that spins forever fails the test instead of hanging it. Two
// threads, so that a 2-core machine spins (with more pool threads than cores nothing spins).
TEST_CASE("thread pool: idle workers stop spinning and sleep, and wake for the next call") {
  strads::ThreadPool pool(2);
  for (int call = 0; call < 3; ++call) {
    pool.RunOnAll([](int) {});
    bool asleep = false;
    for (int poll = 0; poll < 120000 && !asleep; ++poll) {
      asleep = pool.sleeping_workers() == 1;
      if (!asleep) usleep(1000);
    }
    REQUIRE(asleep);
  }
  std::atomic<int> mask{0};
  pool.RunOnAll([&](int t) { mask.fetch_or(1 << t); });
  CHECK(mask.load() == 0x3);
}

// The default threads and the spin decision count the cores this process may run on, not the
// machine's: a thread bound to one core (as by taskset -c or a container's cpuset) sees 1, and
// an unbound one the cores of its mask. hardware_concurrency() said 2 on one core of 2.
TEST_CASE("thread pool: usable cores are those of the affinity mask") {
  cpu_set_t mask;
  REQUIRE(sched_getaffinity(0, sizeof(mask), &mask) == 0);
  CHECK(strads::UsableCores() == CPU_COUNT(&mask));
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  int bound = 0;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) bound = strads::UsableCores();
  }).join();
  CHECK(bound == 1);
}
