// Collectives over the Transport seam. Every node calls them in the same order (control
// replication), and each combines contributions in node order, so results never depend on
// timing. Linear algorithms: strads targets tens of nodes, not thousands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strads/internal/bytes.h"
#include "strads/internal/function_ref.h"
#include "strads/seam/transport.h"

namespace strads {

// Every message a collective sends carries a stamp: the sender's count of collective calls so
// far, the call's kind and, where its caller names it, what the call is for (Reduce names its
// dvector and functions). Nodes that call the operators in the same order (control
// replication) agree on all three for every message; a receiver that finds otherwise stops with a
// UsageError naming both calls, where the program would otherwise hang until --timeout or,
// worse, combine one operator's contribution with another's.
class Collectives {
 public:
  Collectives(Transport& transport, double timeout_seconds)
      : transport_(transport),
        timeout_(timeout_seconds),
        notices_(static_cast<size_t>(transport.nodes())) {}

  // What a collective call is, as the stamp names it.
  enum class Kind : uint32_t {
    kAllToAll = 1,
    kAllGather,
    kGather,
    kScatter,
    kBroadcast,
    kSumEach,
    kBarrier,
    kAnyTrue,
    kSum,
    kHashInNodeOrder,
    kDriverReturned,
    kDriverRead,
  };

  // Told of every receive that waited at least kWaitReportNs (ordering.h) for node `source`
  // since `begin_ns`, so that a recording can draw the wait.
  using WaitObserver = std::function<void(int source, uint64_t begin_ns, uint64_t duration_ns)>;
  void set_wait_observer(WaitObserver observer) { wait_observer_ = std::move(observer); }

  void Barrier();
  // result[p] is node p's contribution. `what` names the call in the stamp (an operator and its
  // data, e.g. Reduce's); nodes whose calls differ in it stop as for another kind.
  std::vector<std::vector<std::byte>> AllGather(std::vector<std::byte> mine, std::string what = {});
  // Node `root`'s `data`, on every node (the argument is ignored elsewhere).
  std::vector<std::byte> Broadcast(int root, std::vector<std::byte> data);
  // A driver read of elements node `owner` holds (DriverAccessHook): `owner`'s `block` on every
  // node, as Broadcast, `what` naming the elements in the stamp. Every other node first sends
  // the owner an empty stamped message, and the owner reads them after sending the block, so
  // that every node in the call sends before it waits: nodes that disagree about making it (a
  // mutable local() on some nodes only) stop with the mismatch error at the skipping node's next
  // collective message, where a broadcast would leave a reader waiting until --timeout.
  std::vector<std::byte> DriverRead(int owner, std::vector<std::byte> block, std::string what);
  // outgoing[p] goes to node p; result[p] came from node p.
  std::vector<std::vector<std::byte>> AllToAll(std::vector<std::vector<std::byte>> outgoing);
  // As AllToAll, one message at a time: at step s = 1 .. P - 1 this node sends make(me + s) to
  // node me + s and hands what node me - s sent to take(me - s, bytes) (nodes mod P), then its
  // own make(me) to take(me, ...). Each message is made just before it is sent and let go once
  // taken, so a node holds about one of each, where AllToAll's caller holds all its messages
  // out and in at once: under --nodes 64 every node's at once (the first AsyncFor call's serving
  // of sgdmf's ratings, 38 MB). Messages and stamps are AllToAll's.
  void AllToAllMade(const std::function<std::vector<std::byte>(int)>& make,
                    const std::function<void(int, std::vector<std::byte>)>& take);
  // Every node's `mine` at node `root` (result[p] from node p); elsewhere an empty result.
  // Unlike AllGather, no node holds P copies of everything.
  std::vector<std::vector<std::byte>> Gather(int root, std::vector<std::byte> mine);
  // Node `root`'s outgoing[p] at node p (`outgoing` is ignored elsewhere).
  std::vector<std::byte> Scatter(int root, std::vector<std::vector<std::byte>> outgoing);
  // As Scatter, but the root makes node p's message with make(p) just before sending it, in node
  // order, and its own last: it never holds every message at once (a message lives until its
  // receiver reads it; AsyncFor planning's replies, each the whole cell table, were 64 x 0.5 MB
  // on the leader under --nodes 64). `make` runs on the root only.
  std::vector<std::byte> ScatterMade(int root,
                                     const std::function<std::vector<std::byte>(int)>& make);
  // The element-wise sum of every node's `mine` (all of one length), added in node order at
  // node 0 and sent back: messages of one vector's size, where AllGather's are P times that.
  std::vector<int64_t> SumEach(const std::vector<int64_t>& mine);
  // FNV-1a (fnv1a.h) continued from `state` over every node's `bytes` in node order, on every
  // node: node 0 hashes its bytes and passes the 8-byte state to node 1, and so on; the last
  // node's state is broadcast. Equal to hashing the gathered bytes, but no node holds more than
  // its own (an AllGather holds every node's bytes on every node: P copies of the whole).
  uint64_t HashInNodeOrder(uint64_t state, const std::byte* bytes, size_t size);

  template <class T>
  std::vector<T> AllGatherValue(const T& mine) {
    ByteWriter w;
    w.Put(mine);
    std::vector<T> all;
    for (const auto& bytes : AllGather(w.Take())) all.push_back(ByteReader(bytes).Get<T>());
    return all;
  }
  bool AnyTrue(bool mine);
  int64_t Sum(int64_t mine);

  // Called on every node when its driver returns: a barrier whose stamp tells a node still
  // waiting in a collective that this one has left the driver (an operator called on some
  // nodes only), instead of a wait until --timeout.
  void DriverReturned();

  // Appended to the error of calls that disagree between nodes (SharedGlobalsHint under --nodes).
  void set_mismatch_hint(std::string hint) { mismatch_hint_ = std::move(hint); }

