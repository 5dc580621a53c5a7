// AsyncFor planning's element requests: the read-only elements one node asks their owner to
// serve, grouped by the node that runs the bodies reading them (the executor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "element_ref.h"
#include "strads/internal/bytes.h"

namespace strads {

// A request message: counts[e] elements for executor e, then the elements, executor 0's first.
// Grouped, not tagged with their executor (4 bytes more an element).
inline void PutElementRequests(ByteWriter& w, const std::vector<uint64_t>& counts,
                               const std::vector<OwnedElement>& elements) {
  w.Reserve(w.size() + 2 * sizeof(uint64_t) + counts.size() * sizeof(uint64_t) +
            elements.size() * sizeof(OwnedElement));
  w.PutVector(counts);
  w.PutVector(elements);
}

// Calls take(executor, element) for each request of `bytes`, in order, read in place. Throws
// std::runtime_error if the message does not hold a count for each of `nodes` executors and
// as many elements as they add up to.
template <class Take>
void GetElementRequests(const std::vector<std::byte>& bytes, int nodes, Take take) {
  ByteReader r(bytes);
  const auto counts = r.GetVector<uint64_t>();
  uint64_t elements = 0;
  for (const uint64_t count : counts) elements += count;
  if (counts.size() != static_cast<size_t>(nodes) || r.Get<uint64_t>() != elements ||
      r.remaining() / sizeof(OwnedElement) != elements || r.remaining() % sizeof(OwnedElement) != 0)
    throw std::runtime_error("AsyncFor planning: bad element requests in a message");
  for (int e = 0; e < nodes; ++e)
    for (uint64_t i = 0; i < counts[static_cast<size_t>(e)]; ++i) take(e, r.Get<OwnedElement>());
}

}  // namespace strads
