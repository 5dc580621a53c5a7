#include "strads/trace/view_data.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "strads/trace/describe.h"
#include "strads/trace/json_string.h"

namespace strads {

static_assert(std::endian::native == std::endian::little,
              "the page reads the blocks as little-endian typed arrays");

namespace {

// Rows per block: a zoom decodes the blocks it reaches, a few hundred kB each.
constexpr size_t kBlockRows = 16384;
// Node-log indexes per Describe block.
constexpr uint64_t kDescribeBlock = 4096;
// Tile levels: kLevel0Buckets buckets over the whole trace, then kLevelFactor times more each.
// The first frame draws from level 0, a few thousand buckets per track whatever the trace's size.
constexpr int kTileLevels = 3;
constexpr uint64_t kLevel0Buckets = 2048;
constexpr uint64_t kLevelFactor = 8;

struct Row {
  double begin, end;
  uint32_t track, label, index, index_end;
  uint8_t kind;
};

struct ArrowRow {
  double from, to;
  uint32_t from_track, to_track;
  uint8_t kind;
  double Low() const { return std::min(from, to); }
  double High() const { return std::max(from, to); }
};

// A little-endian byte buffer of typed arrays.
class Bytes {
 public:
  template <typename T>
  void Put(const T& v) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
  }
  template <typename T>
  void Put(const std::vector<T>& v) {
    const size_t at = bytes_.size();
    bytes_.resize(at + v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(bytes_.data() + at, v.data(), v.size() * sizeof(T));
  }
  const std::string& str() const { return bytes_; }

 private:
  std::string bytes_;
};

std::string Deflate(const std::string& bytes) {
  uLongf size = compressBound(static_cast<uLong>(bytes.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uLong>(bytes.size()),
                Z_BEST_SPEED) != Z_OK)
    throw std::runtime_error("trace view: zlib compress2 failed");
  out.resize(size);
  return out;
}

// Where the page finds a part: inline base64 (eager) or the id of a compressed element written
// to `elements` now.
class Parts {
 public:
  explicit Parts(std::ostream& elements) : elements_(elements) {}
  void set_eager(bool eager) { eager_ = eager; }
  std::string Ref(const std::string& bytes) { return Ref(bytes, eager_); }
  std::string Ref(const std::string& bytes, bool inline_bytes) {
    if (inline_bytes) return Base64(bytes.data(), bytes.size());
    const std::string id = std::string("s").append(std::to_string(next_id_++));
    const std::string z = Deflate(bytes);
    elements_ << "<script type=\"application/octet-stream\" id=\"" << id << "\">"
              << Base64(z.data(), z.size()) << "</script>\n";
    return std::string("#").append(id);
  }

