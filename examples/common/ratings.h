// Ratings for the SGD-MF examples: a synthetic MovieLens-like generator that any process can
// evaluate for any slice of the data set, a parser for rating files, and the chunked squared
// error that every SGD-MF program reports (so that serial, OpenMP and distributed runs print
// bit-identical RMSE values for bit-identical factors).
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "common/memory.h"
#include "common/quote.h"
#include "common/sgd_kernel.h"
#include "strads/regular_file.h"

namespace examples {

struct Rating {
  int32_t user;
  int32_t item;
  float value;
};
static_assert(std::is_trivially_copyable_v<Rating>);
static_assert(sizeof(Rating) == 12);

struct RatingsSpec {
  int64_t users = 20000;
  int64_t items = 5000;
  int64_t ratings = 1900000;
  int hidden_rank = 8;
  double noise = 0.5;
  uint64_t seed = 42;
};

namespace ratings_detail {

// Salts that keep the generator's hash streams apart from each other (InitRow uses 1 and 2).
inline constexpr uint64_t kUserFactorSalt = 3;
inline constexpr uint64_t kItemFactorSalt = 4;
inline constexpr uint64_t kRatingSalt = 5;

// A 64-bit stream key per (seed, salt). Hashing the seed first keeps the streams of nearby
// seeds (42, 43, ...) unrelated.
inline uint64_t StreamKey(uint64_t seed, uint64_t salt) { return SplitMix64(seed ^ (salt << 56)); }

// Uniform integer in [0, n) from the top 32 bits of a hash; n <= 2^31.
inline int32_t HashBelow(uint64_t h, int64_t n) {
  return static_cast<int32_t>(((h >> 32) * static_cast<uint64_t>(n)) >> 32);
}

// Uniform double in [0, 1) from the top 53 bits of a hash.
inline double UnitDouble(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// A user or item id: a non-negative decimal integer below 2^31.
inline int32_t ParseIdField(std::string_view text, const char* what) {
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw std::invalid_argument(std::string(what) + " id " + Quote(text) +
                                " is not a non-negative integer");
  int64_t v = 0;
  for (char c : text) {
    v = v * 10 + (c - '0');
    if (v > INT32_MAX)
      throw std::invalid_argument(std::string(what) + " id " + Quote(text) +
                                  " is out of range (must be < 2^31)");
  }
  return static_cast<int32_t>(v);
}

}  // namespace ratings_detail

// Rating number `index` (0 <= index < spec.ratings) of the synthetic data set described by
// `spec`. A pure function of (spec, index): every process can generate any slice on its own.
//
//   user  = uniform in [0, users)
//   item  = floor(u^2 * items), u uniform in [0, 1): low ids are more popular (item 0 gets
//           about 1/sqrt(items) of the ratings, the last item about half the average), but every
//           item is reachable
//   value = clamp(p_user . q_item + noise * g, 1, 5)
//
// where p and q are hidden_rank-dimensional factors derived by hashing (seed, user or item, l),
// with entries uniform in [0, sqrt(12 / rank)), so that the dot product has mean 3 (standard
// deviation about 0.94 for rank 8), and g is roughly standard normal (a scaled sum of 4
// uniforms, within +-3.5). Requires users in [1, 2^31], items in [1, 2^31], hidden_rank >= 1.
inline Rating RatingAt(const RatingsSpec& spec, int64_t index) {
  using namespace ratings_detail;
  const uint64_t key = StreamKey(spec.seed, kRatingSalt) + static_cast<uint64_t>(index) * 4;
  const uint64_t hu = SplitMix64(key);
  const uint64_t hi = SplitMix64(key + 1);
  const uint64_t hn = SplitMix64(key + 2);

  Rating r;
  r.user = HashBelow(hu, spec.users);
  const double u = UnitDouble(hi);
  const int64_t item = static_cast<int64_t>(u * u * static_cast<double>(spec.items));
  r.item = static_cast<int32_t>(std::min(item, spec.items - 1));

  const uint64_t ukey = StreamKey(spec.seed, kUserFactorSalt) +
                        static_cast<uint64_t>(r.user) * static_cast<uint64_t>(spec.hidden_rank);
  const uint64_t ikey = StreamKey(spec.seed, kItemFactorSalt) +
                        static_cast<uint64_t>(r.item) * static_cast<uint64_t>(spec.hidden_rank);
  float dot = 0.0f;
  for (int l = 0; l < spec.hidden_rank; ++l)
    dot += UnitFloat(SplitMix64(ukey + l)) * UnitFloat(SplitMix64(ikey + l));
  // E[U V] = 1/4 per term, so the mean of the sum is rank / 4: scale it to 3.
  dot *= 12.0f / static_cast<float>(std::max(spec.hidden_rank, 1));

  // Sum of four 16-bit uniforms: mean 2, variance 1/3.
  float g = 0.0f;
  for (int s = 0; s < 64; s += 16) g += static_cast<float>((hn >> s) & 0xffff) * (1.0f / 65536.0f);
  g = (g - 2.0f) * 1.7320508f;

  r.value = std::clamp(dot + static_cast<float>(spec.noise) * g, 1.0f, 5.0f);
  return r;
}

// Parses one line "user item rating [timestamp]". Fields are separated by whitespace, ',' or
// '::' (MovieLens .dat), with optional whitespace around ',' and '::'. The timestamp, if any, is
// ignored. Throws std::invalid_argument with a short message on any defect; the caller adds
// file:line and skips blank and comment lines before calling this.
inline Rating ParseRatingLine(std::string_view line) {
  using namespace ratings_detail;
  std::string_view fields[4];
  int count = 0;
  size_t pos = 0;
  const size_t n = line.size();
  auto skip_space = [&] {
    while (pos < n && IsSpace(line[pos])) ++pos;
  };
  // Length of the hard separator (',' or '::') at pos, or 0.
  auto hard_separator = [&]() -> size_t {
    if (pos < n && line[pos] == ',') return 1;
    if (pos + 1 < n && line[pos] == ':' && line[pos + 1] == ':') return 2;
    return 0;
  };
  skip_space();
  while (pos < n) {
    const size_t start = pos;
    while (pos < n && !IsSpace(line[pos]) && hard_separator() == 0) ++pos;
    if (pos == start) throw std::invalid_argument("empty field in " + Quote(line));
    if (count < 4) fields[count] = line.substr(start, pos - start);
    ++count;
    skip_space();
    if (const size_t sep = hard_separator()) {
      pos += sep;
      skip_space();
      if (pos == n) throw std::invalid_argument("empty field in " + Quote(line));
    }
  }
  if (count != 3 && count != 4)
    throw std::invalid_argument("expected 3 or 4 fields 'user item rating [timestamp]', got " +
                                std::to_string(count));

  Rating r;
  r.user = ParseIdField(fields[0], "user");
  r.item = ParseIdField(fields[1], "item");
  const std::string_view text = fields[2];
  float value = 0.0f;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range)
    throw std::invalid_argument("rating " + Quote(text) + " is out of range");
  if (ec != std::errc() || end != text.data() + text.size())
    throw std::invalid_argument("rating " + Quote(text) + " is not a number");
  if (!std::isfinite(value))
    throw std::invalid_argument("rating " + Quote(text) + " is not finite");
  r.value = value;
  return r;
}

// Calls on_rating(line_number, rating) for every rating of a ratings file, in file order: one
// rating per line (see ParseRatingLine); blank lines and lines whose first non-blank character
// is '#' or '%' are skipped. Throws std::runtime_error "<path>:<line>: <message>" on a malformed
// line and "<path>: cannot open: <reason>" if the file cannot be opened.
template <class OnRating>
void ForEachRatingLine(const std::string& path, OnRating on_rating) {
  std::string why;
  const int fd = strads::OpenRegularFile(path, &why);
  if (fd < 0) throw std::runtime_error(path + ": " + why);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(::fdopen(fd, "rb"), &std::fclose);
  if (!file) {
    ::close(fd);
    throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  }

  int64_t line_number = 0;
  auto handle_line = [&](std::string_view line) {
    ++line_number;
    size_t first = 0;
    while (first < line.size() && ratings_detail::IsSpace(line[first])) ++first;
    if (first == line.size() || line[first] == '#' || line[first] == '%') return;
    Rating rating;
    try {
      rating = ParseRatingLine(line);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(path + ":" + std::to_string(line_number) + ": " + e.what());
    }
    on_rating(line_number, rating);
  };

  // Read in blocks and hand complete lines to handle_line; `pending` holds a partial line.
  std::string pending;
  std::vector<char> block(1 << 20);
  for (;;) {
    const size_t got = std::fread(block.data(), 1, block.size(), file.get());
    if (got == 0) {
      if (std::ferror(file.get()))
        throw std::runtime_error(path + ": read error: " + std::strerror(errno));
      break;
    }
    std::string_view data(block.data(), got);
    size_t newline;
    while ((newline = data.find('\n')) != std::string_view::npos) {
      if (pending.empty()) {
        handle_line(data.substr(0, newline));
      } else {
        pending.append(data.substr(0, newline));
        handle_line(pending);
        pending.clear();
      }
      data.remove_prefix(newline + 1);
    }
    pending.append(data);
  }
  if (!pending.empty()) handle_line(pending);
}

// Reads a ratings file (ForEachRatingLine); also an error if it holds no ratings.
inline std::vector<Rating> LoadRatingsFile(const std::string& path) {
  std::vector<Rating> ratings;
  ForEachRatingLine(path, [&](int64_t, const Rating& r) { ratings.push_back(r); });
  if (ratings.empty()) throw std::runtime_error(path + ": no ratings in file");
  return ratings;
}

// "<path>:<line>: user id N" (or item) for the first line holding the largest user (item) id
// `id`: the place a size error about the model's rows names. Rescans the file (error path only).
inline std::string PlaceOfId(const std::string& path, bool user, int32_t id) {
  int64_t found = 0;
  ForEachRatingLine(path, [&](int64_t line, const Rating& r) {
    if (found == 0 && (user ? r.user : r.item) == id) found = line;
  });
  return path + ":" + std::to_string(found) + ": " + (user ? "user" : "item") + " id " +
         std::to_string(id);
}

// LoadRatingsFile, and `spec` set to the file's shape: users and items one past the largest
// ids, ratings the count. Throws std::runtime_error naming the line of the largest id if its
// rows of model factors (Row) would not fit in the machine's memory.
inline std::vector<Rating> LoadRatingsFile(const std::string& path, RatingsSpec* spec) {
  std::vector<Rating> ratings = LoadRatingsFile(path);
  int32_t max_user = 0, max_item = 0;
  for (const Rating& r : ratings) {
    max_user = std::max(max_user, r.user);
    max_item = std::max(max_item, r.item);
  }
  for (const bool user : {true, false}) {
    const int32_t id = user ? max_user : max_item;
    CheckFitsInMemory(
        [&] {
          return PlaceOfId(path, user, id) + " (" + std::to_string(int64_t{id} + 1) + " rows of " +
                 std::to_string(sizeof(Row)) + " bytes)";
        },
        (static_cast<double>(id) + 1) * sizeof(Row));
  }
  spec->users = int64_t{max_user} + 1;
  spec->items = int64_t{max_item} + 1;
  spec->ratings = static_cast<int64_t>(ratings.size());
  return ratings;
}

// The squared error of the model (w, h) is summed over chunks of kErrorChunk consecutive
// ratings: each chunk in index order, then the chunk sums in chunk order. Distributed programs
// compute chunk sums wherever the chunk lives and add them in chunk order to get the same value.
inline constexpr int64_t kErrorChunk = 4096;

// One rating's squared error: the difference in float, its square in double.
inline double SquaredError(const Rating& r, const Row& w, const Row& h) {
  const double d = static_cast<double>(r.value - Dot(w, h));
  return d * d;
}

// The squared error of one chunk, summed in index order starting from 0.0.
inline double ChunkSquaredError(std::span<const Rating> chunk, const std::vector<Row>& w,
                                const std::vector<Row>& h) {
  double sum = 0.0;
  for (const Rating& r : chunk) sum += SquaredError(r, w[r.user], h[r.item]);
  return sum;
}

// Total squared error over all ratings, chunked as described above. RMSE = sqrt(total / n).
inline double ChunkedSquaredError(const std::vector<Rating>& ratings, const std::vector<Row>& w,
                                  const std::vector<Row>& h) {
  const int64_t n = static_cast<int64_t>(ratings.size());
  double total = 0.0;
  for (int64_t begin = 0; begin < n; begin += kErrorChunk) {
    const int64_t size = std::min(kErrorChunk, n - begin);
    total += ChunkSquaredError(
        std::span<const Rating>(ratings.data() + begin, static_cast<size_t>(size)), w, h);
  }
  return total;
}

}  // namespace examples
