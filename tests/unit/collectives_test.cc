// Collectives (core/src/collectives.h) on the in-process transport: results, the stamp that
// tells a node when another is in another collective call, and the bytes each node receives
// (what a collective holds at once on a node, not only what it returns).
#include "collectives.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "in_process_transport.h"
#include "strads/errors.h"
#include "strads/fnv1a.h"

namespace {

// The in-process transport, noting the largest payload this node received.
class CountingTransport : public strads::Transport {
 public:
  CountingTransport(strads::InProcessHub& hub, int node) : inner_(hub, node) {}
  int node() const override { return inner_.node(); }
  int nodes() const override { return inner_.nodes(); }
  void Send(int dest, strads::Tag tag, std::vector<std::byte> payload) override {
    largest_spare = std::max(largest_spare, payload.capacity() - payload.size());
    ++sends;
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
  size_t largest_spare = 0;  // of a sent payload's buffer: its capacity beyond its bytes
  size_t sends = 0;

 private:
  strads::InProcessTransport inner_;
};

}  // namespace

// Checksum hashes every DDS with HashInNodeOrder. It gathered the owned bytes on every node
// before, so at --nodes 64 each node held the whole DDS: a node must now receive only states
// (8 bytes, and the call's stamp of 20).
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
    CHECK(largest[p] <= sizeof(uint64_t) + 20);
  }
}

// A message's buffer lives until its receiver reads it: in the one-process cluster, every
// node's outgoing messages of a collective at once. The stamp appended to a payload made at its
// size must not double the buffer (planning's body lists at --nodes 64 held twice their bytes).
TEST_CASE("collectives: a sent message's buffer holds its bytes and the stamp, no more") {
  constexpr int kNodes = 3;
  constexpr size_t kBytes = 4096;
  strads::InProcessHub hub(kNodes);
  std::vector<size_t> spare(kNodes), got(kNodes);
  std::vector<std::thread> nodes;
  for (int p = 0; p < kNodes; ++p)
    nodes.emplace_back([&, p] {
      CountingTransport transport(hub, p);
      strads::Collectives collectives(transport, 30);
      std::vector<std::vector<std::byte>> out(kNodes);
      for (auto& payload : out) {
        payload.reserve(kBytes);  // made at its size, as ByteWriter::Reserve makes them
        payload.resize(kBytes, std::byte{7});
      }
      for (const auto& in : collectives.AllToAll(std::move(out))) got[p] += in.size();
      spare[p] = transport.largest_spare;
    });
  for (auto& t : nodes) t.join();
  for (int p = 0; p < kNodes; ++p) {
    CAPTURE(p);
    CHECK(got[p] == kNodes * kBytes);
    CHECK(spare[p] < 64);  // before: the stamp's append grew a 4 096-byte buffer to 8 192
  }
}

namespace {

// Two in-process nodes' transports and collectives, each waiting at most `timeout` seconds.
struct TwoNodes {
  explicit TwoNodes(double timeout) : c0(t0, timeout), c1(t1, timeout) {}
  strads::InProcessHub hub{2};
  strads::InProcessTransport t0{hub, 0}, t1{hub, 1};
  strads::Collectives c0, c1;
};

// Runs a(c0) on node 0 and b(c1) on node 1, each in its own thread; returns node 0's error
// text ("" if none). Node 1's error, if any, goes to `*theirs`.
template <class A, class B>
std::string OnTwoNodes(A a, B b, std::string* theirs) {
  TwoNodes n(5);
  auto &c0 = n.c0, &c1 = n.c1;
  std::string mine;
  std::thread other([&] {
    try {
      b(c1);
    } catch (const std::exception& e) {
      *theirs = e.what();
    }
  });
  try {
    a(c0);
  } catch (const std::exception& e) {
    mine = e.what();
  }
  other.join();
  return mine;
}

}  // namespace

