#include "memory_headroom.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "strads/errors.h"
#include "strads/runtime.h"

namespace strads {

namespace {

// A small /proc or /sys file's text ("" if unreadable). Read with a bound: these are lines.
std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// A whole non-negative decimal number, else nullopt.
std::optional<int64_t> ParseCount(const std::string& digits) {
  if (digits.empty() || digits.size() > 19 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  errno = 0;
  const unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
  if (errno != 0 || v > static_cast<unsigned long long>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::string Trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\n") - begin + 1);
}

// The cgroup's limit less its usage, if it has a limit the files say.
std::optional<int64_t> CgroupHeadroom() {
  bool v2 = false;
  const auto path = ParseMemoryCgroup(ReadSmallFile("/proc/self/cgroup"), &v2);
  if (!path) return std::nullopt;
  const std::string mount = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
  const char* limit_file = v2 ? "/memory.max" : "/memory.limit_in_bytes";
  const char* usage_file = v2 ? "/memory.current" : "/memory.usage_in_bytes";
  // Under a cgroup namespace the process's path is relative to a root mounted at `mount`
  // (a container sees "/"); without one, the path is below the mount.
  for (const std::string& dir : {mount + *path, mount}) {
    const auto limit = ParseCgroupBytes(ReadSmallFile(dir + limit_file));
    const auto usage = ParseCgroupBytes(ReadSmallFile(dir + usage_file));
    // v1 says "no limit" with a number near 2^63 (rounded to pages).
    if (limit && usage && *limit < (int64_t{1} << 62)) return std::max<int64_t>(0, *limit - *usage);
    if (limit || usage) break;  // the files are here: no limit
  }
  return std::nullopt;
}

int64_t ResidentBytesOfProcess() {
  std::istringstream statm(ReadSmallFile("/proc/self/statm"));
  long long size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return static_cast<int64_t>(resident) * ::sysconf(_SC_PAGESIZE);
}

// The last reading, reused for small asks. An ask that, with every ask passed since the reading,
// stays within a sixteenth of the headroom read would pass a fresh reading too (nine tenths of
// what is left after them is more), unless something else took more than the rest since: the
// reading is trusted for a second only. A program that makes thousands of small DDSs then pays
// one /proc reading a second, not one a DDS (about 80 us each), and no ask goes unchecked.
struct LastReading {
  std::mutex mutex;
  bool valid = false;
  int64_t memory_limit = 0;
  std::chrono::steady_clock::time_point at;
  MemoryHeadroom headroom;
  double asked_since = 0;  // bytes of the asks passed since the reading
};
LastReading last_reading;
std::atomic<int64_t> readings{0};

}  // namespace

std::optional<int64_t> ParseMeminfoBytes(const std::string& meminfo, const std::string& field) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(field + ":")) continue;
    std::istringstream fields(line.substr(field.size() + 1));
    std::string number, unit;
    fields >> number >> unit;
    const auto kb = ParseCount(number);
    if (!kb || unit != "kB" || *kb > INT64_MAX / 1024) return std::nullopt;
    return *kb * 1024;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseCgroupBytes(const std::string& text) {
  return ParseCount(Trimmed(text));  // "max" is no number: no limit
}

std::optional<std::string> ParseMemoryCgroup(const std::string& proc_self_cgroup, bool* v2) {
  std::istringstream in(proc_self_cgroup);
  std::string line;
  std::optional<std::string> unified;
  while (std::getline(in, line)) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (path.empty() || path[0] != '/') continue;
    if (line.substr(0, first) == "0" && controllers.empty()) {
      unified = path;
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ','))
      if (name == "memory") {
        *v2 = false;  // v1's memory controller holds the limit even beside a unified line
        return path;
      }
  }
  if (unified) *v2 = true;
  return unified;
}

std::optional<int64_t> ParseMemorySize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  int shift = 0;
  std::string digits = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      shift = 10;
      break;
    case 'M':
    case 'm':
      shift = 20;
      break;
    case 'G':
    case 'g':
      shift = 30;
      break;
    case 'T':
    case 't':
      shift = 40;
      break;
    default:
      break;
  }
  if (shift != 0) digits.pop_back();
  const auto n = ParseCount(digits);
  if (!n || *n == 0 || *n > (int64_t{1} << (62 - shift))) return std::nullopt;
  return *n << shift;
}

MemoryHeadroom CurrentMemoryHeadroom(int64_t memory_limit) {
  readings.fetch_add(1, std::memory_order_relaxed);
  MemoryHeadroom headroom;
  const std::string meminfo = ReadSmallFile("/proc/meminfo");
  if (const auto available = ParseMeminfoBytes(meminfo, "MemAvailable")) {
    // Swap is slow, not fatal: a run that fits with it goes on.
    headroom.bytes = *available + ParseMeminfoBytes(meminfo, "SwapFree").value_or(0);
    headroom.bound = "this machine's available memory and free swap (MemAvailable, SwapFree)";
  }
  if (const auto cgroup = CgroupHeadroom(); cgroup && *cgroup < headroom.bytes) {
    headroom.bytes = *cgroup;
    headroom.bound = "the memory limit of this process's cgroup, less its usage";
  }
  if (memory_limit > 0) {
    const int64_t left = std::max<int64_t>(0, memory_limit - ResidentBytesOfProcess());
    if (left < headroom.bytes) {
      headroom.bytes = left;
      headroom.bound = "--memory-limit, less this process's resident memory";
    }
  }
  return headroom;
}

void EnsureMemoryHeadroom(const RuntimeOptions& options, const std::string& what, double bytes,
                          const std::string& advice) {
  MemoryHeadroom headroom;
  {
    std::lock_guard lock(last_reading.mutex);
    const auto now = std::chrono::steady_clock::now();
    LastReading& last = last_reading;
    if (last.valid && last.memory_limit == options.memory_limit &&
        now - last.at < std::chrono::seconds(1) &&
        last.asked_since + bytes <= static_cast<double>(last.headroom.bytes) / 16) {
      last.asked_since += bytes;
      return;
    }
    headroom = CurrentMemoryHeadroom(options.memory_limit);
    last.valid = true;
    last.memory_limit = options.memory_limit;
    last.at = now;
    last.headroom = headroom;
    last.asked_since = 0;
    if (headroom.bytes == INT64_MAX || bytes <= 0.9 * static_cast<double>(headroom.bytes)) {
      last.asked_since = bytes;
      return;
    }
  }
  char numbers[160];
  std::snprintf(numbers, sizeof numbers,
                " needs about %.3g GB, over nine tenths of the %.3g GB this process can",
                bytes / 1e9, static_cast<double>(headroom.bytes) / 1e9);
  throw UsageError(what + numbers + " still use (" + headroom.bound + ")" +
                   (advice.empty() ? "" : "; " + advice));
}

void EnsureNodesHeadroom(const RuntimeOptions& options, const std::string& what, int64_t count,
                         const char* items, size_t item_bytes) {
  const int in_process = std::max(1, options.nodes);
  EnsureMemoryHeadroom(options,
                       what + " (" + std::to_string(count) + " " + items + " on each of " +
                           std::to_string(in_process) + " node(s) of this process, about " +
                           std::to_string(item_bytes) + " bytes each)",
                       static_cast<double>(count) * static_cast<double>(item_bytes) * in_process,
                       kMoreNodesAdvice);
}

int64_t MemoryHeadroomReadings() { return readings.load(std::memory_order_relaxed); }

}  // namespace strads
