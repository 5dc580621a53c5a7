#include "strads/trace/view_data.h"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <vector>

#include "strads/trace/describe.h"
#include "strads/trace/json_string.h"

namespace strads {

static_assert(std::endian::native == std::endian::little,
              "the page reads the columns as little-endian typed arrays");

namespace {

constexpr uint32_t kNotDescribed = 0xffffffff;

// One group of rows (slices, waits or instants), column by column.
struct Rows {
  std::vector<uint32_t> track;
  std::vector<double> begin_ns, end_ns;
  std::vector<uint8_t> kind;
  std::vector<uint32_t> label, index, index_end, describe;

  void Add(uint32_t t, double b, double e, uint8_t k, uint32_t l, uint64_t i, uint64_t i_end,
           uint32_t d) {
    track.push_back(t), begin_ns.push_back(b), end_ns.push_back(e), kind.push_back(k);
    label.push_back(l), index.push_back(static_cast<uint32_t>(i));
    index_end.push_back(static_cast<uint32_t>(i_end)), describe.push_back(d);
  }

  template <typename T>
  static void Column(std::ostream& out, const char* name, const std::vector<T>& v,
                     const std::vector<size_t>& order) {
    std::vector<T> sorted(order.size());
    for (size_t i = 0; i < order.size(); ++i) sorted[i] = v[order[i]];
    out << "\"" << name << "\":\"" << Base64(sorted.data(), sorted.size() * sizeof(T)) << "\",";
  }

  // The columns sorted by track, then begin, and where each of `tracks` tracks starts.
  void Write(std::ostream& out, uint32_t tracks) const {
    std::vector<size_t> order(track.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return track[a] != track[b] ? track[a] < track[b] : begin_ns[a] < begin_ns[b];
    });
    std::vector<uint32_t> start(tracks + 1, 0);
    for (uint32_t t : track) ++start[t + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    out << "{\"rows\":" << track.size() << ",";
    Column(out, "track", track, order);
    Column(out, "begin_ns", begin_ns, order);
    Column(out, "end_ns", end_ns, order);
    Column(out, "kind", kind, order);
    Column(out, "label", label, order);
    Column(out, "index", index, order);
    Column(out, "index_end", index_end, order);
    Column(out, "describe", describe, order);
    out << "\"track_start\":\"" << Base64(start.data(), start.size() * sizeof(uint32_t)) << "\"}";
  }
};

class ViewSink : public TimelineSink {
 public:
  void Start(int nodes, uint32_t threads, uint64_t origin_ns) override {
    counts_.nodes = static_cast<uint64_t>(nodes);
    counts_.threads = threads;
    origin_ns_ = origin_ns;
  }
  void BeginNode(int) override {}
  void Slice(const TimelineSlice& s) override {
    slices_.Add(Track(s.node, s.track), Rel(s.begin_ns), Rel(s.end_ns), s.worker ? 1 : 0,
                String(*s.name), s.begin_index, s.end_index, kNotDescribed);
    ++(s.worker ? counts_.worker_slices : counts_.operator_slices);
  }
  void Wait(int node, uint32_t track, const Event& e, uint64_t index,
            const TraceSites& sites) override {
    const WaitEvent w = e.wait();
    waits_.Add(Track(node, track), Rel(w.begin_ns), Rel(w.begin_ns + w.duration_ns),
               static_cast<uint8_t>(w.kind),
               String(std::string("wait for ") + WaitKindName(w.kind)), index, index,
               Described(e, sites));
    ++counts_.waits;
  }
  void Instant(int node, uint32_t track, uint64_t ns, const Event& e, uint64_t index,
               const TraceSites& sites) override {
    instants_.Add(Track(node, track), Rel(ns), Rel(ns), static_cast<uint8_t>(e.kind()),
                  String(EventKindName(e.kind())), index, index, Described(e, sites));
    ++counts_.instants;
  }
  void Arrow(const TimelineArrow& a) override {
    const bool message = a.kind == TimelineArrow::Kind::kMessage;
    arrow_kind_.push_back(message ? 0 : 1);
    arrow_from_.push_back(Track(a.from_node, a.from_track));
    arrow_to_.push_back(Track(a.to_node, a.to_track));
    arrow_from_ns_.push_back(Rel(a.from_ns));
    arrow_to_ns_.push_back(Rel(a.to_ns));
    ++(message ? counts_.message_arrows : counts_.handover_arrows);
  }

  ViewDataCounts Write(std::ostream& out) const {
    const auto tracks = static_cast<uint32_t>(counts_.nodes * (counts_.threads + 1));
    out << "{\"nodes\":" << counts_.nodes << ",\"threads\":" << counts_.threads
        << ",\"origin_ns\":" << origin_ns_ << ",\"described_limit\":" << kViewDescribedLimit
        << ",\"slices\":";
    slices_.Write(out, tracks);
    out << ",\"waits\":";
    waits_.Write(out, tracks);
    out << ",\"instants\":";
    instants_.Write(out, tracks);
    out << ",\"arrows\":{\"rows\":" << arrow_kind_.size() << ",\"kind\":\""
        << Base64(arrow_kind_.data(), arrow_kind_.size()) << "\",\"from_track\":\""
        << Base64(arrow_from_.data(), arrow_from_.size() * 4) << "\",\"from_ns\":\""
        << Base64(arrow_from_ns_.data(), arrow_from_ns_.size() * 8) << "\",\"to_track\":\""
        << Base64(arrow_to_.data(), arrow_to_.size() * 4) << "\",\"to_ns\":\""
        << Base64(arrow_to_ns_.data(), arrow_to_ns_.size() * 8) << "\"},\"strings\":[";
    for (size_t i = 0; i < strings_.size(); ++i) out << (i ? "," : "") << JsonString(strings_[i]);
    out << "]}";
    return counts_;
  }

 private:
  uint32_t Track(int node, uint32_t thread) const {
    return static_cast<uint32_t>(static_cast<uint64_t>(node) * (counts_.threads + 1) + thread);
  }
  double Rel(uint64_t ns) const {
    return static_cast<double>(ns > origin_ns_ ? ns - origin_ns_ : 0);
  }
  // Names (few) are shared; Describe texts (one per event) are not looked up.
  uint32_t String(const std::string& s) {
    const auto [it, added] = names_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
    if (added) strings_.push_back(s);
    return it->second;
  }
  uint32_t Described(const Event& e, const TraceSites& sites) {
    if (described_ >= kViewDescribedLimit) return kNotDescribed;
    ++described_;
    strings_.push_back(Describe(e, sites));
    return static_cast<uint32_t>(strings_.size() - 1);
  }
  ViewDataCounts counts_;
  uint64_t origin_ns_ = 0;
  Rows slices_, waits_, instants_;
  std::vector<uint8_t> arrow_kind_;
  std::vector<uint32_t> arrow_from_, arrow_to_;
  std::vector<double> arrow_from_ns_, arrow_to_ns_;
  std::vector<std::string> strings_;
  std::map<std::string, uint32_t> names_;
  uint64_t described_ = 0;
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

ViewDataCounts WriteViewData(const std::string& dir, std::ostream& out) {
  ViewSink sink;
  WalkTimeline(dir, {}, sink);
  return sink.Write(out);
}

}  // namespace strads