TEST_CASE("collectives: calls in the same order agree, nested calls count once") {
  std::string theirs;
  int64_t sum0 = 0, sum1 = 0;
  const auto both = [](int64_t mine, int64_t* sum) {
    return [mine, sum](strads::Collectives& c) {
      c.Barrier();
      *sum = c.Sum(mine);  // an all-gather inside: one call
      c.DriverReturned();
      CHECK(c.calls() == 3);
    };
  };
  CHECK(OnTwoNodes(both(3, &sum0), both(4, &sum1), &theirs) == "");
  CHECK(theirs == "");
  CHECK(sum0 == 7);
  CHECK(sum1 == 7);
}

TEST_CASE("collectives: a node in another call, or past the driver, is named at once") {
  std::string theirs;
  const std::string mine = OnTwoNodes(
      [](strads::Collectives& c) {
        c.Barrier();
        c.Sum(1);  // node 1 skips this one
      },
      [](strads::Collectives& c) {
        c.Barrier();
        c.DriverReturned();
      },
      &theirs);
  // Each node receives the other's stamp, so both see the disagreement.
  CHECK(mine.find("node 0 is in its collective call 2, a sum, while node 1 returned from the "
                  "driver after 1 collective calls") != std::string::npos);
  CHECK(theirs.find("node 1 returned from the driver after 1 collective calls, while node 0 is in "
                    "its collective call 2, a sum") != std::string::npos);
  CHECK(mine.find("docs/porting.md, rule 1") != std::string::npos);

  const std::string kinds = OnTwoNodes([](strads::Collectives& c) { c.Barrier(); },
                                       [](strads::Collectives& c) { c.AnyTrue(true); }, &theirs);
  CHECK(kinds.find("node 0 is in its collective call 1, a barrier, while node 1 is in its "
                   "collective call 1, an any-true vote") != std::string::npos);
}

// Two nodes in one kind of collective at one count, inside operators with other arguments (an
// AsyncFor over other bounds): told apart by the operator's name; a scope ends with its
// operator, and a call's own `what` follows the operator's name.
TEST_CASE("collectives: calls inside operators with other names disagree, scopes nest") {
  const auto in = [](std::string name) {
    return [name](strads::Collectives& c) {
      {
        const strads::Collectives::OperatorScope outer(c, "outer");
        const strads::Collectives::OperatorScope scope(c, name);
        c.Barrier();
      }
      c.AllGather({}, "after");  // the scopes have ended: agrees
    };
  };
  std::string theirs;
  CHECK(OnTwoNodes(in("AsyncFor at a.cc:1 over [0, 9]"), in("AsyncFor at a.cc:1 over [0, 9]"),
                   &theirs) == "");
  CHECK(theirs == "");
  const std::string mine = OnTwoNodes(in("AsyncFor at a.cc:1 over [0, 9]"),
                                      in("AsyncFor at a.cc:1 over [0, 4]"), &theirs);
  CHECK(mine.find("node 0 is in its collective call 1, a barrier for AsyncFor at a.cc:1 over "
                  "[0, 9], while node 1 is in its collective call 1, a barrier for AsyncFor at "
                  "a.cc:1 over [0, 4]") != std::string::npos);

  const auto with_what = [](std::string what) {
    return [what](strads::Collectives& c) {
      const strads::Collectives::OperatorScope scope(c, "SyncFor at b.cc:2");
      c.AllGather({}, what);
    };
  };
  CHECK(OnTwoNodes(with_what("x"), with_what("y"), &theirs)
            .find("for SyncFor at b.cc:2, x, while node 1 is in its collective call 1, an "
                  "all-gather (as in Reduce, Sum, Min, Max) for SyncFor at b.cc:2, y") !=
        std::string::npos);
}

