#include "dual_trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "dual_file.h"
#include "strads/errors.h"

namespace strads {

DualTrace::DualTrace(const std::string& in_path, const std::string& out_path, bool leader)
    : in_path_(in_path), out_path_(out_path) {
  if (!in_path_.empty()) Load(in_path_);
  if (!out_path_.empty() && leader) {
    out_ = std::make_unique<std::ofstream>(out_path_, std::ios::out | std::ios::trunc);
    if (!*out_)
      throw UsageError("--dual-out: cannot create '" + out_path_ + "': " + std::strerror(errno));
  }
}

void DualTrace::Load(const std::string& path) {
  DualFile file;
  try {
    file = DualFile::Read(path);
  } catch (const DualFileError& e) {
    throw CollectiveUsageError(e.what());
  }
  if (file.workers) in_workers_ = SyncTopology{file.workers->nodes, file.workers->threads};
  for (const auto& [site, orders] : file.orders)
    for (const DualFile::Order& o : orders)
      in_[site].push_back({o.first, o.last, o.indices, o.line});
}

void DualTrace::Start(SyncTopology workers) {
  Write("strads-dual 1\nworkers " + std::to_string(workers.nodes) + " " +
        std::to_string(workers.threads) + "\n");
}

DualTrace::Order DualTrace::NextOrder(const std::string& site, int64_t first, int64_t last) {
  const size_t k = followed_[site]++;
  auto it = in_.find(site);
  const size_t recorded = it == in_.end() ? 0 : it->second.size();
  if (k >= recorded)
    throw CollectiveUsageError(in_path_ + ": no order for invocation " + std::to_string(k) +
                               " of the AsyncFor at " + site + " (the file lists " +
                               std::to_string(recorded) +
                               "): this run does not execute like the run that wrote it");
  const Entry& e = it->second[k];
  if (e.first != first || e.last != last)
    throw CollectiveUsageError(in_path_ + ":" + std::to_string(e.line) + ": invocation " +
                               std::to_string(k) + " of the AsyncFor at " + site + " ran over " +
                               std::to_string(e.first) + ".." + std::to_string(e.last) +
                               ", this run over " + std::to_string(first) + ".." +
                               std::to_string(last));
  return e.order;
}

void DualTrace::RecordAsyncFor(const std::string& site, int64_t first, int64_t last,
                               const Order& order, uint64_t state) {
  if (!out_) return;
  auto& [count, previous] = written_["asyncfor " + site];
  const bool same = previous && (previous == order || *previous == *order);
  std::string text = "asyncfor " + std::to_string(count) + " " + std::to_string(first) + " " +
                     std::to_string(last) + (same ? " same " : " order ") + site + "\n";
  if (!same) {
    for (int64_t i : *order) (text += std::to_string(i)) += '\n';
    previous = order;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(state));
  text += "state asyncfor " + std::to_string(count) + " " + hex + " " + site + "\n";
  ++count;
  Write(text);
}

void DualTrace::RecordSyncFor(const std::string& site, uint64_t state) {
  if (!out_) return;
  auto& count = written_["syncfor " + site].first;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(state));
  Write("state syncfor " + std::to_string(count) + " " + hex + " " + site + "\n");
  ++count;
}

void DualTrace::Finish() {
  if (!out_) return;
  Write("end\n");
  out_->flush();
  if (!*out_) throw UsageError("--dual-out: cannot write '" + out_path_ + "'");
}

void DualTrace::Write(const std::string& text) {
  if (!out_) return;
  *out_ << text;
  if (!*out_) throw UsageError("--dual-out: cannot write '" + out_path_ + "'");
}

}  // namespace strads
