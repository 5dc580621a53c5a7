// AccessCheck: whether an AsyncFor body accesses, on a later execution, exactly the elements
// its reconnaissance recorded. The plan (blocks, schedule, prefetches, locks) is made from those
// accesses; a body that draws other elements (a fresh random negative each call) runs unplanned
// and silently changes the result. Which executions are checked is --access-check
// (RuntimeOptions::access_check): every body (all, and always in test mode), or the first two
// executions of each plan whole and then a rotating sixteenth of it (sample, the default), or
// none (off).
//
// A checked body runs alone, with an AccessCheckHook on every DDS the loop touches; the hook
// records the accesses of the body its thread runs and returns the element's own address, so a
// checked body computes exactly what an unchecked one does.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "recon_hook.h"
#include "strads/internal/dds.h"
#include "strads/runtime.h"

namespace strads {

// A body's accesses as a set of (DDS, element, written at least once): neither their order nor
// repeats count, as in the plan. Equal sets give equal digests; 32 bits, because a plan keeps
// one per body: a changed set goes unnoticed with probability 2^-32 per checked body.
uint32_t AccessDigest(std::span<const Touch> touches);

// One element's part of its set's digest: a 64-bit mix (splitmix64's finalizer) of (DDS,
// element, written). A set's digest is the sum of its elements' parts, which does not depend on
// their order: a body's touches that are already a set (reconnaissance's usually are) need no
// sort.
inline uint64_t TouchPart(const Touch& t) {
  uint64_t x = static_cast<uint64_t>(t.index) ^ (uint64_t{t.dds} << 41) ^ (uint64_t{t.write} << 40);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// AccessDigest of touches that name no element twice (a ReconHook's: ReconHook::TouchesAreSet),
// without looking for repeats. Inline, as TouchPart and BodyDigestPart: reconnaissance and
// every checked body call them, a few touches each, and as calls into this file they cost about
// as much again as their arithmetic (callgrind, sgdmf).
inline uint32_t AccessSetDigest(std::span<const Touch> set) {
  uint64_t sum = 0;
  for (const Touch& t : set) sum += TouchPart(t);
  return static_cast<uint32_t>(sum ^ (sum >> 32));
}

// A body's part of its group's digest sum, when a plan keeps one digest per group rather than
// per body (docs/async_for.md, "Digests per group"): its AccessDigest mixed with its loop index,
// so that two bodies of a group that swapped their sets change the sum. Parts add modulo 2^32.
inline uint32_t BodyDigestPart(int64_t index, uint32_t digest) {
  uint64_t x = static_cast<uint64_t>(index) ^ (uint64_t{digest} << 32);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<uint32_t>(x ^ (x >> 32));
}

// Rounds per sample period: under kSample, executions 0 and 1 of a plan are checked whole, and
// execution e > 1 checks round r when (r + e) % kAccessSampleRounds == 0; a plan of one round
// is then checked every 64th execution. (The schedule engine also spot-checks a few bodies of
// every execution that checks no round: AsyncLoop::ChooseSpotCheck.) A checked round costs
// about 2.4 unchecked ones (sgdmf), so the sixteenth this was until the second execution was
// checked whole cost every later epoch 9 %; a sixty-fourth costs it 2 %.
inline constexpr uint64_t kAccessSampleRounds = 64;

// Whether execution `execution` of a plan (0: the one right after its reconnaissance) checks the
// bodies of round `round` (engines without rounds: round 0).
bool ChecksRound(AccessCheck mode, uint64_t execution, size_t round);

class AccessCheckHook : public AccessHook {
 public:
  // `site` is FILE:LINE, `invocation` the call's number at that site (for the error).
  AccessCheckHook(Runtime& rt, std::string site, uint64_t invocation)
      : rt_(rt), site_(std::move(site)), invocation_(invocation) {}
  std::byte* Access(DdsBase& dds, int64_t index, bool write) override;

  // Around one body on the calling thread: Begin forgets the thread's accesses; Verify compares
  // their digest with the reconnaissance's and throws UsageError (exit code 2) naming the site,
  // the index, the elements accessed and what to do.
  void Begin();
  void Verify(int64_t index, uint32_t reconnaissance_digest) const;
  // The AccessDigest of the thread's accesses since Begin.
  uint32_t Digest() const;
  // A group whose bodies' BodyDigestParts summed to something other than the reconnaissance's
  // sum: throws UsageError naming the site, the group's bodies (`bodies` are offsets from loop
  // index `first`) and what to do. The plan kept no digest per body, so no body is named; the
  // hint on DDSs reached without const names those the group's last body wrote (same code).
  [[noreturn]] void FailGroup(int64_t first, std::span<const uint32_t> bodies) const;

 private:
  // Advice when `touches` wrote DDSs (reached without const), else "".
  std::string ZerosHint(const std::vector<Touch>& touches) const;

  Runtime& rt_;
  std::string site_;
  uint64_t invocation_;
};

}  // namespace strads
