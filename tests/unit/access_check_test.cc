#include "access_check.h"

#include <doctest/doctest.h>

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

TEST_CASE("ChecksRound: all, the sample's rate, off") {
  for (uint64_t execution = 0; execution < 40; ++execution)
    for (size_t round = 0; round < 20; ++round) {
      CHECK(ChecksRound(AccessCheck::kAll, execution, round));
      CHECK_FALSE(ChecksRound(AccessCheck::kOff, execution, round));
    }
  // The first execution of a plan whole; then each round once in every 16 executions.
  for (size_t round = 0; round < 20; ++round) CHECK(ChecksRound(AccessCheck::kSample, 0, round));
  for (size_t round = 0; round < 20; ++round) {
    int checked = 0;
    for (uint64_t execution = 1; execution <= kAccessSampleRounds; ++execution)
      checked += ChecksRound(AccessCheck::kSample, execution, round) ? 1 : 0;
    CHECK(checked == 1);
  }
  // Of a 16-round schedule, each later execution checks one round.
  for (uint64_t execution = 1; execution < 40; ++execution) {
    int checked = 0;
    for (size_t round = 0; round < kAccessSampleRounds; ++round)
      checked += ChecksRound(AccessCheck::kSample, execution, round) ? 1 : 0;
    CHECK(checked == 1);
  }
}

}  // namespace
}  // namespace strads