 private:
  bool eager_ = false;
  std::ostream& elements_;
  uint64_t next_id_ = 0;
};

// Times relative to a base as u32 when they all fit, else as f64.
template <typename F>
void PutTimes(Bytes& out, size_t n, bool wide, F&& value) {
  if (wide) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = value(i);
    out.Put(v);
  } else {
    std::vector<uint32_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(value(i));
    out.Put(v);
  }
}
bool FitsU32(double v) { return v >= 0 && v < 4294967296.0 && v == std::floor(v); }

// Per level, the non-empty buckets of each track: how many rows begin in them and how much of
// them rows cover (a difference array over the buckets, so a long row costs two updates).
std::string RowTiles(const std::vector<Row>& rows, uint32_t tracks, double span, uint64_t buckets) {
  const double width = span / static_cast<double>(buckets);
  std::vector<uint32_t> track_start(tracks + 1, 0), bucket, count;
  std::vector<float> busy;
  std::vector<uint32_t> counts(buckets);
  std::vector<double> full(buckets + 1), part(buckets);
  auto at = [&](double ns) {
    return static_cast<uint64_t>(std::clamp(std::floor(ns / width), 0.0, double(buckets - 1)));
  };
  size_t r = 0;
  for (uint32_t track = 0; track < tracks; ++track) {
    std::fill(counts.begin(), counts.end(), 0);
    std::fill(full.begin(), full.end(), 0.0);
    std::fill(part.begin(), part.end(), 0.0);
    for (; r < rows.size() && rows[r].track == track; ++r) {
      const Row& row = rows[r];
      const double end = std::max(row.begin, row.end);  // a damaged wait must not count back
      const uint64_t b0 = at(row.begin), b1 = at(end);
      ++counts[b0];
      if (b0 == b1) {
        part[b0] += end - row.begin;
      } else {
        part[b0] += static_cast<double>(b0 + 1) * width - row.begin;
        part[b1] += end - static_cast<double>(b1) * width;
        full[b0 + 1] += 1, full[b1] -= 1;
      }
    }
    double covering = 0;
    for (uint64_t b = 0; b < buckets; ++b) {
      covering += full[b];
      const double covered = covering * width + part[b];
      if (counts[b] == 0 && covered <= 0) continue;
      bucket.push_back(static_cast<uint32_t>(b));
      count.push_back(counts[b]);
      busy.push_back(static_cast<float>(std::min(1.0, covered / width)));
    }
    track_start[track + 1] = static_cast<uint32_t>(bucket.size());
  }
  Bytes out;
  out.Put(static_cast<uint32_t>(bucket.size()));
  out.Put(track_start), out.Put(bucket), out.Put(count), out.Put(busy);
  return out.str();
}

std::string ArrowTiles(const std::vector<ArrowRow>& arrows, double span, uint64_t buckets) {
  const double width = span / static_cast<double>(buckets);
  auto at = [&](double ns) {
    return static_cast<uint32_t>(std::clamp(std::floor(ns / width), 0.0, double(buckets - 1)));
  };
  std::vector<std::array<uint32_t, 5>> keys(arrows.size());
  for (size_t i = 0; i < arrows.size(); ++i) {
    const ArrowRow& a = arrows[i];
    keys[i] = {a.kind, a.from_track, a.to_track, at(a.from), at(a.to)};
  }
  std::sort(keys.begin(), keys.end());
  std::vector<uint32_t> entries;
  for (size_t i = 0; i < keys.size();) {
    size_t j = i;
    while (j < keys.size() && keys[j] == keys[i]) ++j;
    entries.insert(entries.end(), keys[i].begin(), keys[i].end());
    entries.push_back(static_cast<uint32_t>(j - i));
    i = j;
  }
  Bytes out;
  out.Put(static_cast<uint32_t>(entries.size() / 6));
  out.Put(entries);
  return out.str();
}

// The Describe texts of one node's events in blocks of kDescribeBlock node-log indexes. Events
// come in node-log order, so only the current block is open; closed blocks stay uncompressed
// while the page may yet be all inline (kViewEagerRows), and are compressed to elements beyond.
class DescribeBlocks {
 public:
  explicit DescribeBlocks(Parts& parts) : parts_(parts) {}
  void Add(int node, uint64_t index, const std::string& text) {
    const uint64_t first = index / kDescribeBlock * kDescribeBlock;
    if (node != node_ || first != first_) {
      Close();
      node_ = node, first_ = first;
    }
    std::string& line = lines_[index - first];
    line = text;
    std::replace(line.begin(), line.end(), '\n', ' ');
    ++described_;
  }
  // `eager`: the page holds everything inline.
  void Write(std::ostream& out, bool eager) {
    Close();
    if (eager) {
      for (auto& [node, first, text] : held_) Entry(node, first, parts_.Ref(text, true));
    } else {
      Compress();
    }
    out << "{\"block\":" << kDescribeBlock << ",\"blocks\":[";
    for (size_t i = 0; i < blocks_.size(); ++i) out << (i ? "," : "") << blocks_[i];
    out << "]}";
  }

