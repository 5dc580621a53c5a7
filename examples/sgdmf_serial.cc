// Serial SGD matrix factorization: the plain loop of Figure 2(a) in the STRADS-AP paper.
//
//   for epoch in 1..E:  for each rating (u, i, v):  SgdStep(v, W[u], H[i])
//
// The reference that the OpenMP and distributed versions are checked against: with the same
// data, seed and visiting order they must print the same RMSE values and checksum.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/ratings.h"
#include "common/sgd_kernel.h"
#include "common/sgdmf_flags.h"
#include "strads/fnv1a.h"

namespace {

using examples::Rating;
using examples::Row;

// Reads a visiting order: one rating index per line, blank lines ignored. It must be a
// permutation of 0..n-1.
std::vector<int64_t> LoadOrder(const std::string& path, int64_t n) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(n));
  std::vector<int64_t> seen_on(static_cast<size_t>(n), 0);  // line number, 0 = not seen
  std::string line;
  int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const auto first = line.find_first_not_of(" \t\r\v\f");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r\v\f");
    const std::string_view text = std::string_view(line).substr(first, last - first + 1);
    const auto where = path + ":" + std::to_string(line_number) + ": ";
    int64_t index = 0;
    const bool digits =
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
    if (!digits || end != text.data() + text.size())
      throw std::runtime_error(where + "rating index '" + std::string(text) +
                               "' is not a non-negative integer");
    if (ec != std::errc() || index >= n)
      throw std::runtime_error(where + "rating index " + std::string(text) +
                               " out of range (there are " + std::to_string(n) + " ratings)");
    if (seen_on[index] != 0)
      throw std::runtime_error(where + "rating index " + std::to_string(index) +
                               " repeated (first on line " + std::to_string(seen_on[index]) + ")");
    seen_on[index] = line_number;
    order.push_back(index);
  }
  if (in.bad()) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
  if (static_cast<int64_t>(order.size()) != n) {
    const auto missing = std::find(seen_on.begin(), seen_on.end(), 0) - seen_on.begin();
    throw std::runtime_error(path + ": index " + std::to_string(missing) + " missing (" +
                             std::to_string(order.size()) + " of " + std::to_string(n) +
                             " ratings listed)");
  }
  return order;
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
  std::string order_path;

  CLI::App app{"Serial SGD matrix factorization (Figure 2(a) of the STRADS-AP paper)"};
  examples::AddSgdmfFlags(app, flags);
  app.add_option("--order", order_path,
                 "Visit the ratings of every epoch in the order given in FILE (one rating index "
                 "per line, a permutation of 0..n-1)")
      ->type_name("FILE");
  CLI11_PARSE(app, argc, argv);

  std::vector<Rating> ratings;
  std::vector<int64_t> order;
  try {
    if (!data_path.empty()) {
      ratings = examples::LoadRatingsFile(data_path, &spec);
    } else {
      ratings.resize(static_cast<size_t>(spec.ratings));
      for (int64_t i = 0; i < spec.ratings; ++i) ratings[i] = examples::RatingAt(spec, i);
    }
    if (!order_path.empty()) order = LoadOrder(order_path, spec.ratings);
    if (flags.by_user) std::stable_sort(ratings.begin(), ratings.end(), examples::UserBefore);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sgdmf_serial: %s\n", e.what());
    return 2;
  }

  const int64_t n = spec.ratings;
  std::vector<Row> w(static_cast<size_t>(spec.users));
  std::vector<Row> h(static_cast<size_t>(spec.items));
  for (int64_t u = 0; u < spec.users; ++u) w[u] = examples::InitRow(spec.seed, 1, u);
  for (int64_t i = 0; i < spec.items; ++i) h[i] = examples::InitRow(spec.seed, 2, i);

  double update_seconds = 0.0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    if (order.empty()) {
      for (int64_t k = 0; k < n; ++k) {
        const Rating& r = ratings[k];
        examples::SgdStep(r.value, w[r.user], h[r.item], gamma, lambda);
      }
    } else {
      // A permuted order reads the ratings at random: prefetch a few ahead (as strads does).
      for (int64_t k = 0; k < n; ++k) {
        if (k + 8 < n) __builtin_prefetch(&ratings[order[k + 8]]);
        const Rating& r = ratings[order[k]];
        examples::SgdStep(r.value, w[r.user], h[r.item], gamma, lambda);
      }
    }
    update_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!quiet) {
      const double rmse = std::sqrt(examples::ChunkedSquaredError(ratings, w, h) / n);
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
