// The baton: with RuntimeOptions::serialize (`--serialize`, the default of single-process
// replay) at most one thread of the process runs strads code at a time: a node's driver, one
// of its workers, another node's driver, ... A thread hands the baton on only where it would
// wait for another thread (a message, a lock grant, its workers), in FIFO order, so that a
// debugger's breakpoints and steps see a serial program. Disabled, every call is a no-op.
//
// Contract for code that waits: a thread that holds the baton must release it (Released) for
// the whole wait, and must not hold any other mutex while it takes the baton back.
#pragma once

#include <atomic>

namespace strads {

class Baton {
 public:
  // Turns the baton on for the rest of the process. Call before the nodes start.
  static void Enable(bool on = true) { enabled_.store(on, std::memory_order_release); }
  static bool enabled() { return enabled_.load(std::memory_order_relaxed); }

  // Blocks until this thread has the baton (FIFO among takers).
  static void Take();
  static void Give();

  // Holds the baton for a scope (a thread's whole run).
  class Held {
   public:
    Held() : on_(enabled()) {
      if (on_) Take();
    }
    ~Held() {
      if (on_) Give();
    }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    bool on_;
  };

  // Gives the baton up for a scope (a wait) and takes it back at its end.
  class Released {
   public:
    Released() : on_(enabled()) {
      if (on_) Give();
    }
    ~Released() {
      if (on_) Take();
    }
    Released(const Released&) = delete;
    Released& operator=(const Released&) = delete;

   private:
    bool on_;
  };

 private:
  static std::atomic<bool> enabled_;
};

}  // namespace strads
