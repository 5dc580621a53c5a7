#include "shared_plans.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace strads {

void SharedPlans::Publish(std::shared_ptr<const PlannedCells> plan) {
  std::lock_guard<std::mutex> lock(mu_);
  if (taken_.size() > 1) entries_.push_back({published_, std::move(plan), taken_.size() - 1});
  ++published_;
}

std::shared_ptr<const PlannedCells> SharedPlans::Take(int node) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t number = taken_.at(static_cast<size_t>(node));
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [number](const Entry& e) { return e.number == number; });
  if (it == entries_.end())
    throw std::logic_error("AsyncFor planning: node " + std::to_string(node) +
                           " found no shared plan " + std::to_string(number));
  ++taken_[static_cast<size_t>(node)];
  std::shared_ptr<const PlannedCells> plan = it->plan;
  if (--it->takers_left == 0) entries_.erase(it);
  return plan;
}

uint64_t SharedPlans::published() const {
  std::lock_guard<std::mutex> lock(mu_);
  return published_;
}

size_t SharedPlans::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace strads
