// The outcome digest's hash of a DDS's bytes (trace/FORMAT.md, "Outcome"): after every operator
// each node hashes its share of every DDS the operator wrote, so the hash is on the recorded
// run's path and must cost little against the operator.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strads/fnv1a.h"

namespace strads {
namespace internal {

// The bytes are cut into blocks of kOutcomeBlockBytes (the last one shorter); a block's
// little-endian 64-bit words (its last one zero-padded) go round-robin to four lanes, each an
// FNV-1a-over-words state from the offset basis (lane = word index in the block mod 4), and
// the four lanes then fold into `h` in lane order, one FNV step (Fnv1a::UpdateWord) each. Four
// lanes, not one chain: each step waits for the previous one's multiply, so one chain hashes 8
// bytes in about 4 cycles and four in about 1. Blocks: a definition that does not depend on a
// thread count, should the blocks be hashed on several threads.
inline constexpr size_t kOutcomeBlockBytes = size_t{1} << 16;
void FoldOutcomeBytes(Fnv1a& h, const std::byte* bytes, size_t count);

}  // namespace internal
}  // namespace strads
