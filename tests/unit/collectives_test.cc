// Collectives (core/src/collectives.h): results on two in-process nodes, and the stamp that
// tells a node when the other is in another collective call.
#include "collectives.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "in_process_transport.h"
#include "strads/errors.h"

namespace {

// Runs a(c0) on node 0 and b(c1) on node 1, each in its own thread; returns node 0's error
// text ("" if none). Node 1's error, if any, goes to `*theirs`.
template <class A, class B>
std::string OnTwoNodes(A a, B b, std::string* theirs) {
  strads::InProcessHub hub(2);
  strads::InProcessTransport t0(hub, 0), t1(hub, 1);
  strads::Collectives c0(t0, 5), c1(t1, 5);
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
