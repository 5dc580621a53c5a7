// ThreadPool: the worker threads of one node. The calling (driver) thread is worker 0, so a
// node with one thread spawns nothing and runs loop bodies on the driver thread.
//
// Waits spin briefly before they block: a worker waiting for the next RunOnAll, and the driver
// waiting for the workers at its end, poll for kSpinMicros and then sleep on a condition
// variable. Programs that call RunOnAll many times a second in short rounds (lda's 185 rounds
// a sweep) then skip the sleep and wake-up of each round; idle threads still sleep. Nothing
// spins when the baton is on (only one thread may run) or when the process's pool threads
// outnumber the machine's cores (a spinner would take the core of the thread it waits for).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "strads/internal/body_failure.h"

namespace strads {

// The cores this process may run on: those of its CPU affinity mask (taskset, a container's
// cpuset, mpiexec's binding), at least 1. std::thread::hardware_concurrency() counts the
// machine's online cores instead, so on one core of a larger machine the defaults started a
// thread per machine core and spun waiting for threads that could not run.
int UsableCores();

class ThreadPool {
 public:
  // How long a wait polls before it blocks. Long enough to cover the gap between the rounds of
  // a loop and a round's imbalance, short enough that a thread with nothing to do sleeps.
  static constexpr int kSpinMicros = 100;

  // Throws std::runtime_error, naming the thread, if one cannot be started (none is left).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }
  // Runs work(t) on every worker t in [0, size()) and returns when all are done. The first
  // exception thrown by any worker is rethrown here.
  void RunOnAll(const std::function<void(int)>& work);

  // Workers asleep on the condition variable, waiting for a call (not spinning): a test sees
  // by it that idle workers stop spinning.
  int sleeping_workers() const { return sleeping_workers_.load(std::memory_order_relaxed); }
  // RunOnAll calls that woke the workers (every call on more than one thread): each costs a
  // wake-up and a barrier, so a test sees by it that a step with work for one thread only runs
  // it on the driver. Counted by the driver; read it there.
  uint64_t runs() const { return runs_; }

 private:
  void WorkerLoop(int t);
  void StopWorkers();

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  // Written by the driver before generation_ is bumped (release) and read by a worker after it
  // sees the bump (acquire): no lock needed on the spinning path.
  const std::function<void(int)>* work_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> running_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;          // guarded by mu_
  internal::BodyFailure error_body_;  // guarded by mu_: which body threw error_, if one did
  std::atomic<int> sleeping_workers_{0};
  uint64_t runs_ = 0;  // the driver's alone
};

}  // namespace strads
