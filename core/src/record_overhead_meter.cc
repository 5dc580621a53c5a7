#include "record_overhead_meter.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace strads {

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Odd invocations run recorded.
bool Recorded(const OperatorSite& site) { return site.invocation % 2 == 1; }

// The CPU time of every thread of the process, in seconds.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string SiteKey(const OperatorSite& site) {
  return std::filesystem::path(site.file).filename().string() + ":" + std::to_string(site.line) +
         " (" + site.kind + ")";
}

}  // namespace

RecordOverheadMeter::RecordOverheadMeter(std::unique_ptr<OrderingPolicy> record)
    : parked_(std::move(record)) {}

void RecordOverheadMeter::Begin(const OperatorSite& site,
                                std::unique_ptr<OrderingPolicy>& current) {
  if (Recorded(site)) std::swap(current, parked_);
  start_ = std::chrono::steady_clock::now();
  cpu_start_ = ProcessCpuSeconds();
}

void RecordOverheadMeter::End(const OperatorSite& site, std::unique_ptr<OrderingPolicy>& current) {
  if (Recorded(site)) current->Drain();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double cpu_seconds = ProcessCpuSeconds() - cpu_start_;
  if (site.invocation > 0) {
    Times& t = by_site_[SiteKey(site)];
    (Recorded(site) ? t.recorded : t.live).push_back(seconds);
    (Recorded(site) ? t.recorded_cpu : t.live_cpu).push_back(cpu_seconds);
  }
  if (Recorded(site)) std::swap(current, parked_);
}

void RecordOverheadMeter::Finish(bool ok) { parked_->Finish(ok); }

std::string RecordOverheadMeter::Report() const {
  std::string out;
  for (const auto& [site, t] : by_site_) {
    if (t.live.empty() || t.recorded.empty()) continue;
    const double live = Median(t.live), recorded = Median(t.recorded);
    const double live_cpu = Median(t.live_cpu), recorded_cpu = Median(t.recorded_cpu);
    char line[512];
    std::snprintf(line, sizeof line,
                  "record overhead at %s: live %.3f ms, recorded %.3f ms (medians of %zu and %zu "
                  "invocations): %.3fx; CPU time live %.3f ms, recorded %.3f ms: %.3fx\n",
                  site.c_str(), 1e3 * live, 1e3 * recorded, t.live.size(), t.recorded.size(),
                  recorded / live, 1e3 * live_cpu, 1e3 * recorded_cpu, recorded_cpu / live_cpu);
    out += line;
  }
  if (out.empty())
    out =
        "record overhead: no operator ran both live and recorded (each site needs at least 3 "
        "invocations)\n";
  return out;
}

}  // namespace strads