// ScatterMade: the root makes each node's message just before sending it (node order, its own
// last), so it never holds all of them (planning's cell-table replies, 64 x 0.5 MB at --nodes 64).
TEST_CASE("collectives: ScatterMade gives node p make(p), made on the root one at a time") {
  constexpr int kNodes = 4, kRoot = 1;
  strads::InProcessHub hub(kNodes);
  std::vector<std::vector<std::byte>> got(kNodes);
  std::vector<int> made;  // the root's make calls, in order
  bool made_elsewhere = false, made_before_sent = false;
  std::vector<std::thread> nodes;
  for (int p = 0; p < kNodes; ++p)
    nodes.emplace_back([&, p] {
      CountingTransport transport(hub, p);
      strads::Collectives collectives(transport, 30);
      got[p] = collectives.ScatterMade(kRoot, [&](int to) {
        made_elsewhere |= p != kRoot;
        made_before_sent |= transport.sends != made.size();  // one made earlier is not sent
        made.push_back(to);
        return std::vector<std::byte>(static_cast<size_t>(10 + to),
                                      std::byte{static_cast<uint8_t>(to)});
      });
    });
  for (auto& t : nodes) t.join();
  CHECK(made == std::vector<int>{0, 2, 3, kRoot});
  CHECK_FALSE(made_elsewhere);
  CHECK_FALSE(made_before_sent);
  for (int p = 0; p < kNodes; ++p) {
    CAPTURE(p);
    CHECK(got[p] ==
          std::vector<std::byte>(static_cast<size_t>(10 + p), std::byte{static_cast<uint8_t>(p)}));
  }
}

