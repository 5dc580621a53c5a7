// OwnedElementList keeps a node's served elements delta-coded and gives them back in order.
#include "owned_element_list.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace strads {
namespace {

std::vector<OwnedElement> Elements(const OwnedElementList& list) {
  std::vector<OwnedElement> out;
  list.ForEach([&](const OwnedElement& e) { out.push_back(e); });
  return out;
}

TEST_CASE("an owned element list gives back its elements, in order") {
  CHECK(Elements(OwnedElementList()).empty());
  // Gaps of every varint length, offsets 0 and the largest, DDSs that start anywhere.
  const std::vector<OwnedElement> elements{
      {0, 0},
      {0, 1},
      {0, 3},
      {0, 200},
      {0, 70000},
      {0, UINT32_MAX},
      {1, 5},
      {3, 0},
      {3, 1u << 20},
      {70000, 1u << 31},
      {70000, (1u << 31) + 1},
      {UINT32_MAX, 7},
  };
  const OwnedElementList list(elements);
  CHECK(list.size() == elements.size());
  CHECK(Elements(list) == elements);
}

// Under --nodes 64 a node serves nearly every element of its share, each to one of 63 nodes:
// consecutive elements of a list are some tens apart. Two bytes an element at most, against 8.
TEST_CASE("an owned element list of close elements takes a byte or two an element") {
  std::vector<OwnedElement> elements;
  for (uint32_t i = 0; i < 100000; ++i) elements.push_back({2, i * 63 + i % 5});
  const OwnedElementList list(elements);
  CHECK(list.HeapBytes() <= 2 * elements.size() + 8);
  CHECK(Elements(list) == elements);
}

TEST_CASE("an owned element list refuses elements out of order or twice") {
  CHECK_THROWS_AS(OwnedElementList(std::vector<OwnedElement>{{0, 2}, {0, 1}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(OwnedElementList(std::vector<OwnedElement>{{0, 2}, {0, 2}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(OwnedElementList(std::vector<OwnedElement>{{1, 0}, {0, 5}}),
                  std::invalid_argument);
}

}  // namespace
}  // namespace strads
