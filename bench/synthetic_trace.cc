// Writes a synthetic lock-engine-shaped trace of about EVENTS events through TraceWriter, for
// the viewer's scale benchmarks (bench/export_bench.sh): NODES nodes of THREADS worker threads,
// one AsyncFor invocation per millisecond of steady clock, each with logged lock grants that
// hand locks between threads, lock waits, deliveries from the other nodes, a choice, the thread
// digests, and operator begin and end times.
//   synthetic_trace DIR EVENTS [NODES [THREADS]]
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "strads/trace/event.h"
#include "strads/trace/manifest.h"
#include "strads/trace/writer.h"

namespace {

constexpr uint64_t kGrantsPerThread = 240;  // logged, per thread and invocation
constexpr uint64_t kAcquiresPerGrant = 4;   // the other acquires are implied
constexpr uint64_t kInvocationNs = 1000000;

void WriteNode(const std::string& dir, int node, int nodes, uint32_t threads, uint64_t events) {
  using strads::Event;
  auto writer = strads::TraceWriter::Create(dir, node);
  writer->DefineSite(0, "AsyncFor", "synthetic.cc", 10);
  const uint32_t driver = threads;
  std::vector<uint64_t> acquires(threads, 0), digest(threads, 0);
  std::vector<uint64_t> seq(static_cast<size_t>(nodes), 0);
  std::vector<Event> batch;
  uint64_t written = 0;
  for (uint64_t k = 0; written < events; ++k) {
    const uint64_t t0 = 1000000000 + k * kInvocationNs;
    batch.clear();
    batch.push_back(Event::OperatorBegin({driver, 0, k, t0}));
    for (uint32_t t = 0; t < threads; ++t) {
      const uint32_t from = (t + 1) % threads;
      const uint64_t from_count = acquires[from];  // released before this invocation
      for (uint64_t g = 0; g < kGrantsPerThread; ++g) {
        acquires[t] += kAcquiresPerGrant;
        const uint64_t lock = (uint64_t{1} << 40) | ((k * 7919 + g * 31 + t) % 5000);
        digest[t] = digest[t] * 0x1000193 ^ lock;
        if (g % 60 == 0) batch.push_back(Event::Wait({t, 1, t0 + 1000 + g * 3000, 2000, lock}));
        if (from_count > 0 && threads > 1)
          batch.push_back(Event::LockGrant(
              {t, lock, k * 1000 + g, acquires[t], from, from_count - g % from_count}));
      }
    }
    for (int source = 0; source < nodes; ++source)
      if (source != node)
        batch.push_back(Event::Delivery(
            {driver, static_cast<uint64_t>(source), seq[static_cast<size_t>(source)]++, 3}));
    batch.push_back(Event::Choice({driver, 2, k % threads}));
    batch.push_back(Event::Wait(
        {driver, 3, t0 + kInvocationNs - 60000, 30000, static_cast<uint64_t>((node + 1) % nodes)}));
    for (uint32_t t = 0; t < threads; ++t)
      batch.push_back(Event::ThreadDigest({t, acquires[t], digest[t]}));
    batch.push_back(Event::OperatorEnd({driver, 0, k, t0 + kInvocationNs - 10000}));
    writer->Append(batch);
    written += batch.size();
  }
  writer->Close();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: synthetic_trace DIR EVENTS [NODES [THREADS]]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const uint64_t events = std::strtoull(argv[2], nullptr, 10);
  const int nodes = argc > 3 ? std::atoi(argv[3]) : 2;
  const uint32_t threads = argc > 4 ? static_cast<uint32_t>(std::atoi(argv[4])) : 4;
  if (nodes < 1 || threads < 1 || ::mkdir(dir.c_str(), 0777) != 0) {
    std::fprintf(stderr, "synthetic_trace: bad arguments, or %s exists\n", dir.c_str());
    return 2;
  }
  strads::ManifestInfo info;
  info.program = "synthetic_trace";
  info.build_id = "synthetic";
  info.node_count = static_cast<uint32_t>(nodes);
  info.threads_per_node = threads;
  info.start_time_ns = strads::ManifestWriter::NowNs();
  strads::ManifestWriter manifest(dir, info);
  manifest.WriteStart();
  for (int k = 0; k < nodes; ++k)
    WriteNode(dir, k, nodes, threads, events / static_cast<uint64_t>(nodes));
  manifest.WriteCleanClose();
  return 0;
}
