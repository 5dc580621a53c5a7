// MemoryHeadroom (core/src/memory_headroom.h): the parsers of /proc and cgroup files and of
// --memory-limit, and a refusal naming what was to be allocated and what bounds it.
#include "memory_headroom.h"

#include <doctest/doctest.h>

#include <string>

#include "strads/errors.h"
#include "strads/runtime.h"

TEST_CASE("memory headroom: /proc/meminfo's fields, in bytes; other lines or units are not it") {
  const std::string meminfo =
      "MemTotal:       24558064 kB\nMemFree:        21130420 kB\n"
      "MemAvailable:   22887204 kB\nBuffers:          123 kB\nSwapFree:    0 kB\n";
  CHECK(strads::ParseMeminfoBytes(meminfo, "MemAvailable") == int64_t{22887204} * 1024);
  CHECK(strads::ParseMeminfoBytes(meminfo, "SwapFree") == 0);
  CHECK_FALSE(strads::ParseMeminfoBytes(meminfo, "Mem"));  // a prefix of fields is none of them
  CHECK_FALSE(strads::ParseMeminfoBytes("MemTotal: 1 kB\n", "MemAvailable"));
  for (const char* bad : {"MemAvailable: 12 MB\n", "MemAvailable: -5 kB\n",
                          "MemAvailable: 99999999999999999999 kB\n", ""}) {
    CAPTURE(bad);
    CHECK_FALSE(strads::ParseMeminfoBytes(bad, "MemAvailable"));
  }
}

TEST_CASE("memory headroom: the memory cgroup of v1 and v2, and their numbers") {
  bool v2 = false;
  // v2 only.
  CHECK(strads::ParseMemoryCgroup("0::/user.slice/job-7\n", &v2) == "/user.slice/job-7");
  CHECK(v2);
  // v1 (this machine's layout): the memory controller's line, not the unified one.
  const std::string v1 =
      "9:name=systemd:/\n4:memory:/process_api/5f6f\n3:cpuset:/\n1:cpu,cpuacct:/\n0::/\n";
  CHECK(strads::ParseMemoryCgroup(v1, &v2) == "/process_api/5f6f");
  CHECK_FALSE(v2);
  CHECK(strads::ParseMemoryCgroup("5:cpu,memory,pids:/a\n", &v2) == "/a");
  CHECK_FALSE(strads::ParseMemoryCgroup("garbage\n3:cpuset:/\n", &v2));
  CHECK_FALSE(strads::ParseMemoryCgroup("", &v2));

  CHECK(strads::ParseCgroupBytes("1073741824\n") == int64_t{1} << 30);
  CHECK_FALSE(strads::ParseCgroupBytes("max\n"));  // v2: no limit
  CHECK_FALSE(strads::ParseCgroupBytes(""));
  CHECK_FALSE(strads::ParseCgroupBytes("12abc"));
}

TEST_CASE("memory headroom: --memory-limit sizes, powers of 1024; malformed, zero or huge ones") {
  CHECK(strads::ParseMemorySize("4096") == 4096);
  CHECK(strads::ParseMemorySize("512M") == int64_t{512} << 20);
  CHECK(strads::ParseMemorySize("20g") == int64_t{20} << 30);
  CHECK(strads::ParseMemorySize("3K") == 3072);
  CHECK(strads::ParseMemorySize("1T") == int64_t{1} << 40);
  for (const char* bad :
       {"", "0", "0G", "G", "-1G", "1.5G", "1GB", "12 M", "4194305T", "99999999999999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(strads::ParseMemorySize(bad));
  }
}

TEST_CASE("memory headroom: an allocation beyond --memory-limit is refused, naming both") {
  strads::RuntimeOptions options;
  options.memory_limit = int64_t{1} << 40;  // far beyond this process: the machine bounds it
  const strads::MemoryHeadroom machine = strads::CurrentMemoryHeadroom(0);
  REQUIRE(machine.bytes > 0);
  REQUIRE(machine.bytes < INT64_MAX);  // /proc/meminfo is readable on Linux
  CHECK_NOTHROW(strads::EnsureMemoryHeadroom(options, "x", 1e6, ""));

  // A limit below what the process already holds: nothing more may be allocated.
  options.memory_limit = 4096;
  const strads::MemoryHeadroom limited = strads::CurrentMemoryHeadroom(options.memory_limit);
  CHECK(limited.bytes == 0);
  CHECK(limited.bound == "--memory-limit, less this process's resident memory");
  std::string error;
  try {
    strads::EnsureMemoryHeadroom(options, "the plan of AsyncFor at a.cc:3", 2.5e9, "use less");
  } catch (const strads::UsageError& e) {
    error = e.what();
  }
  CHECK(error ==
        "the plan of AsyncFor at a.cc:3 needs about 2.5 GB, over nine tenths of the 0 GB this "
        "process can still use (--memory-limit, less this process's resident memory); use less");

  // Beyond the machine's available memory whatever the limit.
  options.memory_limit = 0;
  CHECK_THROWS_AS(
      strads::EnsureMemoryHeadroom(options, "x", 2.0 * static_cast<double>(machine.bytes), ""),
      strads::UsageError);
}

TEST_CASE("memory headroom: small asks reuse a reading, and a large one after them is refused") {
  strads::RuntimeOptions options;
  options.memory_limit = int64_t{1} << 40;
  const strads::MemoryHeadroom machine = strads::CurrentMemoryHeadroom(0);
  REQUIRE(machine.bytes < INT64_MAX);
  const int64_t before = strads::MemoryHeadroomReadings();
  for (int k = 0; k < 1000; ++k) CHECK_NOTHROW(strads::EnsureMemoryHeadroom(options, "x", 1e3, ""));
  // One reading a second at most (a sanitizer's build may take two seconds here), not 1000.
  CHECK(strads::MemoryHeadroomReadings() - before <= 3);
  // An ask beyond a sixteenth of the reading reads again, so the small ones hide no large one.
  const int64_t after_small = strads::MemoryHeadroomReadings();
  CHECK_THROWS_AS(
      strads::EnsureMemoryHeadroom(options, "x", 0.95 * static_cast<double>(machine.bytes), ""),
      strads::UsageError);
  CHECK(strads::MemoryHeadroomReadings() == after_small + 1);
}

TEST_CASE(
    "memory headroom: what every node holds is named with its count, the nodes and the bytes") {
  strads::RuntimeOptions options;
  options.memory_limit = 4096;  // below what the process holds: nothing more fits
  options.nodes = 4;
  std::string error;
  try {
    strads::EnsureNodesHeadroom(options, "node 3: the plan of AsyncFor at a.cc:7", 1000, "bodies",
                                12);
  } catch (const strads::UsageError& e) {
    error = e.what();
  }
  CHECK(error ==
        "node 3: the plan of AsyncFor at a.cc:7 (1000 bodies on each of 4 node(s) of this "
        "process, about 12 bytes each) needs about 4.8e-05 GB, over nine tenths of the 0 GB "
        "this process can still use (--memory-limit, less this process's resident memory); " +
            std::string(strads::kMoreNodesAdvice));
}
