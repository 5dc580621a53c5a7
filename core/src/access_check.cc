#include "access_check.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "node_context.h"
#include "strads/errors.h"

namespace strads {

namespace {

// The accesses of the body this thread runs (each pool thread runs one body at a time), and a
// scratch copy for digests of other touch lists: no allocation per body once they have grown.
thread_local std::vector<Touch> running_touches;
thread_local std::vector<Touch> scratch_touches;

// Sorts `touches` by (DDS, element) by merging its ascending runs pairwise: O(n log runs) where
// std::sort costs O(n log n). A checked body's touches mostly come in a few runs (a Lasso body:
// beta_j and its column's rows of r read, then the rows again written: two runs of 97 touches,
// which std::sort took about 7 000 instructions to order and one merge takes a few hundred).
void SortByElement(std::vector<Touch>& touches) {
  const auto before = [](const Touch& a, const Touch& b) {
    return a.dds != b.dds ? a.dds < b.dds : a.index < b.index;
  };
  // A body touches a handful of elements: insertion sort is about half std::sort's cost there,
  // and a checked body pays it once in reconnaissance and once per check.
  constexpr size_t kInsertionSortMax = 16;
  const size_t n = touches.size();
  if (n <= kInsertionSortMax) {
    for (size_t i = 1; i < n; ++i) {
      const Touch t = touches[i];
      size_t j = i;
      for (; j > 0 && before(t, touches[j - 1]); --j) touches[j] = touches[j - 1];
      touches[j] = t;
    }
    return;
  }
  thread_local std::vector<size_t> starts, next_starts;  // of the runs, then n
  starts.assign(1, 0);
  for (size_t i = 1; i < n; ++i)
    if (before(touches[i], touches[i - 1])) starts.push_back(i);
  // Many short runs (touches in no order): merging gains nothing over a sort.
  constexpr size_t kTouchesPerRunMin = 8;
  if (starts.size() > n / kTouchesPerRunMin) {
    std::sort(touches.begin(), touches.end(), before);
    return;
  }
  starts.push_back(n);
  thread_local std::vector<Touch> other;
  other.resize(n);
  Touch* from = touches.data();
  Touch* to = other.data();
  while (starts.size() > 2) {  // each pass halves the runs
    next_starts.clear();
    for (size_t r = 0; r + 1 < starts.size(); r += 2) {
      next_starts.push_back(starts[r]);
      const size_t mid = starts[r + 1];
      const size_t end = r + 2 < starts.size() ? starts[r + 2] : mid;  // odd run: copied
      std::merge(from + starts[r], from + mid, from + mid, from + end, to + starts[r], before);
    }
    next_starts.push_back(n);
    std::swap(starts, next_starts);
    std::swap(from, to);
  }
  if (from != touches.data()) std::copy(from, from + n, touches.data());
}

// Makes `touches` the set of its elements: sorted by (DDS, element), one entry per element,
// written if any access wrote.
void ToAccessSet(std::vector<Touch>& touches) {
  SortByElement(touches);
  size_t kept = 0;
  for (size_t i = 0; i < touches.size(); ++i) {
    if (kept > 0 && touches[kept - 1].dds == touches[i].dds &&
        touches[kept - 1].index == touches[i].index)
      touches[kept - 1].write |= touches[i].write;
    else
      touches[kept++] = touches[i];
  }
  touches.resize(kept);
}

// What a body whose accesses changed should do instead.
constexpr const char* kWayOut =
    "A body must access the same elements every time it runs: draw its random choices from a "
    "generator seeded by its index, never from one shared between bodies or calls; or, if its "
    "elements must change from call to call, declare the loop dynamic (strads::DynamicAsyncFor "
    "plans every call) and seed by index and epoch. --access-check all checks every body "
    "(always in test mode).";

}  // namespace

uint32_t AccessDigest(std::span<const Touch> touches) {
  // A body touches a few elements, often one of them more than once (read, then written): their
  // set by a linear search of the ones seen. Before, a repeat sent them to ToAccessSet's copy
  // and sort: lda's 5 touches of 4 elements cost 516 instructions a token there, about 100 here
  // (callgrind); distinct touches (sgdmf's 3) cost the same either way.
  constexpr size_t kLinearMax = 16;
  if (touches.size() <= kLinearMax) {
    Touch set[kLinearMax];
    size_t n = 0;
    for (const Touch& t : touches) {
      size_t k = 0;
      while (k < n && (set[k].index != t.index || set[k].dds != t.dds)) ++k;
      if (k == n)
        set[n++] = t;
      else
        set[k].write |= t.write;
    }
    return AccessSetDigest(std::span<const Touch>(set, n));
  }
  scratch_touches.assign(touches.begin(), touches.end());
  ToAccessSet(scratch_touches);
  return AccessSetDigest(scratch_touches);
}

bool ChecksRound(AccessCheck mode, uint64_t execution, size_t round) {
  switch (mode) {
    case AccessCheck::kAll:
      return true;
    case AccessCheck::kSample:
      // The second execution whole too: the first runs on the values its reconnaissance saw,
      // so a body whose control flow follows values the loop writes (`if (y[i] > 0) ...`, a
      // port's commonest mistake) first strays in the second, where a plan of fewer rounds
      // than the period (16 then) checked no body before its 16th execution and computed
      // something else.
      return execution <= 1 || (round + execution) % kAccessSampleRounds == 0;
    case AccessCheck::kOff:
      break;
  }
  return false;
}

std::byte* AccessCheckHook::Access(DdsBase& dds, int64_t index, bool write) {
  running_touches.push_back({dds.id(), write, index});
  return dds.raw_element(index);
}

void AccessCheckHook::Begin() { running_touches.clear(); }

// Reconnaissance shows a body zeros for what it writes, and a DDS reached through a non-const
// reference counts as written: an index array held by `auto&` reads 0 there, a port's slip that
// the advice on random choices does not explain. The hint names the DDSs `touches` wrote.
std::string AccessCheckHook::ZerosHint(const std::vector<Touch>& touches) const {
  std::vector<std::string> written;
  for (const Touch& t : touches)
    if (const std::string& name = rt_.context().dds(t.dds).name();
        t.write && std::find(written.begin(), written.end(), name) == written.end())
      written.push_back(name);
  if (written.empty()) return "";
  std::string names;
  for (size_t i = 0; i < written.size(); ++i)
    names += (i == 0 ? "" : i + 1 == written.size() ? " and " : ", ") + written[i];
  return " The body reached " + names +
         " without const, as writes, and reconnaissance shows a body zeros for what it "
         "writes, not the values: if it chose an element by a value read there (y[idx[i]] "
         "with idx held by `auto&` where `const auto&` was meant), hold the data the loop "
         "only reads const, or read it through std::as_const (docs/porting.md, rule 4).";
}

void AccessCheckHook::Verify(int64_t index, uint32_t reconnaissance_digest) const {
  if (AccessDigest(running_touches) == reconnaissance_digest) [[likely]]
    return;
  ToAccessSet(running_touches);  // the elements named below, in order
  constexpr size_t kNamed = 8;
  const std::vector<Touch>& set = running_touches;
  std::string accessed;
  for (size_t i = 0; i < set.size() && i < kNamed; ++i)
    accessed += (i == 0 ? "" : ", ") + rt_.context().dds(set[i].dds).name() + "[" +
                std::to_string(set[i].index) + "] (" + (set[i].write ? "write" : "read") + ")";
  if (set.size() > kNamed) accessed += " and " + std::to_string(set.size() - kNamed) + " more";
  if (set.empty()) accessed = "no element";
  throw UsageError("AsyncFor at " + site_ + ", invocation " + std::to_string(invocation_) +
                   ": the body of index " + std::to_string(index) + " accessed " + accessed +
                   ", not the elements it accessed in this loop's reconnaissance run, from which "
                   "the plan was made (an unchecked run would silently compute something else). " +
                   kWayOut + ZerosHint(set));
}

uint32_t AccessCheckHook::Digest() const { return AccessDigest(running_touches); }

void AccessCheckHook::FailGroup(int64_t first, std::span<const uint32_t> bodies) const {
  constexpr size_t kNamed = 8;
  std::string named;
  for (size_t i = 0; i < bodies.size() && i < kNamed; ++i)
    named += (i == 0 ? "" : ", ") + std::to_string(first + bodies[i]);
  if (bodies.size() > kNamed) named += " and " + std::to_string(bodies.size() - kNamed) + " more";
  throw UsageError(
      "AsyncFor at " + site_ + ", invocation " + std::to_string(invocation_) +
      ": a body among the " + std::to_string(bodies.size()) + " bodies of indices " + named +
      " (a group that writes the same blocks) accessed elements other than the ones it accessed "
      "in this loop's reconnaissance run, from which the plan was made (an unchecked run would "
      "silently compute something else). The plan keeps one access digest per group at this "
      "size, so the body is not named; a run on 2 nodes or with fewer bodies names it. " +
      kWayOut + ZerosHint(running_touches));
}

}  // namespace strads
