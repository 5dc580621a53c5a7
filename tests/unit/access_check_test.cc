#include "access_check.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace strads {
namespace {

TEST_CASE("AccessDigest: a set of elements; order and repeats do not count, writes do") {
  const std::vector<Touch> body = {{0, false, 7}, {1, true, 3}, {1, true, 4}};
  const uint64_t digest = AccessDigest(body);
  // The same accesses in another order, or with repeats (a read, then a write of one element).
  CHECK(AccessDigest(std::vector<Touch>{{1, true, 4}, {0, false, 7}, {1, true, 3}}) == digest);
  CHECK(AccessDigest(std::vector<Touch>{
            {0, false, 7}, {1, false, 3}, {1, true, 3}, {1, true, 4}, {0, false, 7}}) == digest);
  // Another element, another DDS, a read for a write, one access fewer.
  CHECK(AccessDigest(std::vector<Touch>{{0, false, 7}, {1, true, 3}, {1, true, 5}}) != digest);
  CHECK(AccessDigest(std::vector<Touch>{{0, false, 7}, {1, true, 3}, {2, true, 4}}) != digest);
  CHECK(AccessDigest(std::vector<Touch>{{0, false, 7}, {1, true, 3}, {1, false, 4}}) != digest);
  CHECK(AccessDigest(std::vector<Touch>{{0, false, 7}, {1, true, 3}}) != digest);
  CHECK(AccessDigest(std::vector<Touch>{}) != digest);
}

// The digest of the set of `touches`, made the plain way: a map by element.
uint32_t DigestOfSet(const std::vector<Touch>& touches) {
  std::map<std::pair<uint32_t, int64_t>, bool> written;
  for (const Touch& t : touches) written[{t.dds, t.index}] |= t.write;
  std::vector<Touch> set;
  for (const auto& [element, write] : written)
    set.push_back({element.first, write, element.second});
  return AccessSetDigest(set);
}

TEST_CASE("AccessDigest of short lists (found by linear search): the digest of their set") {
  std::mt19937_64 rng(5);
  for (size_t n = 0; n <= 17; ++n) {  // 17: past the linear search, sorted
    CAPTURE(n);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<Touch> touches;  // a pool of 6 elements: most lists repeat some
      for (size_t k = 0; k < n; ++k)
        touches.push_back(
            {static_cast<uint32_t>(rng() % 2), rng() % 3 == 0, static_cast<int64_t>(rng() % 3)});
      CHECK(AccessDigest(touches) == DigestOfSet(touches));
    }
  }
}

TEST_CASE("AccessDigest of long lists: ascending runs merged, or sorted when in no order") {
  std::mt19937_64 rng(17);
  // A Lasso body: beta_j written, its column's rows of r read, then written (two runs).
  std::vector<Touch> lasso = {{0, true, 12}};
  std::vector<int64_t> rows;
  for (int64_t row = 3; rows.size() < 48; row += 1 + static_cast<int64_t>(rng() % 5))
    rows.push_back(row);
  for (int64_t row : rows) lasso.push_back({1, false, row});
  for (int64_t row : rows) lasso.push_back({1, true, row});
  CHECK(AccessDigest(lasso) == DigestOfSet(lasso));
  std::vector<Touch> reads_only(lasso.begin(), lasso.begin() + 49);
  CHECK(AccessDigest(lasso) != AccessDigest(reads_only));
  // 1 to 7 runs (an odd count leaves a run unmerged in a pass), repeats within and across runs,
  // and the same touches shuffled (more runs than merging pays for: sorted).
  for (int runs = 1; runs <= 7; ++runs) {
    CAPTURE(runs);
    std::vector<Touch> touches;
    for (int r = 0; r < runs; ++r) {
      int64_t at = static_cast<int64_t>(rng() % 50);
      for (int k = 0; k < 20; ++k, at += static_cast<int64_t>(rng() % 3))  // 0: a repeat
        touches.push_back({static_cast<uint32_t>(rng() % 2), rng() % 4 == 0, at});
      std::sort(touches.end() - 20, touches.end(), [](const Touch& a, const Touch& b) {
        return a.dds != b.dds ? a.dds < b.dds : a.index < b.index;
      });
    }
    CHECK(AccessDigest(touches) == DigestOfSet(touches));
    std::shuffle(touches.begin(), touches.end(), rng);
    CHECK(AccessDigest(touches) == DigestOfSet(touches));
  }
}

TEST_CASE("ChecksRound: all, the sample's rate, off") {
  for (uint64_t execution = 0; execution < 40; ++execution)
    for (size_t round = 0; round < 20; ++round) {
      CHECK(ChecksRound(AccessCheck::kAll, execution, round));
      CHECK_FALSE(ChecksRound(AccessCheck::kOff, execution, round));
    }
  // The first two executions of a plan whole; then each round once in every 64 executions.
  for (size_t round = 0; round < 20; ++round) {
    CHECK(ChecksRound(AccessCheck::kSample, 0, round));
    CHECK(ChecksRound(AccessCheck::kSample, 1, round));
  }
  for (size_t round = 0; round < 20; ++round) {
    int checked = 0;
    for (uint64_t execution = 2; execution < 2 + kAccessSampleRounds; ++execution)
      checked += ChecksRound(AccessCheck::kSample, execution, round) ? 1 : 0;
    CHECK(checked == 1);
  }
  // Of a 64-round schedule, each later execution checks one round.
  for (uint64_t execution = 2; execution < 200; ++execution) {
    int checked = 0;
    for (size_t round = 0; round < kAccessSampleRounds; ++round)
      checked += ChecksRound(AccessCheck::kSample, execution, round) ? 1 : 0;
    CHECK(checked == 1);
  }
}

}  // namespace
}  // namespace strads
