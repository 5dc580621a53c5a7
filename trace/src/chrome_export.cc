#include "strads/trace/chrome_export.h"

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>

#include "strads/trace/describe.h"
#include "strads/trace/json_string.h"
#include "strads/trace/timeline.h"

namespace strads {

namespace {

class JsonEvents {
 public:
  JsonEvents(std::ostream& out, uint64_t origin_ns) : out_(out), origin_ns_(origin_ns) {}

  // Microseconds since the origin, with ns digits.
  std::string Ts(uint64_t ns) const {
    const uint64_t rel = ns > origin_ns_ ? ns - origin_ns_ : 0;
    char buf[40];
    std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, rel / 1000, rel % 1000);
    return buf;
  }
  static std::string Dur(uint64_t ns) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
    return buf;
  }
  // One event object; `fields` is the rest of it, starting with a comma.
  void Put(const char* ph, const std::string& name, int pid, uint32_t tid,
           const std::string& fields) {
    out_ << (first_ ? "\n" : ",\n") << "{\"ph\":\"" << ph << "\",\"name\":" << JsonString(name)
         << ",\"pid\":" << pid << ",\"tid\":" << tid << fields << "}";
    first_ = false;
  }

 private:
  std::ostream& out_;
  uint64_t origin_ns_;
  bool first_ = true;
};

std::string WaitName(const WaitEvent& w) { return std::string("wait for ") + WaitKindName(w.kind); }

// The timeline as Chrome Trace Events: a process per node, its tracks named and ordered
// (the driver first), the rest one event object each.
class ChromeSink : public TimelineSink {
 public:
  ChromeSink(const std::string& dir, std::ostream& out) : dir_(dir), out_(out) {}
  const ChromeExportCounts& counts() const { return counts_; }

  void Start(int, uint32_t threads, uint64_t origin_ns) override {
    threads_ = threads;
    out_ << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"trace\":" << JsonString(dir_)
         << ",\"format\":\"strads trace export\"},\"traceEvents\":[";
    json_.emplace(out_, origin_ns);
  }
  void BeginNode(int k) override {
    json_->Put("M", "process_name", k, 0,
               ",\"args\":{\"name\":\"node " + std::to_string(k) + "\"}");
    json_->Put("M", "process_sort_index", k, 0,
               ",\"args\":{\"sort_index\":" + std::to_string(k) + "}");
    for (uint32_t t = 0; t <= threads_; ++t) {
      const std::string name = t == threads_ ? "driver" : "thread " + std::to_string(t);
      json_->Put("M", "thread_name", k, t, ",\"args\":{\"name\":" + JsonString(name) + "}");
      json_->Put("M", "thread_sort_index", k, t,
                 ",\"args\":{\"sort_index\":" + std::to_string(t == threads_ ? 0 : t + 1) + "}");
    }
  }
  void Slice(const TimelineSlice& s) override {
    json_->Put("X", *s.name, s.node, s.track,
               std::string(",\"cat\":\"") + (s.worker ? "worker" : "operator") + "\",\"ts\":" +
                   json_->Ts(s.begin_ns) + ",\"dur\":" + json_->Dur(s.end_ns - s.begin_ns) +
                   ",\"args\":{\"invocation\":" + std::to_string(s.invocation) +
                   ",\"begin_event\":" + std::to_string(s.begin_index) +
                   ",\"end_event\":" + std::to_string(s.end_index) + "}");
    ++(s.worker ? counts_.worker_slices : counts_.operator_slices);
  }
  void Wait(int k, uint32_t track, const Event& e, uint64_t index,
            const TraceSites& sites) override {
    const WaitEvent w = e.wait();
    json_->Put("X", WaitName(w), k, track,
               ",\"cat\":\"wait\",\"ts\":" + json_->Ts(w.begin_ns) + ",\"dur\":" +
                   json_->Dur(w.duration_ns) + ",\"args\":{\"event\":" + std::to_string(index) +
                   ",\"describe\":" + JsonString(Describe(e, sites)) + "}");
    ++counts_.wait_slices;
  }
  void Instant(int k, uint32_t track, uint64_t ns, const Event& e, uint64_t index,
               const TraceSites& sites) override {
    const char* kind = EventKindName(e.kind());
    json_->Put("i", kind, k, track,
               std::string(",\"cat\":\"") + kind + "\",\"ts\":" + json_->Ts(ns) +
                   ",\"s\":\"t\",\"args\":{\"event\":" + std::to_string(index) +
                   ",\"describe\":" + JsonString(Describe(e, sites)) + "}");
    ++counts_.instants;
  }
  void Arrow(const TimelineArrow& a) override {
    const bool message = a.kind == TimelineArrow::Kind::kMessage;
    const std::string cat = message ? "message" : "handover";
    const std::string id = std::to_string(++flow_id_);
    json_->Put("s", a.name, a.from_node, a.from_track,
               ",\"cat\":\"" + cat + "\",\"id\":" + id + ",\"ts\":" + json_->Ts(a.from_ns));
    json_->Put("f", a.name, a.to_node, a.to_track,
               ",\"cat\":\"" + cat + "\",\"id\":" + id + ",\"ts\":" + json_->Ts(a.to_ns) +
                   ",\"bp\":\"e\"");
    ++(message ? counts_.message_flows : counts_.handover_flows);
  }

 private:
  const std::string& dir_;
  std::ostream& out_;
  uint32_t threads_ = 0;
  std::optional<JsonEvents> json_;
  uint64_t flow_id_ = 0;
  ChromeExportCounts counts_;
};

}  // namespace

ChromeExportCounts ExportChromeTrace(const std::string& dir, const ChromeExportOptions& options,
                                     std::ostream& out) {
  ChromeSink sink(dir, out);
  WalkTimeline(dir, options, sink);
  out << "\n]}\n";
  return sink.counts();
}

}  // namespace strads