// ReceiveWatchingFlow: a node waiting for another's exchange message while that one has gone on
// to a collective (MPMD ranks with other --epochs) is told so within a few seconds, naming both
// places; a message that comes late, or a collective sent after the awaited message, is no error;
// a message that never comes is the Receive's timeout, naming the whole bound.
TEST_CASE("collectives: a node waiting for an exchange while the other is in a collective") {
  using strads::Tag;
  const auto awaited = [] { return std::string("blocks for phase 1 of 3"); };
  const auto bytes = [](uint8_t v) { return std::vector<std::byte>(3, std::byte{v}); };
  // Runs `other` on node 0 in a thread, then `mine` on node 1; returns each one's error text.
  const auto run = [](TwoNodes& n, auto other, auto mine) {
    std::pair<std::string, std::string> errors;
    std::thread thread([&] {
      try {
        other();
      } catch (const std::exception& e) {
        errors.first = e.what();
      }
    });
    try {
      mine();
    } catch (const std::exception& e) {
      errors.second = e.what();
      n.t1.Abort("test", 2);  // as the runtime does: node 0 stops waiting
    }
    thread.join();
    return errors;
  };

  SUBCASE("node 0 has left the loop for a collective: named within seconds") {
    // A barrier sends first (its message is the sign); a gather's root receives first (its wait
    // notice tells where it is).
    for (const bool receives_first : {false, true}) {
      CAPTURE(receives_first);
      TwoNodes n(30);
      const auto begin = std::chrono::steady_clock::now();
      const auto [theirs, mine] = run(
          n,
          [&] {
            if (receives_first)
              n.c0.Gather(0, bytes(1));
            else
              n.c0.Barrier();
          },
          [&] {
            const strads::Collectives::OperatorScope scope(n.c1, "AsyncFor at a.cc:1 over [0, 9]");
            n.c1.ReceiveWatchingFlow(0, Tag::kExchange, awaited);
          });
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      CHECK(mine.find(std::string("node 1 is in AsyncFor at a.cc:1 over [0, 9], waiting for node "
                                  "0's blocks for phase 1 of 3, while node 0 is in its "
                                  "collective call 1, ") +
                      (receives_first ? "a gather, waiting for node 1" : "a barrier")) !=
            std::string::npos);
      CHECK(mine.find("docs/porting.md, rule 1") != std::string::npos);
      CHECK(theirs == "another node failed");  // node 1's notice was from an earlier place
      CHECK(took < 20);                        // two checks a second apart, far from the 30 s bound
    }
  }
  SUBCASE("node 1 waits in a collective that receives first; node 0 sent it blocks instead") {
    TwoNodes n(30);
    const auto [theirs, mine] = run(
        n,
        [&] {
          n.t0.Send(1, Tag::kExchange, bytes(1));  // node 0 is in an AsyncFor's first phase
          const strads::Collectives::OperatorScope scope(n.c0, "AsyncFor at a.cc:1 over [0, 9]");
          n.c0.ReceiveWatchingFlow(1, Tag::kExchange, awaited);
        },
        [&] {
          const std::byte b{3};
          n.c1.HashInNodeOrder(0, &b, 1);  // node 1 receives node 0's state before sending
        });
    CHECK(mine.find("node 1 is in its collective call 1, a hash in node order (as in Checksum), "
                    "while node 0 has sent this node blocks of an AsyncFor's exchange between "
                    "rounds: it is in an AsyncFor call this node is not in") != std::string::npos);
    // Node 0 may have named it first from node 1's wait notice, or stopped when node 1 did.
    CHECK((theirs == "another node failed" ||
           theirs.find("node 0 is in AsyncFor at a.cc:1 over [0, 9], waiting for node 1's blocks "
                       "for phase 1 of 3, while node 1 is in its collective call 1, a hash in "
                       "node order (as in Checksum), waiting for node 0") != std::string::npos));
  }
  SUBCASE("the awaited message 2.5 s late, then a collective: received, the collective agrees") {
    TwoNodes n(30);
    strads::Message m;
    const auto [theirs, mine] = run(
        n,
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(2500));
          n.t0.Send(1, Tag::kExchange, bytes(7));
          n.c0.Barrier();
        },
        [&] {
          m = n.c1.ReceiveWatchingFlow(0, Tag::kExchange, awaited);
          n.c1.Barrier();
        });
    CHECK(m.payload == bytes(7));
    CHECK(theirs == "");
    CHECK(mine == "");
  }
  SUBCASE("the awaited message and a collective sent at once, received a while later") {
    TwoNodes n(30);
    n.t0.Send(1, Tag::kExchange, bytes(9));
    std::thread other([&] { n.c0.Barrier(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    CHECK(n.c1.ReceiveWatchingFlow(0, Tag::kExchange, awaited).payload == bytes(9));
    n.c1.Barrier();
    other.join();
  }
  SUBCASE("nothing comes: the timeout names the whole bound, not the last check's slice") {
    TwoNodes n(2.5);
    std::string mine;
    try {
      n.c1.ReceiveWatchingFlow(0, Tag::kExchange, awaited);
    } catch (const strads::TimeoutError& e) {
      mine = e.what();
    }
    CHECK(mine.starts_with("node 1 waited 2.5 s for a message (tag 2) from node 0"));
  }
}

// Wait notices: two nodes that each wait to receive first, in other calls, have nothing in
// flight to tell them apart; each one's notice tells the other where it waits. A notice from a
// place the receiver has passed (a wait that ended since) is no error.
TEST_CASE("collectives: nodes that both receive first in other calls name each other's wait") {
  const auto in_thread = [](auto work, std::string* error) {
    return std::thread([work, error] {
      try {
        work();
      } catch (const std::exception& e) {
        *error = e.what();
      }
    });
  };
  SUBCASE("a gather's root and a hash in node order, both call 1") {
    TwoNodes n(30);
    std::string first, second;
    const auto begin = std::chrono::steady_clock::now();
    std::thread node0 = in_thread([&] { n.c0.Gather(0, {}); }, &first);
    std::thread node1 = in_thread(
        [&] {
          const std::byte b{3};
          n.c1.HashInNodeOrder(0, &b, 1);
        },
        &second);
    node0.join();
    node1.join();
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    CHECK(first.find("node 0 is in its collective call 1, a gather, while node 1 is in its "
                     "collective call 1, a hash in node order (as in Checksum), waiting for "
                     "node 0: every node must call the operators") != std::string::npos);
    CHECK(second.find("node 1 is in its collective call 1, a hash in node order (as in "
                      "Checksum), while node 0 is in its collective call 1, a gather, waiting "
                      "for node 1") != std::string::npos);
    CHECK(took < 20);  // a notice after the first check, two checks to be sure: seconds
  }
  SUBCASE("a notice from a wait that has ended since is let go") {
    TwoNodes n(30);
    std::string first, second;
    // Node 0 waits 2.5 s in the barrier for node 1 (and sends it a notice of that wait); then
    // node 1 waits 2.5 s in the broadcast for node 0, finding the barrier's notice, stale.
    std::thread node0 = in_thread(
        [&] {
          n.c0.Barrier();
          std::this_thread::sleep_for(std::chrono::milliseconds(2500));
          n.c0.Broadcast(0, std::vector<std::byte>(2, std::byte{5}));
        },
        &first);
    std::vector<std::byte> got;
    std::thread node1 = in_thread(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(2500));
          n.c1.Barrier();
          got = n.c1.Broadcast(0, {});
        },
        &second);
    node0.join();
    node1.join();
    CHECK(first == "");
    CHECK(second == "");
    CHECK(got == std::vector<std::byte>(2, std::byte{5}));
  }
}

