// Multinomial logistic regression on strads: plain SGD on the softmax cross-entropy, run
// data-parallel with strads::SyncFor (BSP by default, --sync ssp|hybrid).
//
// Data: a seeded synthetic set (each sample a pure function of (seed, index), so every node
// generates its own part) or a LIBSVM file (--data FILE, "label idx:val idx:val ...", labels
// 0 .. classes-1, feature ids 1 .. features). Model: one row of kMaxClasses weights per
// feature plus a bias row. Per epoch node 0 prints the training loss (mean cross-entropy) and
// accuracy, folded in a fixed order; at the end the FNV-1a checksum of the weights. Under BSP
// the output depends only on the data, the flags, the number of nodes and --threads.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "common/libsvm.h"
#include "common/number_flags.h"
#include "common/quote.h"
#include "common/sgd_kernel.h"
#include "strads/flag_checks.h"
#include "strads/strads.h"
#include "strads/sync_for.h"

namespace {

constexpr int kMaxClasses = 16;  // capacity of a weight row
using Row = std::array<float, kMaxClasses>;

using examples::kMaxNnz;
using examples::ParseLibsvm;
using examples::Sample;

struct DataSpec {
  int64_t samples = 100000;
  int classes = 10;
  int64_t features = 1000;
  int nnz = 16;
  double signal = 0.3;  // probability that a feature is drawn from the label's features
  uint64_t seed = 7;
};

// Sample `i` of the synthetic set: label uniform in [0, classes); each of the nnz features is,
// with probability `signal`, one of the label's features (ids j with j % classes == label),
// otherwise uniform in [0, features); values uniform in [0.5, 1.5).
Sample SampleAt(const DataSpec& spec, int64_t i) {
  using examples::SplitMix64;
  const uint64_t key =
      SplitMix64(spec.seed ^ (uint64_t{9} << 56)) + static_cast<uint64_t>(i) * (kMaxNnz + 1);
  auto below = [](uint64_t h, int64_t n) {
    return static_cast<int64_t>(((h >> 32) * static_cast<uint64_t>(n)) >> 32);
  };
  Sample s{};
  s.label = static_cast<int32_t>(below(SplitMix64(key), spec.classes));
  s.nnz = spec.nnz;
  // Features of the label: label, label + classes, ... below `features`.
  const int64_t own = (spec.features - s.label + spec.classes - 1) / spec.classes;
  for (int k = 0; k < spec.nnz; ++k) {
    const uint64_t h = SplitMix64(key + 1 + static_cast<uint64_t>(k));
    const uint64_t h2 = SplitMix64(h);
    const bool informative = own > 0 && examples::UnitFloat(h) < spec.signal;
    s.index[k] = static_cast<int32_t>(informative ? s.label + spec.classes * below(h2, own)
                                                  : below(h2, spec.features));
    s.value[k] = 0.5f + examples::UnitFloat(SplitMix64(h2));
  }
  return s;
}

// scores[c] = bias[c] + sum_k value_k * W[index_k][c], features in list order.
template <class Weights>
void Scores(const Sample& s, Weights&& w, int64_t bias, int classes, float* scores) {
  const Row& b = w(bias);
  for (int c = 0; c < classes; ++c) scores[c] = b[c];
  for (int k = 0; k < s.nnz; ++k) {
    const Row& r = w(s.index[k]);
    for (int c = 0; c < classes; ++c) scores[c] += s.value[k] * r[c];
  }
}

// Softmax in place; returns log(sum exp(score - max)) and the max, for the loss.
void Softmax(float* p, int classes) {
  float top = p[0];
  for (int c = 1; c < classes; ++c) top = std::max(top, p[c]);
  float sum = 0;
  for (int c = 0; c < classes; ++c) sum += (p[c] = std::exp(p[c] - top));
  for (int c = 0; c < classes; ++c) p[c] /= sum;
}

struct Eval {
  double loss = 0;
  int64_t correct = 0;
};

}  // namespace

