// The bound of a wait for another node (seam/wait_bound.h): --timeout's range and saturating
// deadlines, on the in-process transport.
#include "strads/seam/wait_bound.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "in_process_transport.h"

using strads::DeadlineAfter;
using strads::WaitBoundError;

TEST_CASE("wait bound: --timeout accepts a millisecond to 30 days and refuses NaN, 0, inf") {
  CHECK(WaitBoundError(120).empty());
  CHECK(WaitBoundError(strads::kMinWaitSeconds).empty());
  CHECK(WaitBoundError(strads::kMaxWaitSeconds).empty());
  CHECK(WaitBoundError(std::nan("")) == "is not a number");
  for (double bad : {0.0, -1.0, 1e10, 1e300, std::numeric_limits<double>::infinity()})
    CHECK(WaitBoundError(bad).find("out of range") != std::string::npos);
}

TEST_CASE("wait bound: a deadline saturates instead of overflowing into the past") {
  const auto now = std::chrono::steady_clock::now();
  const auto year = std::chrono::hours(24 * 365);
  for (double far : {1e10, 1e20, 1e300, std::numeric_limits<double>::infinity()})
    CHECK(DeadlineAfter(far) > now + year);
  for (double none : {std::nan(""), -5.0}) {
    const auto deadline = DeadlineAfter(none);  // before the now() it is compared with
    CHECK(deadline <= std::chrono::steady_clock::now());
  }
}

// 1e10 s overflowed steady_clock's nanoseconds into the past (the wait failed at once); 1e20
// overflowed into undefined behaviour (a livelock holding the mailbox). Either way the message
// that another node sends a little later was never received.
TEST_CASE("wait bound: a receive with a huge timeout gets a message sent later") {
  for (double timeout : {1e10, 1e20, 1e300}) {
    CAPTURE(timeout);
    strads::InProcessHub hub(2);
    strads::InProcessTransport receiver(hub, 0), sender(hub, 1);
    std::thread later([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      sender.Send(0, strads::Tag::kCollective, {std::byte{42}});
    });
    const strads::Message m = receiver.Receive(1, strads::Tag::kCollective, timeout);
    later.join();
    REQUIRE(m.payload.size() == 1);
    CHECK(m.payload[0] == std::byte{42});
  }
}
