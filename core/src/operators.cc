#include "strads/operators.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

#include "memory_headroom.h"
#include "node_context.h"
#include "strads/regular_file.h"

namespace strads {
namespace internal {

void FetchRange(Runtime& rt, DdsBase& v, int64_t begin, int64_t end) {
  struct Ask {
    int64_t begin, end;
  };
  const auto asks = rt.context().collectives().AllGatherValue<Ask>({begin, end});
  const int me = rt.node(), nodes = rt.nodes();
  std::vector<std::vector<std::byte>> out(nodes);
  for (int p = 0; p < nodes; ++p) {
    const int64_t b = std::max(asks[p].begin, v.owned_begin());
    const int64_t e = std::min(asks[p].end, v.owned_end());
    if (p != me && b < e) {
      ByteWriter w;
      w.Put(b);
      w.Put(e);
      w.PutRaw(v.raw_element(b), static_cast<size_t>(e - b) * v.element_bytes());
      out[p] = w.Take();
    }
  }
  for (const auto& bytes : rt.context().collectives().AllToAll(std::move(out))) {
    if (bytes.empty()) continue;
    ByteReader r(bytes);
    const auto b = r.Get<int64_t>(), e = r.Get<int64_t>();
    if (b < begin || e > end || b > e) throw std::runtime_error("FetchRange: bad reply");
    r.GetRaw(v.raw_element(b), static_cast<size_t>(e - b) * v.element_bytes());
  }
}

namespace {

// The start of the first line that begins at or after `at`: `at` itself if it is 0 or the byte
// before it is a newline, else just after the next newline, or `size` if there is none.
int64_t LineStartFrom(std::ifstream& in, int64_t at, int64_t size) {
  if (at <= 0 || at >= size) return at <= 0 ? 0 : size;
  char buf[4096];
  int64_t pos = at - 1;
  in.clear();
  in.seekg(pos);
  while (pos < size && in) {
    const int64_t want = std::min<int64_t>(sizeof buf, size - pos);
    in.read(buf, want);
    const int64_t got = in.gcount();
    for (int64_t k = 0; k < got; ++k)
      if (buf[k] == '\n') return pos + k + 1;
    if (got == 0) break;
    pos += got;
  }
  return size;
}

}  // namespace

void CheckFitsInMemory(Runtime& rt, const char* kind, const std::string& name, int64_t n,
                       const char* elements, size_t element_bytes, bool whole_on_each_node) {
  const int64_t share = whole_on_each_node ? n : n / rt.nodes() + (n % rt.nodes() != 0 ? 1 : 0);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;  // unknown: let the allocation decide
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  const double bytes = static_cast<double>(share) * static_cast<double>(element_bytes);
  // With what the node already holds: two tables that each fit may not fit together (a width
  // flag that made W 20 GB and H 16 GB on a 25 GB machine ended in the OOM killer's SIGKILL).
  double held = 0;
  for (uint32_t d = 0; d < rt.context().dds_count(); ++d) {
    const DdsBase& other = rt.context().dds(d);
    held += static_cast<double>(other.owned_end() - other.owned_begin()) *
            static_cast<double>(other.element_bytes());
  }
  // The nodes of --nodes P are threads of this process and share its machine: each holds about
  // as much as this one (under mpiexec, --nodes is 1 and each rank's machine is unknown here).
  const int in_process = std::max(1, rt.options().nodes);
  if (in_process * (held + bytes) <= memory) {
    // It fits the machine; and what the process can still use (other processes, the cgroup,
    // --memory-limit)? Every node writes its share at once as the DDS is made.
    // The length is said only where a node holds part of it: else it is the count below.
    std::string what = std::string(kind) + " '" + name + "'";
    if (share != n) what += " of " + std::to_string(n) + " " + elements;
    EnsureNodesHeadroom(rt.options(), what, share, elements, element_bytes);
    return;
  }
  char beside[96] = "";
  if (held > 0)
    std::snprintf(beside, sizeof beside, " beside the %.3g GB of the DDSs each already holds",
                  held / 1e9);
  char together[96] = "";
  if (in_process > 1)
    std::snprintf(together, sizeof together, ", %.3g GB for the %d nodes of this process",
                  in_process * (held + bytes) / 1e9, in_process);
  char buf[480];
  std::snprintf(buf, sizeof buf,
                "%s '%s' of %lld %s of %zu bytes: %.3g GB on each of %d node(s)%s%s, "
                "over this machine's memory of %.3g GB (a size from the data or the flags?)",
                kind, name.c_str(), static_cast<long long>(n), elements, element_bytes, bytes / 1e9,
                rt.nodes(), beside, together, memory / 1e9);
  throw UsageError(buf);
}

FileShare ReadFileShare(Runtime& rt, const std::string& path) {
  std::string error;
  std::string text;
  int64_t begin = 0;
  {
    // Checked before the stream opens it: a FIFO would block the open, a directory opens and
    // then reports a size of 2^63 - 1.
    const std::string why = WhyNotRegularFile(path);
    std::ifstream in;
    if (why.empty()) in.open(path, std::ios::binary);
    if (!why.empty()) {
      error = path + ": " + why;
    } else if (!in) {
      error = path + ": cannot open: " + std::strerror(errno);
    } else {
      in.seekg(0, std::ios::end);
      const int64_t size = in.tellg();
      if (size < 0) {
        error = path + ": cannot read (not a regular file?)";
      } else {
        const EvenSplit bytes(size, rt.nodes());
        begin = bytes.begin(rt.node());
        int64_t end = bytes.end(rt.node());
        // A node's lines start after the first newline before its range (node 0: at 0) and
        // run to the first newline at or after its end. Only that much is read: never the
        // whole file on every node.
        begin = LineStartFrom(in, begin, size);
        end = LineStartFrom(in, end, size);
        if (end > begin) {
          text.resize(static_cast<size_t>(end - begin));
          in.clear();
          in.seekg(begin);
          in.read(text.data(), end - begin);
          if (!in || in.gcount() != end - begin) error = path + ": read error";
        }
      }
    }
  }
  if (error.empty())
    rt.context().ordering().Input(path, static_cast<uint64_t>(begin),
                                  std::as_bytes(std::span<const char>(text.data(), text.size())));
  // Agree on I/O errors before anything else.
  ByteWriter w;
  w.PutVector(std::vector<char>(error.begin(), error.end()));
  for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
    ByteReader r(bytes);
    auto e = r.GetVector<char>();
    if (!e.empty()) throw CollectiveUsageError(std::string(e.begin(), e.end()));
  }
  FileShare share;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    share.lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  // Line numbers: the lines of the nodes before this one.
  const auto counts =
      rt.context().collectives().AllGatherValue<int64_t>(static_cast<int64_t>(share.lines.size()));
  for (int p = 0; p < rt.node(); ++p) share.first_line += counts[p];
  return share;
}

void Redistribute(Runtime& rt, DdsBase& v, int64_t offset, const std::byte* items, int64_t count) {
  const int nodes = rt.nodes();
  std::vector<std::vector<std::byte>> out(nodes);
  for (int p = 0; p < nodes; ++p) {
    const int64_t b = std::max(offset, v.owners().begin(p));
    const int64_t e = std::min(offset + count, v.owners().end(p));
    if (b >= e) continue;
    ByteWriter w;
    w.Put(b);
    w.Put(e);
    w.PutRaw(items + static_cast<size_t>(b - offset) * v.element_bytes(),
             static_cast<size_t>(e - b) * v.element_bytes());
    out[p] = w.Take();
  }
  for (const auto& bytes : rt.context().collectives().AllToAll(std::move(out))) {
    if (bytes.empty()) continue;
    ByteReader r(bytes);
    const auto b = r.Get<int64_t>(), e = r.Get<int64_t>();
    if (b < v.owned_begin() || e > v.owned_end() || b > e)
      throw std::runtime_error("ReadFromFile: bad redistribution message");
    r.GetRaw(v.raw_element(b), static_cast<size_t>(e - b) * v.element_bytes());
  }
}

void AgreeOnParseError(Runtime& rt, const std::string& path, int64_t line,
                       const std::string& what) {
  ByteWriter w;
  w.Put(line);
  w.PutVector(std::vector<char>(what.begin(), what.end()));
  int64_t first = 0;
  std::string first_what;
  for (const auto& bytes : rt.context().collectives().AllGather(w.Take())) {
    ByteReader r(bytes);
    const auto l = r.Get<int64_t>();
    auto msg = r.GetVector<char>();
    if (l > 0 && (first == 0 || l < first)) first = l, first_what.assign(msg.begin(), msg.end());
  }
  if (first > 0) throw CollectiveUsageError(path + ":" + std::to_string(first) + ": " + first_what);
}

}  // namespace internal

uint64_t Checksum(Runtime& rt, std::initializer_list<DdsBase*> all) {
  return Checksum(rt, std::vector<DdsBase*>(all));
}

uint64_t Checksum(Runtime& rt, const std::vector<DdsBase*>& all) {
  // Noted with a tag byte, so that a restart that meets another reduction where the
  // checkpointed run had a Checksum (or the reverse) refuses instead of returning it.
  struct Noted {
    uint64_t digest;
    char tag;
  } noted{0, 'C'};
  constexpr size_t kNotedBytes = sizeof(uint64_t) + 1;
  if (internal::ReplayedReduction(rt, &noted, kNotedBytes)) return noted.digest;
  // The hash passes along the nodes, each adding its owned bytes: gathering them held every
  // DDS's full length on every node (at --nodes 64, 64 copies at once in one process).
  noted.digest = Fnv1a().digest();
  for (DdsBase* v : all) {
    const std::byte* begin = v->raw_element(v->owned_begin());
    noted.digest = rt.context().collectives().HashInNodeOrder(
        noted.digest, begin, static_cast<size_t>(v->raw_element(v->owned_end()) - begin));
  }
  internal::NoteReduction(rt, &noted, kNotedBytes);
  return noted.digest;
}

}  // namespace strads
