// Collectives (collectives.h) on the in-process transport, counting the bytes each node
// receives: what a collective holds at once on a node, not only what it returns.
#include "collectives.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "in_process_transport.h"
#include "strads/fnv1a.h"

namespace {

// The in-process transport, noting the largest payload this node received.
class CountingTransport : public strads::Transport {
 public:
  CountingTransport(strads::InProcessHub& hub, int node) : inner_(hub, node) {}
  int node() const override { return inner_.node(); }
  int nodes() const override { return inner_.nodes(); }
  void Send(int dest, strads::Tag tag, std::vector<std::byte> payload) override {
    inner_.Send(dest, tag, std::move(payload));
  }
  strads::Message Receive(int source, strads::Tag tag, double timeout_seconds) override {
    strads::Message m = inner_.Receive(source, tag, timeout_seconds);
    largest_received = std::max(largest_received, m.payload.size());
    return m;
  }
  bool Poll(int source, strads::Tag tag) override { return inner_.Poll(source, tag); }
  void Abort(const char* why, int exit_code) noexcept override { inner_.Abort(why, exit_code); }

  size_t largest_received = 0;

 private:
  strads::InProcessTransport inner_;
};

}  // namespace

// Checksum hashes every DDS with HashInNodeOrder. It gathered the owned bytes on every node
// before, so at --nodes 64 each node held the whole DDS: a node must now receive only states.
TEST_CASE("HashInNodeOrder: FNV-1a of the bytes in node order, on every node, 8-byte messages") {
  constexpr int kNodes = 4;
  constexpr size_t kBytesPerNode = 1000;
  std::vector<std::vector<std::byte>> parts(kNodes);
  strads::Fnv1a serial;
  serial.Update("seed", 4);  // a state carried over from an earlier DDS
  const uint64_t start = serial.digest();
  for (int p = 0; p < kNodes; ++p) {
    for (size_t i = 0; i < kBytesPerNode; ++i)
      parts[p].push_back(static_cast<std::byte>((p * 131 + i * 7) & 0xff));
    serial.Update(parts[p].data(), parts[p].size());
  }
  strads::InProcessHub hub(kNodes);
  std::vector<uint64_t> result(kNodes);
  std::vector<size_t> largest(kNodes);
  std::vector<std::thread> nodes;
  for (int p = 0; p < kNodes; ++p)
    nodes.emplace_back([&, p] {
      CountingTransport transport(hub, p);
      strads::Collectives collectives(transport, 30);
      result[p] = collectives.HashInNodeOrder(start, parts[p].data(), parts[p].size());
      largest[p] = transport.largest_received;
    });
  for (auto& t : nodes) t.join();
  for (int p = 0; p < kNodes; ++p) {
    CAPTURE(p);
    CHECK(result[p] == serial.digest());
    CHECK(largest[p] <= sizeof(uint64_t));
  }
}