 private:
  void Close() {
    if (node_ < 0) return;
    std::string text;
    for (std::string& line : lines_) text += line, text += '\n', line.clear();
    held_.push_back({node_, first_, std::move(text)});
    node_ = -1;
    if (described_ > kViewEagerRows) Compress();
  }
  void Compress() {
    for (auto& [node, first, text] : held_) Entry(node, first, parts_.Ref(text, false));
    held_.clear();
  }
  void Entry(int node, uint64_t first, const std::string& ref) {
    std::ostringstream entry;
    entry << "[" << node << "," << first << ",\"" << ref << "\"]";
    blocks_.push_back(entry.str());
  }

  struct Held {
    int node;
    uint64_t first;
    std::string text;
  };
  Parts& parts_;
  int node_ = -1;
  uint64_t first_ = 0, described_ = 0;
  std::vector<std::string> lines_ = std::vector<std::string>(kDescribeBlock);
  std::vector<Held> held_;
  std::vector<std::string> blocks_;  // the page's entries
};

class ViewSink : public TimelineSink {
 public:
  explicit ViewSink(DescribeBlocks& describe) : describe_(describe) {}

  void Start(int nodes, uint32_t threads, uint64_t origin_ns) override {
    counts_.nodes = static_cast<uint64_t>(nodes);
    counts_.threads = threads;
    origin_ns_ = origin_ns;
  }
  void BeginNode(int) override {}
  void Slice(const TimelineSlice& s) override {
    slices_.push_back({Rel(s.begin_ns), Rel(s.end_ns), Track(s.node, s.track), String(*s.name),
                       static_cast<uint32_t>(s.begin_index), static_cast<uint32_t>(s.end_index),
                       static_cast<uint8_t>(s.worker ? 1 : 0)});
    ++(s.worker ? counts_.worker_slices : counts_.operator_slices);
  }
  void Wait(int node, uint32_t track, const Event& e, uint64_t index,
            const TraceSites& sites) override {
    const WaitEvent w = e.wait();
    waits_.push_back({Rel(w.begin_ns), Rel(w.begin_ns + w.duration_ns), Track(node, track),
                      String(std::string("wait for ") + WaitKindName(w.kind)),
                      static_cast<uint32_t>(index), static_cast<uint32_t>(index),
                      static_cast<uint8_t>(w.kind)});
    describe_.Add(node, index, Describe(e, sites));
    ++counts_.waits;
  }
  void Instant(int node, uint32_t track, uint64_t ns, const Event& e, uint64_t index,
               const TraceSites& sites) override {
    instants_.push_back({Rel(ns), Rel(ns), Track(node, track), String(EventKindName(e.kind())),
                         static_cast<uint32_t>(index), static_cast<uint32_t>(index),
                         static_cast<uint8_t>(e.kind())});
    describe_.Add(node, index, Describe(e, sites));
    ++counts_.instants;
  }
  void Arrow(const TimelineArrow& a) override {
    const bool message = a.kind == TimelineArrow::Kind::kMessage;
    arrows_.push_back({Rel(a.from_ns), Rel(a.to_ns), Track(a.from_node, a.from_track),
                       Track(a.to_node, a.to_track), static_cast<uint8_t>(message ? 0 : 1)});
    ++(message ? counts_.message_arrows : counts_.handover_arrows);
  }

  uint64_t Rows() const {
    return slices_.size() + waits_.size() + instants_.size() + arrows_.size();
  }

