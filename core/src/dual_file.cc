#include "dual_file.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include "strads/regular_file.h"

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

// 16 lower-case hex digits, as the runtime writes a state.
bool ParseHex16(std::string_view word, uint64_t* out) {
  if (word.size() != 16) return false;
  for (char c : word)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), *out, 16);
  return ec == std::errc() && end == word.data() + word.size();
}

// A file that stops before its `end` line, which Ending::kStopped accepts.
class TruncatedError : public DualFileError {
 public:
  using DualFileError::DualFileError;
};

}  // namespace

DualFile DualFile::Read(const std::string& path, Ending ending) {
  if (const std::string why = WhyNotRegularFile(path); !why.empty())
    throw DualFileError(path + ": " + why);
  std::ifstream in(path);
  if (!in) throw DualFileError(path + ": cannot open: " + std::strerror(errno));
  std::error_code ec;
  const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  DualFile file;
  int64_t line_number = 0;
  std::string line;
  auto fail = [&](const std::string& what) -> DualFileError {
    return DualFileError(path + ":" + std::to_string(line_number) + ": " + what);
  };
  auto next_line = [&]() -> bool {
    if (!std::getline(in, line)) return false;
    ++line_number;
    // A line without its line end is a file cut short (a cut "123" would read as index 12);
    // the writer ends every line. CRLF line ends (an editor's) are line ends.
    if (in.eof() && !line.empty() && Trim(line) != "end")
      throw TruncatedError(path + ":" + std::to_string(line_number) +
                           ": truncated: the file ends inside this line (cut short?)");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  };
  if (!next_line() || Trim(line) != "strads-dual 1")
    throw DualFileError(path +
                        ":1: not a strads dual-test file (the first line must be "
                        "'strads-dual 1')");
  try {
    while (next_line()) {
      std::string_view rest = line;
      const std::string_view kind = NextWord(rest);
      if (kind.empty()) continue;
      if (file.ended) throw fail("text after the 'end' line");
      if (kind == "end") {
        if (!Trim(rest).empty()) throw fail("'end' takes no arguments");
        file.ended = true;
      } else if (kind == "workers") {
        int64_t p = 0, t = 0;
        if (!ParseInt(NextWord(rest), &p) || !ParseInt(NextWord(rest), &t) || !Trim(rest).empty() ||
            p < 1 || p > 256 || t < 1 || t > 1024)
          throw fail("expected 'workers P T' with 1 <= P <= 256 and 1 <= T <= 1024");
        if (file.workers) throw fail("a second 'workers' line");
        file.workers = Workers{static_cast<int>(p), static_cast<int>(t)};
      } else if (kind == "state") {
        State state;
        state.loop = NextWord(rest);
        if ((state.loop != "asyncfor" && state.loop != "syncfor") ||
            !ParseInt(NextWord(rest), &state.invocation) || state.invocation < 0 ||
            !ParseHex16(NextWord(rest), &state.digest) || Trim(rest).empty())
          throw fail("expected 'state asyncfor|syncfor K HEX16 FILE:LINE'");
        state.site = Trim(rest);
        file.states.push_back(std::move(state));
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
        // A site enters `orders` with its first complete order: a stopped file's order cut
        // short leaves no empty entry behind.
        const auto known = file.orders.find(site);
        const size_t listed = known == file.orders.end() ? 0 : known->second.size();
        if (k != static_cast<int64_t>(listed))
          throw fail("invocation " + std::to_string(k) + " of " + site + ", expected " +
                     std::to_string(listed));
        const int64_t header_line = line_number;
        if (how == "same") {
          if (listed == 0 || known->second.back().first != first ||
              known->second.back().last != last)
            throw fail("'same' without a previous invocation of " + site + " over the same range");
          known->second.push_back({first, last, known->second.back().indices, header_line});
          continue;
        }
        // Every index takes at least two bytes ("0\n"): bound the count before allocating.
        const int64_t count = last - first + 1;
        if (count <= 0 || (file_bytes > 0 && count > file_bytes / 2))
          throw fail("truncated or corrupt: " + std::to_string(first) + ".." +
                     std::to_string(last) + " needs " + std::to_string(count) +
                     " indices, more than the file's " + std::to_string(file_bytes) +
                     " bytes can list");
        auto indices = std::make_shared<std::vector<int64_t>>();
        indices->reserve(static_cast<size_t>(count));
        std::vector<int64_t> seen_on(static_cast<size_t>(count), 0);
        while (static_cast<int64_t>(indices->size()) < count) {
          if (!next_line())
            throw TruncatedError(path + ":" + std::to_string(line_number) +
                                 ": truncated: the order of line " + std::to_string(header_line) +
                                 " lists " + std::to_string(indices->size()) + " of " +
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
          indices->push_back(index);
        }
        file.orders[site].push_back({first, last, std::move(indices), header_line});
      } else {
        throw fail("unknown record '" + std::string(kind) + "'");
      }
    }
  } catch (const TruncatedError&) {
    if (ending == Ending::kStopped) return file;  // the records before the cut
    throw;
  }
  if (in.bad()) throw DualFileError(path + ": read error: " + std::strerror(errno));
  if (!file.ended && ending == Ending::kComplete)
    throw DualFileError(path + ":" + std::to_string(line_number) +
                        ": truncated: no 'end' line (the run that wrote it did not finish)");
  return file;
}

}  // namespace strads
