// A node's update of one SyncFor clock: what it sends the other nodes, and how the nodes'
// updates change the parameters (the BSP average, SSP's per-node update, custom aggregation).
// The arithmetic and its order are the contract of docs/sync_for.md: every node adds the same
// numbers in the same order.
//
// An update is a presence byte per parameter (did some worker of the node access it this
// clock), padded to 8 bytes, then each present parameter's payload, padded to 8 bytes: the sum
// of the node's worker deltas in thread order, or, for a parameter with a custom aggregation
// (BSP, SSP), every active worker's delta in thread order. A worker's delta is its copy minus
// the parameter at the start of the clock (Hybrid: the node's shared copy is one delta). The
// payload covers the whole parameter, or with reconnaissance the elements the node's bodies
// access (SitePlan::need), in index order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sync_call.h"

namespace strads {
namespace internal {

// The update of node call.me for the clock c just run, in call.engine.update (until the next)
// from byte `front` on: the first `front` bytes are the caller's, so that a message with a
// header (SSP's clock) is the buffer as it is, sent without a copy.
std::vector<std::byte>& EncodeNodeUpdate(SyncCall& call, int64_t c, size_t front = 0);

// BSP and Hybrid, on every node alike: updates[p] is node p's update of clock c. Sums them in
// node order and adds sum / (active workers, Hybrid: active nodes) to the parameters, or calls
// the custom aggregation with the deltas in (node, thread) order.
void ApplyBsp(SyncCall& call, int64_t c, const std::vector<std::span<const std::byte>>& updates);

// BSP on a run of one node that runs its own workers, without reconnaissance and not Hybrid:
// the same arithmetic as EncodeNodeUpdate then ApplyBsp, in pieces of each parameter that go
// through the whole clock end at once (deltas, aggregation) instead of one pass over every
// parameter per step: the update never leaves the node, so no update is built. With
// `another_clock` the workers' copies taken this clock are brought up to the new values in the
// same pass and count as taken for the next clock (ParamCopy::fresh).
void EndClockOnOneNode(SyncCall& call, int64_t c, bool another_clock);

// SSP: adds node `source`'s update of clock c, divided by the workers active at c, to the
// parameters as they are now, or calls the custom aggregation with its workers' deltas.
void ApplySsp(SyncCall& call, int source, int64_t c, std::span<const std::byte> update);

}  // namespace internal
}  // namespace strads