  ViewDataCounts Write(std::ostream& out, Parts& parts) {
    const bool eager = Rows() <= kViewEagerRows;
    parts.set_eager(eager);
    const auto tracks = static_cast<uint32_t>(counts_.nodes * (counts_.threads + 1));
    double span = 1;
    for (const auto* rows : {&slices_, &waits_, &instants_})
      for (const Row& r : *rows) span = std::max(span, r.end);
    for (const ArrowRow& a : arrows_) span = std::max(span, a.High());
    out << "{\"nodes\":" << counts_.nodes << ",\"threads\":" << counts_.threads
        << ",\"origin_ns\":" << origin_ns_ << ",\"span_ns\":" << JsonNumber(span) << ",\"slices\":";
    WriteRows(out, slices_, tracks, span, parts);
    out << ",\"waits\":";
    WriteRows(out, waits_, tracks, span, parts);
    out << ",\"instants\":";
    WriteRows(out, instants_, tracks, span, parts);
    out << ",\"arrows\":";
    WriteArrows(out, span, parts);
    out << ",\"strings\":[";
    for (size_t i = 0; i < strings_.size(); ++i) out << (i ? "," : "") << JsonString(strings_[i]);
    out << "],\"describe\":";
    describe_.Write(out, eager);
    out << "}";
    return counts_;
  }

 private:
  static std::string JsonNumber(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v);
    return text;
  }

  static void WriteTiles(std::ostream& out, Parts& parts,
                         const std::function<std::string(uint64_t)>& tiles) {
    out << "\"tiles\":[";
    uint64_t buckets = kLevel0Buckets;
    for (int level = 0; level < kTileLevels; ++level, buckets *= kLevelFactor) {
      // Level 0 is inline always: the first frame draws from it.
      const std::string bytes = tiles(buckets);
      out << (level ? "," : "") << "{\"buckets\":" << buckets << ",\"ref\":\""
          << (level == 0 ? parts.Ref(bytes, true) : parts.Ref(bytes)) << "\"}";
    }
    out << "]";
  }

