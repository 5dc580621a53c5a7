// CellNumbers keeps every body's cell, at one byte a body while a chunk's numbers fit, widening a
// chunk alone when a number outgrows it.
#include "cell_numbers.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

namespace strads {
namespace {

TEST_CASE("cell numbers read back as set, each chunk at the width its numbers need") {
  const EvenSplit chunks(3001, 3);
  CellNumbers cells(chunks);
  CHECK(cells.HeapBytes() == 3001);  // one byte a body
  std::vector<int32_t> expected(3001);
  for (int64_t k = 0; k < 3001; ++k) {
    // Chunk 0 stays under 256, chunk 1 needs two bytes, chunk 2 four.
    const int64_t c = chunks.part_of(k);
    expected[k] = static_cast<int32_t>(c == 0   ? k % 256
                                       : c == 1 ? k * 30
                                                : (k % 2 ? k * 100000 : 5));
    cells.Set(c, k - chunks.begin(c), expected[k]);
  }
  for (int64_t k = 0; k < 3001; ++k) REQUIRE(cells.Get(k) == expected[k]);
  int64_t visited = 0;
  cells.ForEach([&](int64_t k, int32_t cell) {
    REQUIRE(k == visited++);
    REQUIRE(cell == expected[k]);
  });
  CHECK(visited == 3001);
  CHECK(cells.HeapBytes() == static_cast<size_t>(chunks.end(0) - chunks.begin(0)) +
                                 2 * static_cast<size_t>(chunks.end(1) - chunks.begin(1)) +
                                 4 * static_cast<size_t>(chunks.end(2) - chunks.begin(2)));
  // Setting chunk 1's numbers lower keeps its width; setting chunk 0's higher widens it alone.
  for (int64_t k = 0; k < chunks.end(1); ++k) {
    const int64_t c = chunks.part_of(k);
    cells.Set(c, k - chunks.begin(c), c == 0 ? expected[k] + 1000 : expected[k] % 7);
  }
  for (int64_t k = 0; k < 3001; ++k) {
    const int64_t c = chunks.part_of(k);
    REQUIRE(cells.Get(k) == (c == 0 ? expected[k] + 1000 : c == 1 ? expected[k] % 7 : expected[k]));
  }
  CHECK(cells.HeapBytes() == 2 * static_cast<size_t>(chunks.end(0) - chunks.begin(0)) +
                                 2 * static_cast<size_t>(chunks.end(1) - chunks.begin(1)) +
                                 4 * static_cast<size_t>(chunks.end(2) - chunks.begin(2)));
  cells.Release();
  CHECK(cells.HeapBytes() == 0);
  CHECK(cells.size() == 3001);
}

// Renumber applies a table as numbers are read, composed with the tables before it; the bodies'
// bytes stay as set (no pass over them).
TEST_CASE("cell numbers renumbered by tables read back through them") {
  const EvenSplit chunks(1000, 2);
  CellNumbers cells(chunks);
  for (int64_t k = 0; k < 1000; ++k) {
    const int64_t c = chunks.part_of(k);
    cells.Set(c, k - chunks.begin(c), static_cast<int32_t>(k % 5));
  }
  const size_t bytes = cells.HeapBytes();
  cells.Renumber(1, {40, 30, 20, 10, 0});          // chunk 1 only
  cells.Renumber(1, std::vector<int32_t>(41, 7));  // then every cell of it to 7
  cells.Renumber(1, [] {
    std::vector<int32_t> to(8, 0);
    to[7] = 300;  // past a byte: the bodies' bytes need not widen
    return to;
  }());
  cells.Renumber(0, {4, 3, 2, 1, 0});
  CHECK(cells.HeapBytes() == bytes + (5 + 5) * sizeof(int32_t));  // a table a chunk, composed
  const auto expected = [&](int64_t k) {
    return chunks.part_of(k) == 0 ? static_cast<int32_t>(4 - k % 5) : 300;
  };
  for (int64_t k = 0; k < 1000; ++k) REQUIRE(cells.Get(k) == expected(k));
  int64_t visited = 0;
  cells.ForEach([&](int64_t k, int32_t cell) {
    REQUIRE(k == visited++);
    REQUIRE(cell == expected(k));
  });
  CHECK(visited == 1000);
  cells.ForEachInChunk(
      1, [&](int64_t j, int32_t cell) { REQUIRE(cell == expected(chunks.begin(1) + j)); });
  CHECK_THROWS_AS(cells.Renumber(1, {1, 2}), std::out_of_range);  // 300 has no entry
}

}  // namespace
}  // namespace strads
