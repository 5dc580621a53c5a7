// ThreadPool: the worker threads of one node. The calling (driver) thread is worker 0, so a
// node with one thread spawns nothing and runs loop bodies on the driver thread.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strads {

class ThreadPool {
 public:
  // Throws std::runtime_error, naming the thread, if one cannot be started (none is left).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }
  // Runs work(t) on every worker t in [0, size()) and returns when all are done. The first
  // exception thrown by any worker is rethrown here.
  void RunOnAll(const std::function<void(int)>& work);

 private:
  void WorkerLoop(int t);
  void StopWorkers();

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* work_ = nullptr;
  uint64_t generation_ = 0;
  int running_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace strads
