// MemoryHeadroom: how much more memory this process can use before something refuses it: the
// machine (MemAvailable and free swap: past them comes the OOM killer), the process's cgroup
// (a container's or a batch job's limit, v1 or v2: the OOM killer again, at the limit) or
// --memory-limit (the user's bound for the process's resident memory, for a budget strads
// cannot see, say several ranks per machine under mpiexec).
//
// The runtime asks before its own large allocations whose size grows with the data
// (reconnaissance's records, a loop's plan), so that a problem too large for the machine stops
// with a message naming the loop and the bytes, where it ran for minutes into SIGKILL. The
// program's own vectors are its business; what the runtime asks about is what it allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace strads {

struct RuntimeOptions;

struct MemoryHeadroom {
  int64_t bytes = INT64_MAX;  // INT64_MAX: nothing known bounds it
  std::string bound;          // what bounds it, for a message ("this machine's available ...")
};

// The headroom now: the least of the machine's MemAvailable and SwapFree, the cgroup's limit less
// its usage
// and `memory_limit` (0: none) less this process's resident bytes.
MemoryHeadroom CurrentMemoryHeadroom(int64_t memory_limit);

// Throws UsageError ("`what` needs about X GB ..., over the Y GB this process can still use
// (bound); `advice`") if `bytes`, about to be allocated, exceed nine tenths of the headroom:
// the rest is for what is allocated beside it. `bytes` is a double so that no product of counts
// overflows. Reads /proc (about 80 us) unless an ask is small against the last reading, under a
// second old (below): call it once per allocation, not per element.
void EnsureMemoryHeadroom(const RuntimeOptions& options, const std::string& what, double bytes,
                          const std::string& advice);

// The advice of a refusal for what grows with a node's share of the data or the bodies.
inline constexpr const char* kMoreNodesAdvice =
    "use more nodes (mpiexec -n P shares the data and the work out) or less data";

// EnsureMemoryHeadroom for what every node of this process holds at once: `count` `items` of
// about `item_bytes` each on every node. The nodes of --nodes P are threads of one process, each
// holding about as much as this one (under mpiexec, --nodes is 1 and each rank asks for itself).
// Named "<what> (C <items> on each of K node(s) of this process, about B bytes each)": a DDS's
// share, a dmap's pairs, a loop's reconnaissance or plan (`what` "node N: the plan of AsyncFor at
// SITE", `items` "bodies").
void EnsureNodesHeadroom(const RuntimeOptions& options, const std::string& what, int64_t count,
                         const char* items, size_t item_bytes);

// How many times the headroom has been read from /proc (for the tests of its reuse).
int64_t MemoryHeadroomReadings();

// The parsers, apart for their tests. Each returns nullopt for text it cannot read.
// A field of /proc/meminfo ("MemAvailable:  22887204 kB" for "MemAvailable"), in bytes.
std::optional<int64_t> ParseMeminfoBytes(const std::string& meminfo, const std::string& field);
// A cgroup limit or usage file's number ("max", v2's "no limit", is nullopt).
std::optional<int64_t> ParseCgroupBytes(const std::string& text);
// The cgroup path of this process's memory controller from /proc/self/cgroup: v2's "0::/path"
// or v1's "N:...memory...:/path"; `v2` says which was found.
std::optional<std::string> ParseMemoryCgroup(const std::string& proc_self_cgroup, bool* v2);
// --memory-limit's text: bytes with an optional K, M, G or T suffix (powers of 1024, as ulimit
// and container runtimes count them). nullopt if malformed, zero or over 2^62.
std::optional<int64_t> ParseMemorySize(const std::string& text);

}  // namespace strads
