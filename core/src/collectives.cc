#include "collectives.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "strads/errors.h"
#include "strads/fnv1a.h"
#include "strads/seam/ordering.h"  // SteadyNowNs, kWaitReportNs

namespace strads {

namespace {

// The stamp's last word, so that a message without one (a defect in the runtime) is told apart
// from one of another call.
constexpr uint32_t kStampMark = 0x53434f4c;
// After the payload: `what` (its bytes), then its length, the call number, the kind and the mark.
constexpr size_t kStampBytes = sizeof(uint64_t) + 3 * sizeof(uint32_t);

const char* KindName(Collectives::Kind kind) {
  switch (kind) {
    case Collectives::Kind::kAllToAll:
      return "an all-to-all";
    case Collectives::Kind::kAllGather:
      return "an all-gather (as in Reduce, Sum, Min, Max)";
    case Collectives::Kind::kGather:
      return "a gather";
    case Collectives::Kind::kScatter:
      return "a scatter";
    case Collectives::Kind::kBroadcast:
      return "a broadcast";
    case Collectives::Kind::kSumEach:
      return "an element-wise sum";
    case Collectives::Kind::kBarrier:
      return "a barrier";
    case Collectives::Kind::kAnyTrue:
      return "an any-true vote";
    case Collectives::Kind::kSum:
      return "a sum";
    case Collectives::Kind::kHashInNodeOrder:
      return "a hash in node order (as in Checksum)";
    case Collectives::Kind::kDriverReturned:
      return "the barrier after the driver returned";
    case Collectives::Kind::kDriverRead:
      return "a driver read of DDS elements";
  }
  return "an unknown collective";
}

std::string NodeName(int n) { return "node " + std::to_string(n); }

std::string DescribeCall(const std::string& who, uint64_t n, Collectives::Kind k,
                         const std::string& w) {
  if (k == Collectives::Kind::kDriverReturned)
    return who + " returned from the driver after " + std::to_string(n - 1) + " collective calls";
  return who + " is in its collective call " + std::to_string(n) + ", " + KindName(k) +
         (w.empty() ? "" : " for " + w);
}

constexpr const char* kSameOrderRule =
    ": every node must call the operators (MakeDVector, AsyncFor, SyncFor, Sum, Checksum, ...) "
    "in the same order with the same arguments; one was called on some nodes only, or under a "
    "condition that differs between nodes (docs/porting.md, rule 1)";

// Added where one of the two calls is a driver read, which nodes make by their own state.
constexpr const char* kDriverReadRule =
    "; a driver read of an element another node holds is collective too: every node makes it "
    "unless it still holds the element's block since the last operator or collective call, and "
    "a mutable local() made on some nodes only (inside `if (rt.leader())`, say) makes only those "
    "read it again; read through a const reference there, std::as_const(x).local() "
    "(docs/porting.md, rule 9)";

// A wait notice's `what`, at most this long: notices stay small (an eager MPI send, complete
// whether or not it is ever read).
constexpr size_t kNoticeWhatBytes = 512;

}  // namespace

Collectives::Call::Call(Collectives& c, Kind kind, std::string what) : c_(c) {
  if (c_.depth_++ == 0) {
    ++c_.calls_;
    c_.kind_ = kind;
    if (c_.operator_.empty())
      c_.what_ = std::move(what);
    else
      c_.what_ = what.empty() ? c_.operator_ : c_.operator_ + ", " + what;
  }
}

void Collectives::Send(int dest, std::vector<std::byte> payload) {
  // Room for the stamp exactly: appended to a full vector it doubled the capacity, and a
  // message's buffer lives until its receiver reads it (in the one-process cluster every
  // node's outgoing messages at once: --nodes 64's body lists held twice their bytes).
  payload.reserve(payload.size() + what_.size() + kStampBytes);
  ByteWriter stamped(std::move(payload));
  stamped.PutRaw(what_.data(), what_.size());
  stamped.Put(static_cast<uint32_t>(what_.size()));
  stamped.Put(calls_);
  stamped.Put(static_cast<uint32_t>(kind_));
  stamped.Put(kStampMark);
  transport_.Send(dest, Tag::kCollective, stamped.Take());
}

Message Collectives::Receive(int source) {
  const uint64_t begin = wait_observer_ ? SteadyNowNs() : 0;
  // A collective message that does not come while the source's blocks of an AsyncFor exchange
  // do: the source is in an AsyncFor this node has left or not reached (every exchange message
  // of a call is received within the call).
  Message m = ReceiveWatching(
      source, Tag::kCollective, Tag::kExchange, Here(false),
      [&] { return DescribeCall(NodeName(transport_.node()), calls_, kind_, what_); },
      [&] {
        throw UsageError(
            DescribeCall(NodeName(transport_.node()), calls_, kind_, what_) + ", while " +
            NodeName(source) +
            " has sent this node blocks of an AsyncFor's exchange between rounds: it is "
            "in an AsyncFor call this node is not in" +
            kSameOrderRule + mismatch_hint_);
      });
  if (wait_observer_)
    if (const uint64_t waited = SteadyNowNs() - begin; waited >= kWaitReportNs)
      wait_observer_(source, begin, waited);
  const Stamp stamp = TakeStamp(source, m);
  if (stamp.call == calls_ && stamp.kind == kind_ && stamp.what == what_) return m;
  const bool driver_read = stamp.kind == Kind::kDriverRead || kind_ == Kind::kDriverRead;
  throw UsageError(DescribeCall(NodeName(transport_.node()), calls_, kind_, what_) + ", while " +
                   DescribeCall(NodeName(source), stamp.call, stamp.kind, stamp.what) +
                   kSameOrderRule + (driver_read ? kDriverReadRule : "") + mismatch_hint_);
}

Collectives::Stamp Collectives::TakeStamp(int source, Message& m) const {
  const auto unstamped = [&] {
    return std::logic_error(NodeName(transport_.node()) + ": a collective message from " +
                            NodeName(source) + " without its stamp");
  };
  if (m.payload.size() < kStampBytes) throw unstamped();
  ByteReader r(m.payload.data() + m.payload.size() - kStampBytes, kStampBytes);
  const auto what_bytes = r.Get<uint32_t>();
  Stamp stamp;
  stamp.call = r.Get<uint64_t>();
  stamp.kind = static_cast<Kind>(r.Get<uint32_t>());
  if (r.Get<uint32_t>() != kStampMark || what_bytes > m.payload.size() - kStampBytes)
    throw unstamped();
  const size_t payload_bytes = m.payload.size() - kStampBytes - what_bytes;
  stamp.what.assign(reinterpret_cast<const char*>(m.payload.data()) + payload_bytes, what_bytes);
  m.payload.resize(payload_bytes);
  return stamp;
}

Message Collectives::ReceiveWatchingFlow(int source, Tag tag, FunctionRef<std::string()> awaited) {
  const auto here_text = [&] {
    return NodeName(transport_.node()) + " is in " +
           (operator_.empty() ? std::string("an operator") : operator_) + ", waiting for " +
           NodeName(source) + "'s " + awaited();
  };
  return ReceiveWatching(source, tag, Tag::kCollective, Here(true), here_text, [&] {
    Message m = transport_.Receive(source, Tag::kCollective, timeout_);
    const Stamp stamp = TakeStamp(source, m);
    throw UsageError(here_text() + ", while " +
                     DescribeCall(NodeName(source), stamp.call, stamp.kind, stamp.what) +
                     kSameOrderRule + mismatch_hint_);
  });
}

// True if a node waiting at `there` for this node's message, while this node waits at `here`,
// is not in this node's flow. The awaited node (`from_source`): if it is further on (a message
// it owes this node for `here` would have been sent on its way), or at `here`'s place in
// another operator; an earlier place is a notice gone stale (this node has since sent what it
// waited for). Any other node: only if both wait in the same collective call as different
// collectives, which no timing explains; further on it may rightly be (it needed nothing of
// this node's since), and two AsyncFor exchanges after one count of calls may be two loops.
bool Collectives::Contradicts(bool from_source, const WaitPlace& there, const WaitPlace& here) {
  if (!from_source)
    return !there.exchange && !here.exchange && there.call == here.call &&
           (there.kind != here.kind || there.what != here.what);
  if (there.call != here.call) return there.call > here.call;
  if (there.exchange != here.exchange) return there.exchange;  // after here's collective call
  return there.kind != here.kind || there.what != here.what;
}

Collectives::WaitPlace Collectives::Here(bool exchange) const {
  WaitPlace place;
  place.call = calls_;
  place.exchange = exchange;
  place.kind = exchange ? Kind::kAllToAll : kind_;
  place.what = (exchange ? operator_ : what_).substr(0, kNoticeWhatBytes);
  return place;
}

std::string Collectives::DescribeWait(int source, const WaitPlace& place) const {
  const std::string who = NodeName(source);
  return (place.exchange ? who + " is in " + (place.what.empty() ? "an operator" : place.what) +
                               " after its collective call " + std::to_string(place.call)
                         : DescribeCall(who, place.call, place.kind, place.what)) +
         ", waiting for " + NodeName(transport_.node());
}

void Collectives::TakeNotices(int source) {
  while (transport_.Poll(source, Tag::kWaitNotice)) {
    const Message m = transport_.Receive(source, Tag::kWaitNotice, timeout_);
    ByteReader r(m.payload);
    WaitPlace place;
    place.call = r.Get<uint64_t>();
    place.exchange = r.Get<uint32_t>() != 0;
    place.kind = static_cast<Kind>(r.Get<uint32_t>());
    const std::vector<char> what = r.GetVector<char>();
    place.what.assign(what.begin(), what.end());
    notices_[static_cast<size_t>(source)] = std::move(place);
  }
}

Message Collectives::ReceiveWatching(int source, Tag tag, Tag sign, const WaitPlace& here,
                                     FunctionRef<std::string()> here_text,
                                     FunctionRef<void()> diverged) {
  // The common case, a message already here or soon, is one Receive as before.
  const auto deadline = DeadlineAfter(timeout_);
  const auto left = [&] {
    return std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
  };
  bool sign_seen = false, notice_sent = false;
  int elsewhere_seen = -1;  // the node whose notice placed it elsewhere at the last check
  for (;;) {
    const double slice = std::min(left(), kFlowCheckSeconds);
    if (slice < kFlowCheckSeconds) break;  // the last stretch: Receive's own timeout report
    try {
      Message m = transport_.Receive(source, tag, slice);
      // The source's notices, read as its messages come (one Poll when there are none): a node
      // that never waits itself would otherwise keep one per long wait of the source's in its
      // transport's queue for the whole run, which MPI searches at every receive.
      TakeNotices(source);
      return m;
    } catch (const TimeoutError&) {
    }
    if (transport_.Poll(source, tag)) continue;
    const bool sign_now = transport_.Poll(source, sign);
    if (sign_now && sign_seen) diverged();
    sign_seen = sign_now;
    if (!notice_sent) {
      ByteWriter w;
      w.Put(here.call);
      w.Put(static_cast<uint32_t>(here.exchange));
      w.Put(static_cast<uint32_t>(here.kind));
      w.PutVector(std::vector<char>(here.what.begin(), here.what.end()));
      transport_.Send(source, Tag::kWaitNotice, w.Take());
      notice_sent = true;
    }
    // Every node's notices: the source's may place it further on; another's, waiting for this
    // node, at this node's call as another collective (a rank of a chain: node 3 of 4 in a
    // hash waits for node 2 while node 0, the gather's root, waits for node 3).
    int elsewhere_now = -1;
    for (int p = 0; p < transport_.nodes(); ++p) {
      if (p == transport_.node()) continue;
      TakeNotices(p);
      const std::optional<WaitPlace>& notice = notices_[static_cast<size_t>(p)];
      if (notice && Contradicts(p == source, *notice, here) && (elsewhere_now < 0 || p == source))
        elsewhere_now = p;
    }
    if (elsewhere_now >= 0 && elsewhere_now == elsewhere_seen)
      throw UsageError(here_text() + ", while " +
                       DescribeWait(elsewhere_now, *notices_[static_cast<size_t>(elsewhere_now)]) +
                       kSameOrderRule + mismatch_hint_);
    elsewhere_seen = elsewhere_now;
  }
  // Waited all but the last slice: the report names the whole bound, as one Receive's would.
  const double last = std::max(left(), 0.0);
  try {
    Message m = transport_.Receive(source, tag, last);
    TakeNotices(source);
    return m;
  } catch (const TimeoutError& e) {
    const std::string slice_text = ReceiveTimeoutMessage(transport_.node(), last, tag, source);
    std::string text = e.what();
    if (text.starts_with(slice_text))
      text = ReceiveTimeoutMessage(transport_.node(), timeout_, tag, source) +
             text.substr(slice_text.size());
    throw TimeoutError(text);
  }
}

std::vector<std::vector<std::byte>> Collectives::AllToAll(
    std::vector<std::vector<std::byte>> outgoing) {
  const Call call(*this, Kind::kAllToAll);
  return DoAllToAll(std::move(outgoing));
}

std::vector<std::vector<std::byte>> Collectives::DoAllToAll(
    std::vector<std::vector<std::byte>> outgoing) {
  const int me = transport_.node(), n = transport_.nodes();
  std::vector<std::vector<std::byte>> incoming(n);
  for (int p = 0; p < n; ++p)
    if (p != me) Send(p, std::move(outgoing[p]));
  incoming[me] = std::move(outgoing[me]);
  for (int p = 0; p < n; ++p)
    if (p != me) incoming[p] = Receive(p).payload;
  return incoming;
}

void Collectives::AllToAllMade(const std::function<std::vector<std::byte>(int)>& make,
                               const std::function<void(int, std::vector<std::byte>)>& take) {
  const Call call(*this, Kind::kAllToAll);
  const int me = transport_.node(), n = transport_.nodes();
  for (int step = 1; step < n; ++step) {
    Send((me + step) % n, make((me + step) % n));
    const int from = (me + n - step) % n;
    take(from, Receive(from).payload);
  }
  take(me, make(me));
}

std::vector<std::vector<std::byte>> Collectives::AllGather(std::vector<std::byte> mine,
                                                           std::string what) {
  const Call call(*this, Kind::kAllGather, std::move(what));
  const int n = transport_.nodes();
  std::vector<std::vector<std::byte>> outgoing(n, mine);
  return DoAllToAll(std::move(outgoing));
}

std::vector<std::vector<std::byte>> Collectives::Gather(int root, std::vector<std::byte> mine) {
  const Call call(*this, Kind::kGather);
  return DoGather(root, std::move(mine));
}

std::vector<std::vector<std::byte>> Collectives::DoGather(int root, std::vector<std::byte> mine) {
  const int me = transport_.node(), n = transport_.nodes();
  std::vector<std::vector<std::byte>> all;
  if (me != root) {
    Send(root, std::move(mine));
    return all;
  }
  all.resize(n);
  all[me] = std::move(mine);
  for (int p = 0; p < n; ++p)
    if (p != me) all[p] = Receive(p).payload;
  return all;
}

std::vector<std::byte> Collectives::Scatter(int root,
                                            std::vector<std::vector<std::byte>> outgoing) {
  const Call call(*this, Kind::kScatter);
  const int me = transport_.node(), n = transport_.nodes();
  if (me != root) return Receive(root).payload;
  for (int p = 0; p < n; ++p)
    if (p != me) Send(p, std::move(outgoing.at(p)));
  return std::move(outgoing.at(me));
}

std::vector<std::byte> Collectives::ScatterMade(
    int root, const std::function<std::vector<std::byte>(int)>& make) {
  const Call call(*this, Kind::kScatter);
  const int me = transport_.node(), n = transport_.nodes();
  if (me != root) return Receive(root).payload;
  for (int p = 0; p < n; ++p)
    if (p != me) Send(p, make(p));
  return make(me);
}

std::vector<int64_t> Collectives::SumEach(const std::vector<int64_t>& mine) {
  const Call call(*this, Kind::kSumEach);
  ByteWriter w;
  w.PutVector(mine);
  ByteWriter sum;
  if (const auto all = DoGather(0, w.Take()); !all.empty()) {
    std::vector<int64_t> total(mine.size(), 0);
    for (const auto& bytes : all) {
      ByteReader r(bytes);
      const auto theirs = r.GetVector<int64_t>();
      if (theirs.size() != total.size())
        throw std::runtime_error("strads: a node's vector to sum has " +
                                 std::to_string(theirs.size()) + " elements, not " +
                                 std::to_string(total.size()));
      for (size_t i = 0; i < total.size(); ++i) total[i] += theirs[i];
    }
    sum.PutVector(total);
  }
  const std::vector<std::byte> bytes = DoBroadcast(0, sum.Take());
  ByteReader r(bytes);
  return r.GetVector<int64_t>();
}

uint64_t Collectives::HashInNodeOrder(uint64_t state, const std::byte* bytes, size_t size) {
  const Call call(*this, Kind::kHashInNodeOrder);
  const int me = transport_.node(), n = transport_.nodes();
  if (me > 0) state = ByteReader(Receive(me - 1).payload).Get<uint64_t>();
  Fnv1a hash(state);
  hash.Update(bytes, size);
  ByteWriter w;
  w.Put(hash.digest());
  std::vector<std::byte> mine = w.Take();
  if (me + 1 < n) Send(me + 1, mine);
  return ByteReader(DoBroadcast(n - 1, std::move(mine))).Get<uint64_t>();
}

std::vector<std::byte> Collectives::Broadcast(int root, std::vector<std::byte> data) {
  const Call call(*this, Kind::kBroadcast);
  return DoBroadcast(root, std::move(data));
}

std::vector<std::byte> Collectives::DoBroadcast(int root, std::vector<std::byte> data) {
  const int me = transport_.node(), n = transport_.nodes();
  if (me == root) {
    for (int p = 0; p < n; ++p)
      if (p != me) Send(p, data);
    return data;
  }
  return Receive(root).payload;
}

std::vector<std::byte> Collectives::DriverRead(int owner, std::vector<std::byte> block,
                                               std::string what) {
  const Call call(*this, Kind::kDriverRead, std::move(what));
  const int me = transport_.node(), n = transport_.nodes();
  if (me != owner) {
    Send(owner, {});
    return Receive(owner).payload;
  }
  for (int p = 0; p < n; ++p)
    if (p != me) Send(p, block);
  for (int p = 0; p < n; ++p)
    if (p != me) Receive(p);
  return block;
}

void Collectives::Barrier() { DoBarrier(Kind::kBarrier); }

void Collectives::DriverReturned() {
  DoBarrier(Kind::kDriverReturned);
  // Let the last waits' notices go (the nodes wait for nothing more of each other).
  for (int p = 0; p < transport_.nodes(); ++p)
    if (p != transport_.node()) TakeNotices(p);
}

void Collectives::DoBarrier(Kind kind) {
  const Call call(*this, kind);
  DoAllToAll(std::vector<std::vector<std::byte>>(static_cast<size_t>(transport_.nodes())));
}

bool Collectives::AnyTrue(bool mine) {
  const Call call(*this, Kind::kAnyTrue);
  for (bool b : AllGatherValue<bool>(mine))
    if (b) return true;
  return false;
}

int64_t Collectives::Sum(int64_t mine) {
  const Call call(*this, Kind::kSum);
  int64_t total = 0;
  for (int64_t v : AllGatherValue<int64_t>(mine)) total += v;
  return total;
}

std::string OperatorName(const char* kind, const char* file, uint32_t line,
                         const std::string& arguments) {
  return std::string(kind) + " at " + file + ":" + std::to_string(line) + " " + arguments;
}

}  // namespace strads