int main(int argc, char** argv) {
  DataSpec spec;
  int epochs = 10;
  int64_t minibatch = 500;
  float lr = 0.01f;
  std::string sync = "bsp";
  int staleness = 1;
  std::string data_path;
  bool timing = false;
  bool reconnaissance = false;

  CLI::App app{"multinomial logistic regression on strads (SyncFor)"};
  app.add_option("--classes", spec.classes, "classes (labels 0 .. classes-1)")
      ->check(CLI::Range(2, kMaxClasses))
      ->capture_default_str();
  app.add_option("--features", spec.features, "features of the model (ids 1 .. features)")
      ->check(CLI::Range(int64_t{1}, int64_t{INT32_MAX}))
      ->capture_default_str();
  auto* samples = app.add_option("--samples", spec.samples, "samples of the generated data")
                      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
                      ->capture_default_str();
  auto* nnz = app.add_option("--nnz", spec.nnz, "features per generated sample")
                  ->check(CLI::Range(1, kMaxNnz))
                  ->capture_default_str();
  app.add_option("--data-seed", spec.seed, "seed of the generated data")
      ->check(strads::NonNegativeInteger<uint64_t>())
      ->capture_default_str();
  app.add_option("--epochs", epochs, "passes over the data")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--minibatch", minibatch, "samples per mini-batch")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--lr", lr, "learning rate")
      ->check(examples::PositiveFinite())
      ->capture_default_str();
  app.add_option("--sync", sync, "synchronisation: bsp, ssp or hybrid")
      ->check(CLI::IsMember({"bsp", "ssp", "hybrid"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_option("--staleness", staleness, "SSP staleness bound")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--data", data_path, "LIBSVM file: 'label idx:val idx:val ...' per line")
      ->type_name("FILE")
      ->excludes(samples)
      ->excludes(nnz);
  app.add_flag("--re", reconnaissance,
               "reconnaissance: copy and exchange only the weight rows the bodies access");
  app.add_flag("--time", timing, "print the mean time per epoch of the training loop");

  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    const int classes = spec.classes;
    const int64_t features = spec.features;
    auto& data =
        data_path.empty()
            ? strads::MakeDVector<Sample>(
                  rt, spec.samples, [&](int64_t i) { return SampleAt(spec, i); }, "samples")
            : strads::ReadFromFile<Sample>(rt, data_path, [&](std::string_view line) {
                return ParseLibsvm(line, classes, features);
              });
    const int64_t bias = features;  // the last row
    auto& W = strads::MakeDVector<Row>(
        rt, features + 1, [](int64_t) { return Row{}; }, "W");
    strads::Replicate(rt, W);

    strads::SyncOption option = strads::BSP();
    if (sync == "ssp") option = strads::SSP(staleness);
    if (sync == "hybrid") option = strads::Hybrid();

    double seconds = 0;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      strads::SyncFor(
          data, minibatch,
          [&W, lr, classes, bias](std::span<const Sample> batch) {
            float p[kMaxClasses];
            for (const Sample& s : batch) {
              Scores(
                  s, [&W](int64_t j) -> const Row& { return W[j]; }, bias, classes, p);
              Softmax(p, classes);
              p[s.label] -= 1.0f;  // the gradient of the loss with respect to the scores
              Row& b = W[bias];
              for (int c = 0; c < classes; ++c) b[c] -= lr * p[c];
              for (int k = 0; k < s.nnz; ++k) {
                Row& r = W[s.index[k]];
                const float step = lr * s.value[k];
                for (int c = 0; c < classes; ++c) r[c] -= step * p[c];
              }
            }
          },
          option, reconnaissance);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

      // Every node holds the whole model after SyncFor: read it directly.
      const Row* w = static_cast<const strads::dvector<Row>&>(W).data();
      const Eval e = strads::Reduce(
          rt, data, Eval{},
          [w, classes, bias](const Sample& s) {
            float p[kMaxClasses];
            Scores(
                s, [w](int64_t j) -> const Row& { return w[j]; }, bias, classes, p);
            int best = 0;
            for (int c = 1; c < classes; ++c)
              if (p[c] > p[best]) best = c;
            Softmax(p, classes);
            const double loss = -std::log(std::max(static_cast<double>(p[s.label]), 1e-30));
            return Eval{loss, best == s.label ? 1 : 0};
          },
          [](const Eval& a, const Eval& b) {
            return Eval{a.loss + b.loss, a.correct + b.correct};
          });
      if (rt.leader())
        std::printf("epoch %d loss %.6f accuracy %.6f\n", epoch, e.loss / data.size(),
                    static_cast<double>(e.correct) / data.size());
    }
    if (timing && rt.leader())
      std::printf("time per epoch: %.3f ms\n", 1e3 * seconds / std::max(1, epochs));
    const uint64_t checksum = strads::Checksum(rt, {&W});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
