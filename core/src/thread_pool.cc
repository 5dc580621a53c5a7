#include "thread_pool.h"

#include <stdexcept>
#include <string>
#include <system_error>

#include "strads/seam/baton.h"

namespace strads {

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
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
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
}

void ThreadPool::RunOnAll(const std::function<void(int)>& work) {
  if (threads_ == 1) return work(0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    work_ = &work;
    running_ = threads_ - 1;
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  std::exception_ptr mine;
  try {
    work(0);
  } catch (...) {
    mine = std::current_exception();
  }
  {
    Baton::Released released;  // the workers need it
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [this] { return running_ == 0; });
    work_ = nullptr;
  }
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

void ThreadPool::WorkerLoop(int t) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* work;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      work = work_;
    }
    std::exception_ptr error;
    {
      Baton::Held held;
      try {
        (*work)(t);
      } catch (...) {
        error = std::current_exception();
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (error && !error_) error_ = error;
    if (--running_ == 0) done_cv_.notify_all();
  }
}

}  // namespace strads