  void WriteRows(std::ostream& out, std::vector<Row>& rows, uint32_t tracks, double span,
                 Parts& parts) {
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return a.track != b.track ? a.track < b.track : a.begin < b.begin;
    });
    out << "{\"rows\":" << rows.size() << ",\"blocks\":[";
    for (size_t i = 0; i < rows.size();) {
      size_t end = i;
      while (end < rows.size() && end - i < kBlockRows && rows[end].track == rows[i].track) ++end;
      out << (i ? "," : "") << RowBlock(rows, i, end, parts);
      i = end;
    }
    out << "],";
    WriteTiles(out, parts, [&](uint64_t b) { return RowTiles(rows, tracks, span, b); });
    out << "}";
    std::vector<Row>().swap(rows);
  }

  static std::string RowBlock(const std::vector<Row>& rows, size_t from, size_t to, Parts& parts) {
    const size_t n = to - from;
    const double base = rows[from].begin;
    double hi = base;
    uint32_t min_index = UINT32_MAX, max_index = 0;
    bool wide = false;
    for (size_t i = from; i < to; ++i) {
      const double previous = i == from ? base : rows[i - 1].begin;
      wide = wide || !FitsU32(rows[i].begin - previous) || !FitsU32(rows[i].end - rows[i].begin);
      hi = std::max(hi, rows[i].end);
      min_index = std::min({min_index, rows[i].index, rows[i].index_end});
      max_index = std::max({max_index, rows[i].index, rows[i].index_end});
    }
    Bytes b;
    b.Put(static_cast<uint32_t>(n)), b.Put(static_cast<uint32_t>(wide)), b.Put(base);
    PutTimes(b, n, wide, [&](size_t i) {
      return i == 0 ? 0.0 : rows[from + i].begin - rows[from + i - 1].begin;
    });
    PutTimes(b, n, wide, [&](size_t i) { return rows[from + i].end - rows[from + i].begin; });
    std::vector<uint32_t> index(n), span(n), label(n);
    std::vector<uint8_t> kind(n);
    for (size_t i = 0; i < n; ++i) {
      const Row& r = rows[from + i];
      index[i] = r.index - (i == 0 ? 0 : rows[from + i - 1].index);
      span[i] = r.index_end - r.index;
      label[i] = r.label, kind[i] = r.kind;
    }
    b.Put(index), b.Put(span), b.Put(label), b.Put(kind);
    std::ostringstream entry;
    entry << "[" << rows[from].track << "," << JsonNumber(base) << "," << JsonNumber(hi) << "," << n
          << "," << min_index << "," << max_index << ",\"" << parts.Ref(b.str()) << "\"]";
    return entry.str();
  }

  void WriteArrows(std::ostream& out, double span, Parts& parts) {
    std::stable_sort(arrows_.begin(), arrows_.end(),
                     [](const ArrowRow& a, const ArrowRow& b) { return a.Low() < b.Low(); });
    out << "{\"rows\":" << arrows_.size() << ",\"blocks\":[";
    for (size_t i = 0; i < arrows_.size(); i += kBlockRows) {
      const size_t to = std::min(arrows_.size(), i + kBlockRows), n = to - i;
      const double base = arrows_[i].Low();
      double hi = base;
      bool wide = false;
      for (size_t k = i; k < to; ++k) {
        hi = std::max(hi, arrows_[k].High());
        wide = wide || !FitsU32(arrows_[k].from - base) || !FitsU32(arrows_[k].to - base);
      }
      Bytes b;
      b.Put(static_cast<uint32_t>(n)), b.Put(static_cast<uint32_t>(wide)), b.Put(base);
      PutTimes(b, n, wide, [&](size_t k) { return arrows_[i + k].from - base; });
      PutTimes(b, n, wide, [&](size_t k) { return arrows_[i + k].to - base; });
      std::vector<uint32_t> from(n), to_track(n);
      std::vector<uint8_t> kind(n);
      for (size_t k = 0; k < n; ++k)
        from[k] = arrows_[i + k].from_track, to_track[k] = arrows_[i + k].to_track,
        kind[k] = arrows_[i + k].kind;
      b.Put(from), b.Put(to_track), b.Put(kind);
      out << (i ? "," : "") << "[" << JsonNumber(base) << "," << JsonNumber(hi) << "," << n << ",\""
          << parts.Ref(b.str()) << "\"]";
    }
    out << "],";
    WriteTiles(out, parts, [&](uint64_t b) { return ArrowTiles(arrows_, span, b); });
    out << "}";
  }

  uint32_t Track(int node, uint32_t thread) const {
    return static_cast<uint32_t>(static_cast<uint64_t>(node) * (counts_.threads + 1) + thread);
  }
  double Rel(uint64_t ns) const {
    return static_cast<double>(ns > origin_ns_ ? ns - origin_ns_ : 0);
  }
  // Names are few and shared.
  uint32_t String(const std::string& s) {
    const auto [it, added] = names_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
    if (added) strings_.push_back(s);
    return it->second;
  }

  DescribeBlocks& describe_;
  ViewDataCounts counts_;
  uint64_t origin_ns_ = 0;
  std::vector<Row> slices_, waits_, instants_;
  std::vector<ArrowRow> arrows_;
  std::vector<std::string> strings_;
  std::map<std::string, uint32_t> names_;
};

}  // namespace

std::string Base64(const void* bytes, size_t size) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const uint8_t*>(bytes);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const uint32_t v = uint32_t{p[i]} << 16 | uint32_t{p[i + 1]} << 8 | p[i + 2];
    out += kDigits[v >> 18], out += kDigits[(v >> 12) & 63], out += kDigits[(v >> 6) & 63],
        out += kDigits[v & 63];
  }
  if (i < size) {
    const uint32_t v = uint32_t{p[i]} << 16 | (i + 1 < size ? uint32_t{p[i + 1]} << 8 : 0);
    out += kDigits[v >> 18], out += kDigits[(v >> 12) & 63];
    out += i + 1 < size ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

ViewDataCounts WriteViewData(const std::string& dir, std::ostream& literal,
                             std::ostream& elements) {
  Parts parts(elements);
  DescribeBlocks describe(parts);
  ViewSink sink(describe);
  WalkTimeline(dir, {}, sink);
  return sink.Write(literal, parts);
}

}  // namespace strads
