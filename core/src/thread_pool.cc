#include "thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "strads/seam/baton.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace strads {

namespace {

// Pool threads of the whole process (every in-process node's pool, workers and driver), to
// decide whether spinning can help: with more of them than cores, it only steals cores.
std::atomic<int> process_pool_threads{0};

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spin credit of the process: a wait that spins and sees its event earns one (up to
// kMaxSpinCredit), one that spins in vain loses half. With none left, a wait blocks at once and
// only every kProbeEvery-th one spins, to find out whether spinning pays again. On a loaded
// machine the awaited thread is often not running, a spin mostly fails and only steals a core
// from it (lda on 2 threads beside 30 runnable processes: about 20 % slower spinning always).
constexpr int kMaxSpinCredit = 16;
constexpr uint32_t kProbeEvery = 32;
std::atomic<int> spin_credit{kMaxSpinCredit};
std::atomic<uint32_t> waits_without_credit{0};

// Polls `done` for up to ThreadPool::kSpinMicros if spinning can help; true if it became true.
// It cannot with the baton on (the awaited thread runs only once this one blocks) or with more
// pool threads in the process than cores.
template <class Done>
bool SpinUntil(const Done& done) {
  static const int cores = UsableCores();
  if (Baton::enabled() || process_pool_threads.load(std::memory_order_relaxed) > cores) {
    return done();
  }
  if (spin_credit.load(std::memory_order_relaxed) <= 0 &&
      waits_without_credit.fetch_add(1, std::memory_order_relaxed) % kProbeEvery != 0) {
    return done();
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(ThreadPool::kSpinMicros);
  for (;;) {
    // The clock is read once every 64 polls: a poll costs a few nanoseconds, the clock ~20.
    for (int i = 0; i < 64; ++i) {
      if (done()) {
        if (spin_credit.load(std::memory_order_relaxed) < kMaxSpinCredit)
          spin_credit.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      spin_credit.store(spin_credit.load(std::memory_order_relaxed) / 2, std::memory_order_relaxed);
      return done();
    }
  }
}

}  // namespace

int UsableCores() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) > 0)
    return CPU_COUNT(&mask);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  process_pool_threads.fetch_add(threads_, std::memory_order_relaxed);
  for (int t = 1; t < threads_; ++t) {
    try {
      workers_.emplace_back([this, t] { WorkerLoop(t); });
    } catch (const std::system_error& e) {
      // The destructor does not run for a constructor that throws, and a joinable std::thread
      // that is destroyed terminates the process: stop and join the workers started so far.
      StopWorkers();
      throw std::runtime_error("cannot start worker thread " + std::to_string(t) + " of " +
                               std::to_string(threads_) + " (--threads): " + e.what());
    }
  }
}

ThreadPool::~ThreadPool() { StopWorkers(); }

void ThreadPool::StopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_release);
  }
  start_cv_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
  process_pool_threads.fetch_sub(threads_, std::memory_order_relaxed);
}

void ThreadPool::RunOnAll(const std::function<void(int)>& work) {
  if (threads_ == 1) return work(0);
  ++runs_;
  {
    // Under the lock, so that a worker that checked generation_ under it and found nothing new
    // is already waiting on start_cv_ when the notify below comes.
    std::lock_guard<std::mutex> lock(mu_);
    work_ = &work;
    error_ = nullptr;
    error_body_ = {};
    running_.store(threads_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_cv_.notify_all();  // no system call when every worker is still spinning
  std::exception_ptr mine;
  try {
    work(0);
  } catch (...) {
    mine = std::current_exception();
  }
  {
    Baton::Released released;  // the workers need it
    auto all_done = [this] { return running_.load(std::memory_order_acquire) == 0; };
    if (!SpinUntil(all_done)) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!all_done()) {
        done_cv_.wait(lock, all_done);
      }
    }
    work_ = nullptr;
  }
  if (mine) std::rethrow_exception(mine);
  // Every worker stored its error under mu_ before its last decrement of running_ (release),
  // which the driver has seen (acquire).
  if (error_) {
    internal::AdoptBodyFailure(std::move(error_body_));  // for the loop's note on this thread
    std::rethrow_exception(error_);
  }
}

void ThreadPool::WorkerLoop(int t) {
  uint64_t seen = 0;
  for (;;) {
    auto woken = [&] {
      return stop_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    if (!SpinUntil(woken)) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!woken()) {
        sleeping_workers_.fetch_add(1, std::memory_order_relaxed);
        start_cv_.wait(lock, woken);
        sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    const std::function<void(int)>* work = work_;
    std::exception_ptr error;
    internal::BodyFailure body;
    {
      Baton::Held held;
      try {
        (*work)(t);
      } catch (...) {
        error = std::current_exception();
        body = internal::TakeBodyFailure();
      }
    }
    if (error) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) {
        error_ = error;
        error_body_ = std::move(body);
      }
    }
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // The lock orders this notify after a driver's check of running_ under it: a driver that
      // found workers running is already waiting on done_cv_ when it comes.
      { std::lock_guard<std::mutex> lock(mu_); }
      done_cv_.notify_all();
    }
  }
}

}  // namespace strads
