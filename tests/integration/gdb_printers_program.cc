// A strads program for the gdb printer tests (gdb_printers.sh): on 2 logical nodes it builds a
// dvector, a dmap, a dmultimap, a held SeamLock, a trace event, a dvector-shaped block of
// garbage and a dmatrix, and hands them to Inspect, where the test stops and prints them.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "strads/dmultimap.h"
#include "strads/seam/seam_lock.h"
#include "strads/strads.h"
#include "strads/trace/event.h"

namespace {

// Where gdb stops: the arguments stay in their stack slots (the file is built at -O0).
[[gnu::noinline]] void Inspect(const strads::Runtime& rt, const strads::dvector<int64_t>& squares,
                               const strads::dmap<int64_t, double>& halves,
                               const strads::dmultimap<int64_t, int64_t>& multiples,
                               const strads::SeamLock& lock, const strads::Event& event,
                               const strads::dvector<int64_t>& corrupt,
                               const strads::dmatrix<int64_t>& grid) {
  asm volatile(""
               :
               : "r"(&rt), "r"(&squares), "r"(&halves), "r"(&multiples), "r"(&lock), "r"(&event),
                 "r"(&corrupt), "r"(&grid)
               : "memory");
}

}  // namespace

int main(int argc, char** argv) {
  return strads::Run(argc, argv, [](strads::Runtime& rt) {
    auto& squares = strads::MakeDVector<int64_t>(
        rt, 40, [](int64_t i) { return i * i; }, "squares");
    std::vector<std::pair<int64_t, double>> halves;
    std::vector<std::pair<int64_t, int64_t>> multiples;
    for (int64_t k = rt.node(); k < 6; k += rt.nodes()) {
      halves.emplace_back(k, k / 2.0);
      multiples.emplace_back(k % 3, 10 * k);
    }
    // Rows of a width chosen at run time: row i is {10 i, 10 i + 1, 10 i + 2}.
    auto& grid = strads::MakeDMatrix<int64_t>(
        rt, 10, 3,
        [](int64_t i, std::span<int64_t> row) {
          for (size_t j = 0; j < row.size(); ++j) row[j] = 10 * i + static_cast<int64_t>(j);
        },
        "grid");
    auto& half_map = strads::MakeDMap<int64_t, double>(rt, halves, "halves");
    auto& multiple_map = strads::MakeDMultimap<int64_t, int64_t>(rt, multiples, "multiples");
    strads::SeamLock lock;
    lock.Release(strads::SeamLock::Grant(1, 7));
    uint64_t before = lock.word.load();
    while (!lock.TryTake(before, before)) {
    }  // held again, keeping the release by thread 1 after its acquire 7
    const strads::Event event = strads::Event::LockGrant(
        {.thread = 1, .lock_id = 5, .task = 9, .acquire = 3, .from_thread = 0, .from_count = 2});
    // The bytes of a dvector whose size and name are garbage.
    alignas(strads::dvector<int64_t>) unsigned char garbage[sizeof(strads::dvector<int64_t>)];
    std::memset(garbage, 0xa5, sizeof garbage);
    if (rt.node() == 1) {  // what gdb must show of this node's maps, then gdb's stop
      std::printf("node 1 halves:");
      for (const auto& [k, v] : half_map.local()) std::printf(" [%lld] = %g", (long long)k, v);
      std::printf("\nnode 1 multiples:");
      for (const auto& [k, v] : multiple_map.local())
        std::printf(" [%lld] = %lld", (long long)k, (long long)v);
      std::printf("\n");
      std::fflush(stdout);
      Inspect(rt, squares, half_map, multiple_map, lock, event,
              *reinterpret_cast<const strads::dvector<int64_t>*>(garbage), grid);
    }
  });
}
