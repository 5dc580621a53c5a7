// --time in the strads examples whose AsyncFor plans are made once and run every epoch (sgdmf,
// lda). Epoch 1 runs each plan's reconnaissance, planning and first execution, epoch 2 its
// second execution, and the default --access-check checks every body of both (a port's body
// that follows the values the loop writes strays first in the second execution); from epoch 3
// on it checks a sixty-fourth of the rounds. The mean per epoch is of epochs 3 on, the steady state
// a long run spends its time in, and epochs 1 and 2 are printed on lines of their own, so that
// what the checks cost stays in sight (bench/access_check_bench.sh).
#pragma once

#include <algorithm>
#include <cstdio>

namespace examples {

class EpochTimes {
 public:
  explicit EpochTimes(int epochs) : epochs_(epochs) {}

  // The update time of epoch `epoch` (1 to epochs).
  void Add(int epoch, double seconds) {
    if (epoch == 1) first_ = seconds;
    if (epoch == 2) second_ = seconds;
    if (epoch > SkippedEpochs()) steady_ += seconds;
  }

  // Epoch 1's and 2's lines, then `time per epoch: X ms (epochs A to B)` (the benches read its
  // fourth field).
  void Print() const {
    if (epochs_ < 1) return;
    std::printf("time of epoch 1 (reconnaissance, planning and the first execution): %.3f ms\n",
                1e3 * first_);
    if (epochs_ >= 2)
      std::printf("time of epoch 2 (the second execution, checked whole by default): %.3f ms\n",
                  1e3 * second_);
    const int first_timed = SkippedEpochs() + 1;
    std::printf("time per epoch: %.3f ms (epochs %d to %d)\n",
                1e3 * steady_ / (epochs_ - first_timed + 1), first_timed, epochs_);
  }

 private:
  // Epochs left out of the mean: the two checked ones, as many as leave one epoch in it.
  int SkippedEpochs() const { return std::clamp(epochs_ - 1, 0, 2); }

  int epochs_;
  double first_ = 0, second_ = 0, steady_ = 0;
};

}  // namespace examples