  // Collective calls made so far on this node.
  uint64_t calls() const { return calls_; }

  // transport.Receive(source, tag, timeout) for an operator's own messages between nodes (the
  // block exchange between AsyncFor's rounds), watching the flow: once `source` has sent this
  // node a collective message and still not the awaited one for two checks kFlowCheckSeconds
  // apart, it has left the operator this node is in (MPMD ranks run with other --epochs, a loop
  // count that differs between nodes), and this stops with a UsageError naming both places,
  // where the wait would last until --timeout with a message naming neither. Two checks: a
  // sender's messages of two tags need not arrive in the order sent (MPI orders one tag only),
  // but not a second apart. `awaited()` says what the message is ("blocks for phase 3 of 8"),
  // made only for the error. A collective's receive watches the other way: a source whose
  // exchange messages come while its collective message does not is in an AsyncFor call this
  // node is not in (a node receives every exchange message of a call within the call), which
  // names the mismatch where the source waits first (Checksum's hash in node order).
  //
  // Where neither node sends before it waits (one in a gather's root, the other in Checksum's
  // hash), no message is in flight to tell: a wait that outlasts its first check sends the
  // source a wait notice (Tag::kWaitNotice) saying where this node waits. A node that finds
  // the node it waits for waiting further on (a later call, or this call as another operator),
  // or any node waiting in this node's collective call as another collective, at two checks
  // in a row, stops with both places named. A notice from an
  // earlier place is stale (the message it waited for has been sent since) and dropped; only
  // the latest from each node is kept. Notices are outside the recorded orders: they change
  // no result, only which error a divergent program stops with.
  Message ReceiveWatchingFlow(int source, Tag tag, FunctionRef<std::string()> awaited);
  static constexpr double kFlowCheckSeconds = 1.0;

  // Names the operator under way with the arguments every node must pass it alike (its kind,
  // site and range, say). Every collective call inside the scope carries the name in its stamp,
  // so that nodes in different loops, or in one loop with other bounds, stop at the loop's
  // first message instead of planning one loop with another's accesses. Scopes nest; the
  // innermost names the calls. An empty name (one node: no messages) costs nothing.
  class OperatorScope {
   public:
    OperatorScope(Collectives& c, std::string name)
        : c_(c), outer_(std::exchange(c.operator_, std::move(name))) {}
    ~OperatorScope() { c_.operator_ = std::move(outer_); }
    OperatorScope(const OperatorScope&) = delete;
    OperatorScope& operator=(const OperatorScope&) = delete;

   private:
    Collectives& c_;
    std::string outer_;
  };

 private:
  // Counts one call of `kind`; calls nested in it (AllGather's AllToAll) are part of it.
  class Call {
   public:
    Call(Collectives& c, Kind kind, std::string what = {});
    ~Call() { --c_.depth_; }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;

   private:
    Collectives& c_;
  };

  void Send(int dest, std::vector<std::byte> payload);
  // transport_.Receive, timed for the wait observer; checks and strips the stamp.
  Message Receive(int source);
  // A collective message's stamp, taken off its payload.
  struct Stamp {
    uint64_t call = 0;
    Kind kind = Kind::kAllToAll;
    std::string what;
  };
  Stamp TakeStamp(int source, Message& m) const;
  // Where a node waits for another's message, as its wait notice says.
  struct WaitPlace {
    uint64_t call = 0;      // collective calls begun on the node
    bool exchange = false;  // in an AsyncFor's exchange after them, not in collective `call`
    Kind kind = Kind::kAllToAll;
    std::string what;  // the call's what_, or for an exchange the operator's name
  };
  WaitPlace Here(bool exchange) const;
  static bool Contradicts(bool from_source, const WaitPlace& there, const WaitPlace& here);
  // "node S is in ..., waiting for node R".
  std::string DescribeWait(int source, const WaitPlace& place) const;
  // Reads the wait notices `source` has sent, keeping the latest in notices_.
  void TakeNotices(int source);
  // transport_.Receive(source, tag, timeout_), checking every kFlowCheckSeconds of the wait: if
  // at two checks in a row the awaited message has not come but a `sign` message from `source`
  // has, calls `diverged` (which throws). After the first check it sends `source` a wait
  // notice of `here`, and if at two checks in a row one node's latest notice contradicts
  // `here` (Contradicts), throws a UsageError of here_text() and the notice. The timeout's report
  // names the whole bound.
  Message ReceiveWatching(int source, Tag tag, Tag sign, const WaitPlace& here,
                          FunctionRef<std::string()> here_text, FunctionRef<void()> diverged);
  std::vector<std::vector<std::byte>> DoAllToAll(std::vector<std::vector<std::byte>> outgoing);
  std::vector<std::vector<std::byte>> DoGather(int root, std::vector<std::byte> mine);
  std::vector<std::byte> DoBroadcast(int root, std::vector<std::byte> data);
  // A barrier stamped as `kind`.
  void DoBarrier(Kind kind);

  Transport& transport_;
  double timeout_;
  WaitObserver wait_observer_;
  std::string mismatch_hint_;
  uint64_t calls_ = 0;           // collective calls begun on this node
  Kind kind_ = Kind::kAllToAll;  // the outermost call under way
  std::string what_;             // and what it is for, if its caller or operator said
  std::string operator_;         // the OperatorScope's name
  int depth_ = 0;
  std::vector<std::optional<WaitPlace>> notices_;  // by source, the latest wait notice
};

// An OperatorScope's name: "KIND at FILE:LINE" and the call's `arguments` (its range, say).
std::string OperatorName(const char* kind, const char* file, uint32_t line,
                         const std::string& arguments);

}  // namespace strads
