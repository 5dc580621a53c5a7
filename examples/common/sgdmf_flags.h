// The command line shared by sgdmf, sgdmf_serial and sgdmf_omp, so that the same flags mean
// the same run in all three.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "common/number_flags.h"
#include "common/ratings.h"
#include "strads/flag_checks.h"

namespace examples {

// Ratings ordered by user, the layout --by-user asks for.
inline bool UserBefore(const Rating& a, const Rating& b) { return a.user < b.user; }

struct SgdmfFlags {
  RatingsSpec spec;
  int epochs = 10;
  float gamma = 0.01f;
  float lambda = 0.05f;
  std::string data_path;
  bool quiet = false;
  bool timing = false;
  bool by_user = false;
};

inline void AddSgdmfFlags(CLI::App& app, SgdmfFlags& f) {
  auto* users = app.add_option("--users", f.spec.users, "users of the generated data")
                    ->check(CLI::Range(int64_t{1}, int64_t{INT32_MAX}))
                    ->capture_default_str();
  auto* items = app.add_option("--items", f.spec.items, "items of the generated data")
                    ->check(CLI::Range(int64_t{1}, int64_t{INT32_MAX}))
                    ->capture_default_str();
  auto* count = app.add_option("--ratings", f.spec.ratings, "ratings of the generated data")
                    ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
                    ->capture_default_str();
  app.add_option("--data-seed", f.spec.seed, "seed of the data generator and the initial factors")
      ->check(strads::NonNegativeInteger<uint64_t>())
      ->capture_default_str();
  app.add_option("--epochs", f.epochs, "passes over the ratings")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--gamma", f.gamma, "learning rate")
      ->check(PositiveFinite())
      ->capture_default_str();
  app.add_option("--lambda", f.lambda, "regularization")
      ->check(NonNegativeFinite())
      ->capture_default_str();
  app.add_option("--data", f.data_path,
                 "load ratings from FILE ('user item rating [timestamp]' per line) instead of "
                 "generating them")
      ->type_name("FILE")
      ->excludes(users)
      ->excludes(items)
      ->excludes(count);
  app.add_flag("--by-user", f.by_user,
               "order the ratings by user (a stable sort) before training: the loop's cells then "
               "read contiguous runs of ratings, so a node holds little more than its share of "
               "them (docs/async_for.md); a different visiting order, so another checksum");
  app.add_flag("--quiet", f.quiet, "do not print the per-epoch RMSE");
  app.add_flag("--time", f.timing, "print the mean time per epoch of the update loop");
}

}  // namespace examples
