// A third-party ordering policy, built outside strads against the installed seam headers
// (strads/seam/) only: Live's decisions, counted. Registered as mode "count"; a program linked
// with this file uses it under STRADS_POLICY=count and prints the counts when a node finishes.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "strads/seam/ordering.h"
#include "strads/seam/policy_registry.h"

namespace {

class CountingPolicy : public strads::LiveOrderingPolicy {
 public:
  explicit CountingPolicy(const strads::PolicyNode& node) : node_(node.node) {}

  // Every lock through Acquire, so that each grant is counted.
  InlineLocks inline_locks() override { return {}; }
  void Acquire(strads::SeamLock& lock, uint64_t lock_id, int thread, int64_t task) override {
    grants_.fetch_add(1, std::memory_order_relaxed);
    OrderingPolicy::Acquire(lock, lock_id, thread, task);
  }
  void Delivered(const strads::Message&) override { ++deliveries_; }
  void OperatorEnd(const strads::OperatorSite&) override { ++operators_; }
  void Finish(bool ok) override {
    if (ok)
      std::fprintf(stderr,
                   "count policy: node %d: %llu operators, %llu lock grants, %llu deliveries\n",
                   node_, static_cast<unsigned long long>(operators_),
                   static_cast<unsigned long long>(grants_.load()),
                   static_cast<unsigned long long>(deliveries_));
  }

 private:
  int node_;
  std::atomic<uint64_t> grants_{0};
  uint64_t deliveries_ = 0, operators_ = 0;  // driver thread only
};

std::unique_ptr<strads::OrderingPolicy> MakeCountingPolicy(const strads::PolicyNode& node,
                                                           const std::string&) {
  return std::make_unique<CountingPolicy>(node);
}

[[maybe_unused]] const bool kRegistered =
    strads::RegisterOrderingPolicy("count", MakeCountingPolicy);

}  // namespace
