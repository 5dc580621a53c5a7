// SGD matrix factorization on strads: sgdmf_serial.cc with two mechanical changes,
// std::vector -> strads::dvector and the inner loop -> strads::AsyncFor.
//
// The result equals, bit for bit, sgdmf_serial run in the order the runtime reports
// (--order-out FILE, then sgdmf_serial --order FILE), for any --nodes, mpiexec -n and --threads.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/epoch_times.h"
#include "common/ratings.h"
#include "common/sgd_kernel.h"
#include "common/sgdmf_flags.h"
#include "strads/strads.h"

using examples::Rating;
using examples::Row;

int main(int argc, char** argv) {
  examples::SgdmfFlags flags;
  const auto& spec = flags.spec;
  const int& epochs = flags.epochs;
  const float& gamma = flags.gamma;
  const float& lambda = flags.lambda;
  const std::string& data_path = flags.data_path;
  const bool& quiet = flags.quiet;
  const bool& timing = flags.timing;

  CLI::App app{"SGD matrix factorization on strads (Figure 2(c) of the STRADS-AP paper)"};
  examples::AddSgdmfFlags(app, flags);

  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    strads::dvector<Rating>& ratings =
        data_path.empty() ? strads::MakeDVector<Rating>(
                                rt, spec.ratings,
                                [&](int64_t i) { return examples::RatingAt(spec, i); }, "ratings")
                          : strads::ReadFromFile<Rating>(rt, data_path, examples::ParseRatingLine);
    if (flags.by_user) strads::Sort(rt, ratings, examples::UserBefore);
    // Input data: const, so the loop bodies only read it.
    const strads::dvector<Rating>& A = ratings;
    // In 64 bits: an id of 2^31 - 1 overflowed `1 + Max` in int.
    const int64_t n_users = int64_t{1} + strads::Max(rt, A, [](const Rating& r) { return r.user; });
    const int64_t n_items = int64_t{1} + strads::Max(rt, A, [](const Rating& r) { return r.item; });
    const int64_t n_users_all = data_path.empty() ? spec.users : n_users;
    const int64_t n_items_all = data_path.empty() ? spec.items : n_items;

    // A model too large for memory is refused by MakeDVector; from a file, the error also names
    // the line of the id that sized it.
    const auto make_rows = [&](int64_t n, uint64_t salt,
                               const char* name) -> strads::dvector<Row>& {
      try {
        return strads::MakeDVector<Row>(
            rt, n, [&](int64_t k) { return examples::InitRow(spec.seed, salt, k); }, name);
      } catch (const strads::UsageError& e) {
        if (data_path.empty()) throw;
        throw strads::UsageError(
            examples::PlaceOfId(data_path, salt == 1, static_cast<int32_t>(n - 1)) + ": " +
            e.what());
      }
    };
    auto& W = make_rows(n_users_all, 1, "W");
    auto& H = make_rows(n_items_all, 2, "H");
    // Per-rating squared errors for the RMSE line: with --quiet nothing reads them, so they
    // are not made (8 bytes per rating).
    strads::dvector<double>* E = quiet ? nullptr
                                       : &strads::MakeDVector<double>(
                                             rt, A.size(), [](int64_t) { return 0.0; }, "sq_err");
    const auto& Wr = W;
    const auto& Hr = H;

    examples::EpochTimes times(epochs);
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      strads::AsyncFor(0, A.size() - 1, [&A, &W, &H, gamma, lambda](int64_t j) {
        const Rating& r = A[j];
        examples::SgdStep(r.value, W[r.user], H[r.item], gamma, lambda);
      });
      times.Add(epoch,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (!quiet) {
        strads::AsyncFor(0, A.size() - 1, [&A, &Wr, &Hr, &E = *E](int64_t j) {
          const Rating& r = A[j];
          E[j] = examples::SquaredError(r, Wr[r.user], Hr[r.item]);
        });
        const double total = strads::Sum(rt, *E, [](double e) { return e; });
        if (rt.leader()) std::printf("epoch %d rmse %.6f\n", epoch, std::sqrt(total / A.size()));
      }
    }
    if (timing && rt.leader()) times.Print();
    const uint64_t checksum = strads::Checksum(rt, {&W, &H});
    if (rt.leader()) std::printf("checksum: %016llx\n", static_cast<unsigned long long>(checksum));
  });
}
