// SGD matrix factorization with OpenMP and element locks: Figure 2(b) of the STRADS-AP paper.
//
//   for epoch in 1..E:
//     parallel for each rating (u, i, v):
//       lock W[u]; lock H[i]; SgdStep(v, W[u], H[i]); unlock H[i]; unlock W[u]
//
// Every W row lock is taken before any H row lock, so there is no deadlock. The order in which
// threads update a row varies from run to run, so with more than one thread the result is not
// deterministic; with one thread it equals sgdmf_serial's.

#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "common/ratings.h"
#include "common/sgd_kernel.h"
#include "common/sgdmf_flags.h"
#include "strads/fnv1a.h"

namespace {

using examples::Rating;
using examples::Row;

// One OpenMP lock per row of a factor matrix.
class RowLocks {
 public:
  explicit RowLocks(int64_t rows) : locks_(static_cast<size_t>(rows)) {
    for (omp_lock_t& lock : locks_) omp_init_lock(&lock);
  }
  ~RowLocks() {
    for (omp_lock_t& lock : locks_) omp_destroy_lock(&lock);
  }
  RowLocks(const RowLocks&) = delete;
  RowLocks& operator=(const RowLocks&) = delete;

  void Lock(int64_t row) { omp_set_lock(&locks_[row]); }
  void Unlock(int64_t row) { omp_unset_lock(&locks_[row]); }

 private:
  std::vector<omp_lock_t> locks_;
};

// examples::ChunkedSquaredError with the chunks evaluated in parallel; the chunk sums are added
// in chunk order, so the value is the same as the serial one.
double ParallelChunkedSquaredError(const std::vector<Rating>& ratings, const std::vector<Row>& w,
                                   const std::vector<Row>& h) {
  const int64_t n = static_cast<int64_t>(ratings.size());
  const int64_t chunks = (n + examples::kErrorChunk - 1) / examples::kErrorChunk;
  std::vector<double> sums(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * examples::kErrorChunk;
    const int64_t size = std::min(examples::kErrorChunk, n - begin);
    sums[c] = examples::ChunkSquaredError(
        std::span<const Rating>(ratings.data() + begin, static_cast<size_t>(size)), w, h);
  }
  double total = 0.0;
  for (double s : sums) total += s;
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  examples::SgdmfFlags flags;
  auto& spec = flags.spec;
  int& epochs = flags.epochs;
  float& gamma = flags.gamma;
  float& lambda = flags.lambda;
  std::string& data_path = flags.data_path;
  bool& quiet = flags.quiet;
  bool& timing = flags.timing;
  int threads = omp_get_max_threads();

  CLI::App app{"SGD matrix factorization with OpenMP and row locks (Figure 2(b) of STRADS-AP)"};
  examples::AddSgdmfFlags(app, flags);
  app.add_option("--threads", threads, "Number of OpenMP threads")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  omp_set_num_threads(threads);

  std::vector<Rating> ratings;
  try {
    if (!data_path.empty()) {
      ratings = examples::LoadRatingsFile(data_path, &spec);
    } else {
      ratings.resize(static_cast<size_t>(spec.ratings));
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < spec.ratings; ++i) ratings[i] = examples::RatingAt(spec, i);
    }
    if (flags.by_user) std::stable_sort(ratings.begin(), ratings.end(), examples::UserBefore);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sgdmf_omp: %s\n", e.what());
    return 2;
  }

  const int64_t n = spec.ratings;
  std::vector<Row> w(static_cast<size_t>(spec.users));
  std::vector<Row> h(static_cast<size_t>(spec.items));
#pragma omp parallel for schedule(static)
  for (int64_t u = 0; u < spec.users; ++u) w[u] = examples::InitRow(spec.seed, 1, u);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < spec.items; ++i) h[i] = examples::InitRow(spec.seed, 2, i);
  RowLocks w_locks(spec.users);
  RowLocks h_locks(spec.items);

  double update_seconds = 0.0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; ++k) {
      const Rating& r = ratings[k];
      w_locks.Lock(r.user);
      h_locks.Lock(r.item);
      examples::SgdStep(r.value, w[r.user], h[r.item], gamma, lambda);
      h_locks.Unlock(r.item);
      w_locks.Unlock(r.user);
    }
    update_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!quiet) {
      const double rmse = std::sqrt(ParallelChunkedSquaredError(ratings, w, h) / n);
      std::printf("epoch %d rmse %.6f\n", epoch, rmse);
    }
  }

  if (timing)
    std::printf("time per epoch: %.3f ms\n", epochs > 0 ? 1e3 * update_seconds / epochs : 0.0);
  strads::Fnv1a checksum;
  for (const Row& row : w) checksum.Update(row.data(), sizeof(Row));
  for (const Row& row : h) checksum.Update(row.data(), sizeof(Row));
  std::printf("checksum: %s\n", checksum.hex().c_str());
  return 0;
}
