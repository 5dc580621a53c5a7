#include "accumulators.h"

#include <atomic>
#include <memory>

#include "node_context.h"

namespace strads {

namespace {

using internal::AccumulatorBase;

struct AccumulatorRegistry : internal::LoopState {
  std::vector<AccumulatorBase*> all;
};

const char kRegistryKey[] = "accumulators";

AccumulatorRegistry* RegistryOf(Runtime& rt) {
  return dynamic_cast<AccumulatorRegistry*>(rt.context().loop_state(kRegistryKey));
}

void SetModes(Runtime& rt, AccumulatorBase::Mode mode) {
  for (AccumulatorBase* a : Accumulators(rt)) a->set_mode(mode);
}

}  // namespace

namespace internal {

void RegisterAccumulator(Runtime& rt, AccumulatorBase& accumulator) {
  AccumulatorRegistry* registry = RegistryOf(rt);
  if (registry == nullptr) {
    auto fresh = std::make_unique<AccumulatorRegistry>();
    registry = fresh.get();
    rt.context().set_loop_state(kRegistryKey, std::move(fresh));
  }
  registry->all.push_back(&accumulator);
}

uint64_t AccumulatorBase::NextCallKey() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace internal

const std::vector<AccumulatorBase*>& Accumulators(Runtime& rt) {
  static const std::vector<AccumulatorBase*> none;
  AccumulatorRegistry* registry = RegistryOf(rt);
  return registry != nullptr ? registry->all : none;
}

DiscardAccumulatorAdds::DiscardAccumulatorAdds(Runtime& rt) : rt_(rt) {
  for (AccumulatorBase* a : Accumulators(rt_)) before_.push_back(a->mode());
  SetModes(rt_, AccumulatorBase::Mode::kDiscard);
}

DiscardAccumulatorAdds::~DiscardAccumulatorAdds() {
  const auto& all = Accumulators(rt_);
  for (size_t k = 0; k < all.size() && k < before_.size(); ++k) all[k]->set_mode(before_[k]);
}

AccumulatorCall::AccumulatorCall(Runtime& rt) : rt_(rt) {
  SetModes(rt_, AccumulatorBase::Mode::kBuffer);
}

AccumulatorCall::~AccumulatorCall() { SetModes(rt_, AccumulatorBase::Mode::kDirect); }

void AccumulatorCall::Flush() {
  const auto& all = Accumulators(rt_);
  SetModes(rt_, AccumulatorBase::Mode::kDirect);
  if (all.empty()) return;
  // One AllGather for all accumulators: per accumulator, its byte count, then its deltas.
  ByteWriter w;
  for (AccumulatorBase* a : all) w.PutVector(a->TakeDeltas());
  std::vector<std::vector<std::vector<std::byte>>> per_acc(all.size());
  for (const auto& bytes : rt_.context().collectives().AllGather(w.Take())) {
    ByteReader r(bytes);
    for (size_t k = 0; k < all.size(); ++k) per_acc[k].push_back(r.GetVector<std::byte>());
  }
  for (size_t k = 0; k < all.size(); ++k) all[k]->AddDeltas(per_acc[k]);
}

}  // namespace strads
