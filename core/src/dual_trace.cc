#include "dual_trace.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "strads/errors.h"

namespace strads {

namespace {

// Splits off the first whitespace-separated word of `rest`.
std::string_view NextWord(std::string_view& rest) {
  const size_t begin = rest.find_first_not_of(" \t");
  if (begin == std::string_view::npos) {
    rest = {};
    return {};
  }
  size_t end = rest.find_first_of(" \t", begin);
  if (end == std::string_view::npos) end = rest.size();
  const std::string_view word = rest.substr(begin, end - begin);
  rest.remove_prefix(end);
  return word;
}

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

bool ParseInt(std::string_view word, int64_t* out) {
  if (word.empty()) return false;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), *out);
  return ec == std::errc() && end == word.data() + word.size();
}

bool IsHex16(std::string_view word) {
  if (word.size() != 16) return false;
  for (char c : word)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

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
  std::ifstream in(path);
  if (!in) throw CollectiveUsageError(path + ": cannot open: " + std::strerror(errno));
  std::error_code ec;
  const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  int64_t line_number = 0;
  std::string line;
  auto fail = [&](const std::string& what) -> CollectiveUsageError {
    return CollectiveUsageError(path + ":" + std::to_string(line_number) + ": " + what);
  };
  auto next_line = [&]() -> bool {
    if (!std::getline(in, line)) return false;
    ++line_number;
    return true;
  };
  if (!next_line() || Trim(line) != "strads-dual 1")
    throw CollectiveUsageError(path +
                               ":1: not a strads dual-test file (the first line must be "
                               "'strads-dual 1')");
  bool ended = false;
  while (next_line()) {
    std::string_view rest = line;
    const std::string_view kind = NextWord(rest);
    if (kind.empty()) continue;
    if (ended) throw fail("text after the 'end' line");
    if (kind == "end") {
      if (!Trim(rest).empty()) throw fail("'end' takes no arguments");
      ended = true;
    } else if (kind == "workers") {
      int64_t p = 0, t = 0;
      if (!ParseInt(NextWord(rest), &p) || !ParseInt(NextWord(rest), &t) || !Trim(rest).empty() ||
          p < 1 || p > 256 || t < 1 || t > 1024)
        throw fail("expected 'workers P T' with 1 <= P <= 256 and 1 <= T <= 1024");
      if (in_workers_) throw fail("a second 'workers' line");
      in_workers_ = SyncTopology{static_cast<int>(p), static_cast<int>(t)};
    } else if (kind == "state") {
      const std::string_view loop = NextWord(rest);
      int64_t k = 0;
      if ((loop != "asyncfor" && loop != "syncfor") || !ParseInt(NextWord(rest), &k) || k < 0 ||
          !IsHex16(NextWord(rest)) || Trim(rest).empty())
        throw fail("expected 'state asyncfor|syncfor K HEX16 FILE:LINE'");
    } else if (kind == "asyncfor") {
      int64_t k = 0, first = 0, last = 0;
      if (!ParseInt(NextWord(rest), &k) || !ParseInt(NextWord(rest), &first) ||
          !ParseInt(NextWord(rest), &last))
        throw fail("expected 'asyncfor K FIRST LAST order|same FILE:LINE'");
      const std::string_view how = NextWord(rest);
      const std::string site(Trim(rest));
      if ((how != "order" && how != "same") || site.empty())
        throw fail("expected 'asyncfor K FIRST LAST order|same FILE:LINE'");
      if (last < first)
        throw fail("empty loop range " + std::to_string(first) + ".." + std::to_string(last));
      std::vector<Entry>& entries = in_[site];
      if (k != static_cast<int64_t>(entries.size()))
        throw fail("invocation " + std::to_string(k) + " of " + site + ", expected " +
                   std::to_string(entries.size()));
      const int64_t header_line = line_number;
      if (how == "same") {
        if (entries.empty() || entries.back().first != first || entries.back().last != last)
          throw fail("'same' without a previous invocation of " + site + " over the same range");
        entries.push_back({first, last, entries.back().order, header_line});
        continue;
      }
      // Every index takes at least two bytes ("0\n"): bound the count before allocating.
      const int64_t count = last - first + 1;
      if (count <= 0 || (file_bytes > 0 && count > file_bytes / 2))
        throw fail("truncated or corrupt: " + std::to_string(first) + ".." + std::to_string(last) +
                   " needs " + std::to_string(count) + " indices, more than the file's " +
                   std::to_string(file_bytes) + " bytes can list");
      auto order = std::make_shared<std::vector<int64_t>>();
      order->reserve(static_cast<size_t>(count));
      std::vector<int64_t> seen_on(static_cast<size_t>(count), 0);
      while (static_cast<int64_t>(order->size()) < count) {
        if (!next_line())
          throw CollectiveUsageError(
              path + ":" + std::to_string(line_number) + ": truncated: the order of line " +
              std::to_string(header_line) + " lists " + std::to_string(order->size()) + " of " +
              std::to_string(count) + " indices");
        int64_t index = 0;
        const std::string_view text = Trim(line);
        if (!ParseInt(text, &index))
          throw fail("loop index '" + std::string(text) + "' is not an integer");
        if (index < first || index > last)
          throw fail("loop index " + std::to_string(index) + " is outside " +
                     std::to_string(first) + ".." + std::to_string(last));
        int64_t& seen = seen_on[static_cast<size_t>(index - first)];
        if (seen != 0)
          throw fail("loop index " + std::to_string(index) + " repeated (first on line " +
                     std::to_string(seen) + ")");
        seen = line_number;
        order->push_back(index);
      }
      entries.push_back({first, last, std::move(order), header_line});
    } else {
      throw fail("unknown record '" + std::string(kind) + "'");
    }
  }
  if (in.bad()) throw CollectiveUsageError(path + ": read error: " + std::strerror(errno));
  if (!ended)
    throw CollectiveUsageError(path + ":" + std::to_string(line_number) +
                               ": truncated: no 'end' line (the run that wrote it did not finish)");
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
