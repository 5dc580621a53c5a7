// IndexSlots: AsyncForEach's index -> slot map, dense for small non-negative indices.
#include "index_slots.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>

namespace strads {
namespace {

TEST_CASE("index slots: every inserted index is found, dense or not, and no other") {
  // Indices far apart, negative, and ones that the dense range takes later (so that they move
  // from the hash part into it): each must be found with its slot after every insertion.
  IndexSlots slots;
  std::map<int64_t, uint32_t> expected;
  std::mt19937_64 random(11);
  const auto insert = [&](int64_t index) {
    if (expected.contains(index)) return;
    const auto slot = static_cast<uint32_t>(expected.size());
    slots.Insert(index, slot);
    expected[index] = slot;
  };
  insert(-5);
  insert(int64_t{1} << 40);
  insert(200'000);  // past the first dense limit: hashed, then moved once the range grows
  for (int k = 0; k < 60'000; ++k) insert(static_cast<int64_t>(random() % 400'000));
  insert(INT64_MIN);
  insert(INT64_MAX);
  CHECK(slots.size() == expected.size());
  for (const auto& [index, slot] : expected) {
    CAPTURE(index);
    CHECK(slots.Find(index) == slot);
  }
  // The sets of a loop over a DDS land in the dense part: 400 000 indices, 60 000 cached.
  CHECK(slots.dense_size() > 200'000);
  CHECK(slots.dense_size() <= 4 * (slots.size() + 1) + (size_t{1} << 16));
  int absent_found = 0;
  for (int64_t index = -100; index < 400'100; ++index)
    if (!expected.contains(index) && slots.Find(index) != IndexSlots::kNone) ++absent_found;
  CHECK(absent_found == 0);
  slots.Clear();
  CHECK(slots.size() == 0);
  CHECK(slots.Find(200'000) == IndexSlots::kNone);
  CHECK(slots.Find(int64_t{1} << 40) == IndexSlots::kNone);
}

}  // namespace
}  // namespace strads
