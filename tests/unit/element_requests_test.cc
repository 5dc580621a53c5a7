// AsyncFor planning's element requests cross a message grouped by executor, and a message that
// is not one is refused.
#include "element_requests.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <utility>
#include <vector>

namespace strads {
namespace {

std::vector<std::byte> Message(const std::vector<uint64_t>& counts,
                               const std::vector<OwnedElement>& elements) {
  ByteWriter w;
  PutElementRequests(w, counts, elements);
  return w.Take();
}

std::vector<std::pair<int, OwnedElement>> Requests(const std::vector<std::byte>& bytes, int nodes) {
  std::vector<std::pair<int, OwnedElement>> out;
  GetElementRequests(bytes, nodes, [&](int e, OwnedElement o) { out.emplace_back(e, o); });
  return out;
}

TEST_CASE("element requests come back with their executors, in order") {
  const std::vector<OwnedElement> elements{{0, 5}, {0, 9}, {1, 2}, {0, 1}};
  const std::vector<std::pair<int, OwnedElement>> expected{
      {0, {0, 5}}, {0, {0, 9}}, {2, {1, 2}}, {3, {0, 1}}};
  CHECK(Requests(Message({2, 0, 1, 1}, elements), 4) == expected);
  CHECK(Requests(Message({0, 0}, {}), 2).empty());
}

TEST_CASE("an element request message that is not one is refused, never read past its end") {
  const std::vector<std::byte> bytes = Message({2, 0, 1, 1}, {{0, 5}, {0, 9}, {1, 2}, {0, 1}});
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const std::vector<std::byte> cut_bytes(bytes.begin(), bytes.begin() + cut);
    CHECK_THROWS_AS(Requests(cut_bytes, 4), std::runtime_error);
  }
  std::vector<std::byte> longer = bytes;
  longer.resize(bytes.size() + sizeof(OwnedElement));
  const std::vector<std::vector<std::byte>> bad{
      longer,                                                   // an element past the counts
      Message({2, 0, 1}, {{0, 5}, {0, 9}, {1, 2}}),             // a count short of the nodes
      Message({2, 0, 1, 2}, {{0, 5}, {0, 9}, {1, 2}, {0, 1}}),  // counts past the elements
      Message({1, 0, 1, 1}, {{0, 5}, {0, 9}, {1, 2}, {0, 1}}),  // counts short of them
  };
  for (const auto& b : bad)
    CHECK_THROWS_WITH_AS(Requests(b, 4),
                         doctest::Contains("AsyncFor planning: bad element requests"),
                         std::runtime_error);
}

}  // namespace
}  // namespace strads