// A node that never waits itself still reads the notices of the nodes that waited for it, as
// their messages come: none stays in its transport's queue (which MPI searches at every receive)
// for the rest of the run.
TEST_CASE("collectives: a wait notice is read with the sender's next message") {
  TwoNodes n(30);
  std::thread waiter([&] { n.c1.Barrier(); });  // waits about 1.5 s for node 0: a notice
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  n.c0.Barrier();
  waiter.join();
  CHECK_FALSE(n.t0.Poll(1, strads::Tag::kWaitNotice));
}

// No false alarm: three nodes in the same calls, each late by up to 2.5 s at other calls, wait
// past their first checks and send notices in every kind of call (a gather's root, a chain, a
// broadcast, an all-to-all); every call completes with the right values and no error.
TEST_CASE("collectives: late nodes in the same calls send notices and raise nothing") {
  constexpr int kNodes = 3, kCalls = 5;
  // late[p][c]: node p sleeps that many ms before call c (each call has a long wait somewhere).
  const int late[kNodes][kCalls] = {
      {2500, 0, 0, 1500, 0}, {0, 2500, 0, 0, 1500}, {0, 0, 2500, 1500, 0}};
  strads::InProcessHub hub(kNodes);
  std::vector<std::string> errors(kNodes);
  std::vector<uint64_t> hashes(kNodes);
  std::vector<int64_t> sums(kNodes);
  std::vector<std::thread> nodes;
  for (int p = 0; p < kNodes; ++p)
    nodes.emplace_back([&, p] {
      strads::InProcessTransport transport(hub, p);
      strads::Collectives c(transport, 30);
      const auto sleep = [&](int call) {
        std::this_thread::sleep_for(std::chrono::milliseconds(late[p][call]));
      };
      try {
        sleep(0);
        c.Gather(0, std::vector<std::byte>(1, std::byte{static_cast<uint8_t>(p)}));
        sleep(1);
        const std::byte b{static_cast<uint8_t>(p)};
        hashes[p] = c.HashInNodeOrder(0, &b, 1);
        sleep(2);
        c.Broadcast(2, std::vector<std::byte>(2, std::byte{9}));
        sleep(3);
        sums[p] = c.Sum(p + 1);
        sleep(4);
        c.DriverReturned();
      } catch (const std::exception& e) {
        errors[p] = e.what();
      }
    });
  for (auto& t : nodes) t.join();
  for (int p = 0; p < kNodes; ++p) {
    CAPTURE(p);
    CHECK(errors[p] == "");
    CHECK(hashes[p] == hashes[0]);
    CHECK(sums[p] == 6);
  }
}
