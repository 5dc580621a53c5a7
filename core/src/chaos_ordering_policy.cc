#include "chaos_ordering_policy.h"

#include <chrono>
#include <thread>

namespace strads {

ChaosOrderingPolicy::ChaosOrderingPolicy(std::unique_ptr<OrderingPolicy> inner, uint64_t seed,
                                         int node, int threads)
    : inner_(std::move(inner)),
      driver_stream_(threads),
      streams_(new Stream[static_cast<size_t>(threads) + 1]) {
  for (int s = 0; s <= threads; ++s)
    streams_[s].state = seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(node) * 1000003 +
                        static_cast<uint64_t>(s);
}

ChaosOrderingPolicy::~ChaosOrderingPolicy() = default;

uint64_t ChaosOrderingPolicy::Next(int stream) {
  uint64_t z = (streams_[stream].state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void ChaosOrderingPolicy::Sleep(int stream, uint64_t us) {
  Injected& i = streams_[stream].injected;
  ++i.sleeps;
  i.sleep_us += us;
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

void ChaosOrderingPolicy::Yield(int stream) {
  ++streams_[stream].injected.yields;
  std::this_thread::yield();
}

ChaosOrderingPolicy::Injected ChaosOrderingPolicy::injected() const {
  Injected all;
  for (int s = 0; s <= driver_stream_; ++s) {
    all.sleeps += streams_[s].injected.sleeps;
    all.sleep_us += streams_[s].injected.sleep_us;
    all.yields += streams_[s].injected.yields;
  }
  return all;
}

void ChaosOrderingPolicy::MaybeSleep(int stream, uint64_t one_in, uint64_t max_us) {
  const uint64_t r = Next(stream);
  if (r % one_in != 0) return;
  Sleep(stream, (r >> 20) % (max_us + 1));
}

void ChaosOrderingPolicy::Acquire(SeamLock& lock, uint64_t lock_id, int thread, int64_t task) {
  const uint64_t r = Next(thread);
  if (r % 512 == 0)
    Sleep(thread, (r >> 20) % 201);
  else if (r % 16 == 0)
    Yield(thread);
  inner_->Acquire(lock, lock_id, thread, task);
}

void ChaosOrderingPolicy::Release(SeamLock& lock, uint64_t lock_id, int thread) {
  inner_->Release(lock, lock_id, thread);
  if (Next(thread) % 16 == 0) Yield(thread);
}

int ChaosOrderingPolicy::NextSource(Tag tag) {
  MaybeSleep(driver_stream_, 1, 300);
  return inner_->NextSource(tag);
}

void ChaosOrderingPolicy::Delivered(const Message& message) { inner_->Delivered(message); }

uint64_t ChaosOrderingPolicy::Choose(ChoicePoint point, uint64_t live_value) {
  MaybeSleep(driver_stream_, 1, 300);
  return inner_->Choose(point, live_value);
}

void ChaosOrderingPolicy::Input(const std::string& path, uint64_t offset,
                                std::span<const std::byte> bytes) {
  inner_->Input(path, offset, bytes);
}

void ChaosOrderingPolicy::OperatorBegin(const OperatorSite& site) {
  MaybeSleep(driver_stream_, 2, 2000);
  inner_->OperatorBegin(site);
}

void ChaosOrderingPolicy::OperatorEnd(const OperatorSite& site) {
  inner_->OperatorEnd(site);
  MaybeSleep(driver_stream_, 2, 2000);
}

void ChaosOrderingPolicy::Finish(bool ok) { inner_->Finish(ok); }

}  // namespace strads
