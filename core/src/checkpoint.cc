#include "checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "node_context.h"
#include "strads/dmap.h"
#include "strads/errors.h"
#include "strads/fnv1a.h"
#include "sync_params.h"

namespace strads::internal {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'D', 'S', 'C', 'K'};
constexpr uint32_t kFormatVersion = 2;
constexpr const char* kManifestHeader = "strads checkpoint 2";

// How a part (one DDS's or map's bytes) is stored in a node file.
enum class Stored : uint8_t { kInline = 0, kReference = 1 };

std::string NodeFileName(int node) { return "node-" + std::to_string(node) + ".ckpt"; }

std::string CheckpointDir(const std::string& dir, uint64_t operators) {
  return (fs::path(dir) / ("ckpt-" + std::to_string(operators))).string();
}

// DIR of DIR/ckpt-N (also when written with a trailing slash).
fs::path CheckpointRoot(const std::string& checkpoint) {
  fs::path path = fs::path(checkpoint).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  return path.parent_path();
}

// The digest of a part's bytes, and the checksum of a whole file: FNV-1a's step a 64-bit word at
// a time (8 times fewer steps than a byte at a time: 20 ms against 120-200 ms for 41 MB), then
// the tail bytes and the length.
uint64_t PartDigest(const std::byte* data, size_t bytes) {
  Fnv1a digest;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    digest.UpdateWord(word);
  }
  digest.Update(data + i, bytes - i);
  digest.UpdateWord(bytes);
  return digest.digest();
}

// The operator count of a directory named ckpt-N, or -1.
int64_t CheckpointNumber(const std::string& name) {
  if (name.rfind("ckpt-", 0) != 0 || name.size() == 5 || name.size() > 24) return -1;
  for (size_t i = 5; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  return std::stoll(name.substr(5));
}

void PutString(ByteWriter& w, const std::string& s) {
  w.PutVector(std::vector<char>(s.begin(), s.end()));
}

std::string GetString(ByteReader& r) {
  const auto chars = r.GetVector<char>();
  return std::string(chars.begin(), chars.end());
}

// STRADS_CHECKPOINT_KILL_AT=OPS[:manifest] (tests only): node 0 kills its process with
// SIGKILL half-way through writing its file of checkpoint OPS, or the manifest of it.
bool KillsAt(uint64_t operators, const char* stage) {
  const char* at = std::getenv("STRADS_CHECKPOINT_KILL_AT");
  if (at == nullptr || *at == '\0') return false;
  const std::string text = at;
  const auto colon = text.find(':');
  const std::string wanted_stage = colon == std::string::npos ? "data" : text.substr(colon + 1);
  return std::strtoull(text.c_str(), nullptr, 10) == operators && wanted_stage == stage;
}

// STRADS_TEST_KILL_RANK=NODE:OPS[:ONCE_FILE] (tests only): node NODE kills its process with
// SIGKILL at the end of operator OPS: a rank dying at a chosen point. Without ONCE_FILE only in
// a run that is no restart; with it, only if ONCE_FILE does not exist yet (it is created first).
bool KillsRankAt(int node, uint64_t operators, bool restarted) {
  const char* at = std::getenv("STRADS_TEST_KILL_RANK");
  if (at == nullptr || *at == '\0') return false;
  char* end = nullptr;
  const long wanted = std::strtol(at, &end, 10);
  if (*end != ':' || wanted != node) return false;
  if (std::strtoull(end + 1, &end, 10) != operators) return false;
  if (*end != ':') return !restarted;
  const int fd = ::open(end + 1, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// Writes `bytes` to `path` crash-safely: PATH.tmp, fsync, rename, fsync of the directory.
// `kill_half_way`: the test hook. Returns "" or what failed.
std::string WriteFileDurably(const std::string& path, const std::vector<std::byte>& bytes,
                             bool kill_half_way) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return tmp + ": cannot create: " + std::strerror(errno);
  size_t done = 0;
  const size_t half = bytes.size() / 2;
  while (done < bytes.size()) {
    size_t want = bytes.size() - done;
    if (kill_half_way && done < half) want = half - done;
    const ssize_t n = ::write(fd, bytes.data() + done, want);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = tmp + ": write failed: " + std::strerror(errno);
      ::close(fd);
      return why;
    }
    done += static_cast<size_t>(n);
    if (kill_half_way && done >= half) {
      ::fsync(fd);
      std::raise(SIGKILL);
    }
  }
  if (::fsync(fd) != 0) {
    const std::string why = tmp + ": fsync failed: " + std::strerror(errno);
    ::close(fd);
    return why;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return path + ": rename failed: " + std::strerror(errno);
  const int dir = ::open(fs::path(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return "";
}

// The flags a result depends on, as a restart compares them with the checkpointed run's.
std::string ResultFlags(const RuntimeOptions& o) {
  return "--seed " + std::to_string(o.seed) + " --blocks " + std::to_string(o.blocks) +
         " --async-engine " + (o.async_engine == AsyncEngine::kLocks ? "locks" : "schedule") +
         " --threads " + std::to_string(o.threads);
}

// Reads a whole file; "" in `why` unless it failed.
std::vector<std::byte> ReadWholeFile(const std::string& path, std::string* why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = path + ": cannot open: " + std::strerror(errno);
    return {};
  }
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// A checkpoint's MANIFEST (docs/checkpoints.md), as node 0 wrote it last.
struct Manifest {
  int nodes = 0;
  uint64_t operators = 0;
  std::string site;
  std::vector<uint64_t> data;            // the older checkpoints whose node files parts refer to
  std::vector<uint64_t> sizes, digests;  // per node file
};

std::string ManifestText(const Manifest& m) {
  std::ostringstream out;
  out << kManifestHeader << "\nnodes " << m.nodes << "\noperators " << m.operators << "\nsite "
      << m.site << "\ndata";
  for (const uint64_t n : m.data) out << " " << n;
  out << "\n";
  for (int p = 0; p < m.nodes; ++p) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(m.digests[p]));
    out << NodeFileName(p) << " " << m.sizes[p] << " " << hex << "\n";
  }
  out << "end\n";
  return out.str();
}

// Parses DIR/MANIFEST; "" in `why` unless it is missing or malformed (named by line).
Manifest ReadManifest(const std::string& dir, std::string* why) {
  const std::string path = (fs::path(dir) / "MANIFEST").string();
  Manifest m;
  std::ifstream in(path);
  if (!in) {
    *why = path + ": cannot open: " + std::strerror(errno) + " (not a complete checkpoint)";
    return m;
  }
  std::string line;
  int number = 0;
  auto fail = [&](const std::string& what) {
    *why = path + ":" + std::to_string(number) + ": " + what;
    return m;
  };
  auto next = [&]() {
    ++number;
    return static_cast<bool>(std::getline(in, line));
  };
  if (!next() || line != kManifestHeader)
    return fail("expected '" + std::string(kManifestHeader) + "' (another version?)");
  long long value = 0;
  char rest = 0;
  if (!next() || std::sscanf(line.c_str(), "nodes %lld%c", &value, &rest) != 1 || value < 1 ||
      value > 256)
    return fail("expected 'nodes P' with P in 1..256");
  m.nodes = static_cast<int>(value);
  unsigned long long ops = 0;
  if (!next() || std::sscanf(line.c_str(), "operators %llu%c", &ops, &rest) != 1 || ops == 0)
    return fail("expected 'operators N' with N >= 1");
  m.operators = ops;
  if (!next() || line.rfind("site ", 0) != 0) return fail("expected 'site KIND FILE:LINE'");
  m.site = line.substr(5);
  if (!next() || (line != "data" && line.rfind("data ", 0) != 0))
    return fail("expected 'data' and the checkpoints referred to");
  {
    std::istringstream numbers(line.substr(4));
    std::string word;
    while (numbers >> word) {
      if (word.size() > 19 || word.find_first_not_of("0123456789") != std::string::npos ||
          std::stoull(word) >= m.operators)
        return fail("'" + word + "' is not an earlier checkpoint's operator count");
      m.data.push_back(std::stoull(word));
    }
  }
  for (int p = 0; p < m.nodes; ++p) {
    char name[64];
    unsigned long long size = 0, digest = 0;
    if (!next() ||
        std::sscanf(line.c_str(), "%63s %llu %16llx%c", name, &size, &digest, &rest) != 3 ||
        name != NodeFileName(p))
      return fail("expected '" + NodeFileName(p) + " BYTES CHECKSUM'");
    m.sizes.push_back(size);
    m.digests.push_back(digest);
  }
  if (!next() || line != "end") return fail("expected 'end' (a truncated manifest?)");
  return m;
}

// The checkpoint --restart names: DIR/ckpt-N itself, or DIR's highest complete one.
std::string ResolveRestart(const std::string& target, std::string* why) {
  std::error_code ec;
  if (fs::exists(fs::path(target) / "MANIFEST", ec)) return target;
  if (!fs::is_directory(target, ec)) {
    *why = target + ": no such checkpoint directory";
    return "";
  }
  int64_t best = -1;
  for (const auto& entry : fs::directory_iterator(target, ec)) {
    const int64_t n = CheckpointNumber(entry.path().filename().string());
    if (n > best && fs::exists(entry.path() / "MANIFEST", ec)) best = n;
  }
  if (best < 0) {
    *why = target + ": no complete checkpoint in it (no ckpt-N/MANIFEST)";
    return "";
  }
  return CheckpointDir(target, static_cast<uint64_t>(best));
}

// Deletes a checkpoint directory, its manifest first, so that it is never seen half-deleted
// as complete.
void DeleteCheckpoint(const fs::path& dir) {
  std::error_code ec;
  fs::remove(dir / "MANIFEST", ec);
  fs::remove_all(dir, ec);
}

// Throws CollectiveUsageError with the first node's error, if any node has one.
void AgreeOnError(Collectives& collectives, const std::string& mine) {
  ByteWriter w;
  PutString(w, mine);
  for (const auto& bytes : collectives.AllGather(w.Take())) {
    ByteReader r(bytes);
    const std::string theirs = GetString(r);
    if (!theirs.empty()) throw CollectiveUsageError(theirs);
  }
}

}  // namespace

struct RestoredNode {
  std::string path;  // of the node file, for messages
  uint64_t operators = 0;
  std::string site;
  std::string flags;  // ResultFlags of the checkpointed run
  std::string rng;
  struct Part {
    uint32_t id;
    std::string name;
    int64_t size;
    uint64_t element_bytes;
    std::vector<std::byte> payload;
    // Where its bytes are stored: the node file of checkpoint `holder` at `offset`.
    uint64_t holder = 0, offset = 0, digest = 0;
  };
  std::vector<Part> dds, maps;
};

namespace {

// The bytes of a part that a node file refers to: `length` bytes at `part.offset` of `path` (the
// same node's file of an older checkpoint), checked against the part's digest.
std::vector<std::byte> ReadReferencedPart(const std::string& path, const RestoredNode::Part& part,
                                          uint64_t length) {
  const std::string where = "part '" + part.name + "' refers to " + path + " bytes " +
                            std::to_string(part.offset) + "+" + std::to_string(length);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(where + ": cannot open: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const auto file_size = static_cast<uint64_t>(in.tellg());
  if (part.offset > file_size || length > file_size - part.offset)
    throw std::runtime_error(where + ": the file has " + std::to_string(file_size) + " bytes");
  std::vector<std::byte> payload(length);
  in.seekg(static_cast<std::streamoff>(part.offset));
  in.read(reinterpret_cast<char*>(payload.data()), static_cast<std::streamsize>(length));
  if (!in || PartDigest(payload.data(), payload.size()) != part.digest)
    throw std::runtime_error(where + ": digest mismatch (the file is corrupt or replaced)");
  return payload;
}

// Parses and validates one node's file against its manifest line.
std::unique_ptr<RestoredNode> ReadNodeFile(const std::string& dir, const Manifest& m, int node,
                                           std::vector<std::vector<std::byte>>* reductions,
                                           std::string* why) {
  auto restored = std::make_unique<RestoredNode>();
  const std::string path = (fs::path(dir) / NodeFileName(node)).string();
  restored->path = path;
  const std::vector<std::byte> bytes = ReadWholeFile(path, why);
  if (!why->empty()) return nullptr;
  if (bytes.size() != m.sizes[node] || bytes.size() < sizeof kMagic + 8) {
    *why = path + ": " + std::to_string(bytes.size()) + " bytes, the manifest says " +
           std::to_string(m.sizes[node]) + " (truncated or replaced)";
    return nullptr;
  }
  const uint64_t digest = PartDigest(bytes.data(), bytes.size() - 8);
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (digest != stored || stored != m.digests[node]) {
    *why = path + ": checksum mismatch (the file is corrupt)";
    return nullptr;
  }
  try {
    ByteReader r(bytes.data(), bytes.size() - 8);
    char magic[8];
    r.GetRaw(magic, sizeof magic);
    if (std::memcmp(magic, kMagic, sizeof magic) != 0)
      throw std::runtime_error("not a strads checkpoint file");
    if (const auto v = r.Get<uint32_t>(); v != kFormatVersion)
      throw std::runtime_error("format version " + std::to_string(v) + ", this build reads " +
                               std::to_string(kFormatVersion));
    const auto file_node = r.Get<uint32_t>(), file_nodes = r.Get<uint32_t>();
    restored->operators = r.Get<uint64_t>();
    if (static_cast<int>(file_node) != node || static_cast<int>(file_nodes) != m.nodes ||
        restored->operators != m.operators)
      throw std::runtime_error("node, node count or operator count disagree with the manifest");
    restored->site = GetString(r);
    restored->flags = GetString(r);
    restored->rng = GetString(r);
    const auto count = r.Get<uint64_t>();
    if (count > r.remaining() / 8) throw std::runtime_error("too many reductions");
    reductions->clear();
    for (uint64_t k = 0; k < count; ++k) reductions->push_back(r.GetVector<std::byte>());
    for (auto* parts : {&restored->dds, &restored->maps}) {
      const auto n = r.Get<uint32_t>();
      if (n > r.remaining()) throw std::runtime_error("too many parts");
      for (uint32_t k = 0; k < n; ++k) {
        RestoredNode::Part part;
        part.id = r.Get<uint32_t>();
        part.name = GetString(r);
        part.size = r.Get<int64_t>();
        part.element_bytes = r.Get<uint64_t>();
        const auto stored = r.Get<uint8_t>();
        if (stored == static_cast<uint8_t>(Stored::kInline)) {
          part.holder = m.operators;
          part.offset = bytes.size() - 8 - r.remaining() + 8;  // after the length
          part.payload = r.GetVector<std::byte>();
          part.digest = r.Get<uint64_t>();
          if (PartDigest(part.payload.data(), part.payload.size()) != part.digest)
            throw std::runtime_error("part '" + part.name + "': digest mismatch");
        } else if (stored == static_cast<uint8_t>(Stored::kReference)) {
          part.holder = r.Get<uint64_t>();
          part.offset = r.Get<uint64_t>();
          const auto length = r.Get<uint64_t>();
          part.digest = r.Get<uint64_t>();
          if (std::find(m.data.begin(), m.data.end(), part.holder) == m.data.end())
            throw std::runtime_error("part '" + part.name + "' refers to checkpoint " +
                                     std::to_string(part.holder) +
                                     ", which the manifest's 'data' line does not list");
          part.payload = ReadReferencedPart(
              (CheckpointRoot(dir) / ("ckpt-" + std::to_string(part.holder)) / NodeFileName(node))
                  .string(),
              part, length);
        } else {
          throw std::runtime_error("part '" + part.name + "': unknown storage " +
                                   std::to_string(stored));
        }
        parts->push_back(std::move(part));
      }
    }
    if (r.remaining() != 0) throw std::runtime_error("bytes after the last part");
  } catch (const std::exception& e) {
    *why = path + ": " + e.what();
    return nullptr;
  }
  return restored;
}

}  // namespace

std::string LastCheckpointNote(const RuntimeOptions& options) {
  if (options.checkpoint_dir.empty()) return "";
  std::string why;
  const std::string last = ResolveRestart(options.checkpoint_dir, &why);
  return "; last complete checkpoint: " + (last.empty() ? std::string("none") : last) +
         (last.empty() ? "" : " (--restart " + options.checkpoint_dir + ")");
}

Checkpointer::Checkpointer(Runtime& rt, NodeContext& context) : rt_(rt), context_(context) {
  const RuntimeOptions& o = rt.options();
  active_ = !o.checkpoint_dir.empty() || !o.restart.empty();
  if (!active_) return;
  const std::string mode = context.ordering().mode();
  // A replay takes the recorded run's flags, --checkpoint included: it must not write (and
  // delete) checkpoints in the recorded run's directory.
  writes_ = !o.checkpoint_dir.empty() && mode != "replay";
  last_write_ = std::chrono::steady_clock::now();
  std::string why;
  if (!o.restart.empty()) {
    // Under replay: `strads replay --from-checkpoint`, whose policy follows the trace from the
    // checkpoint on (Restored).
    if ((mode != "live" && mode != "replay") || context.dual() != nullptr || o.test_mode)
      why =
          "--restart runs only live or under strads replay --from-checkpoint (not under "
          "strads record, nor in test mode)";
    std::string dir;
    if (why.empty()) dir = ResolveRestart(o.restart, &why);
    Manifest m;
    if (why.empty()) m = ReadManifest(dir, &why);
    if (why.empty() && m.nodes != rt.nodes())
      why = dir + ": a checkpoint of " + std::to_string(m.nodes) + " node(s); this run has " +
            std::to_string(rt.nodes()) + ": restart with the same node count";
    AgreeOnError(context.collectives(), why);
    restore_ = ReadNodeFile(dir, m, rt.node(), &reductions_, &why);
    if (why.empty() && restore_->flags != ResultFlags(o))
      why = restore_->path + ": taken with " + restore_->flags + ", this run has " +
            ResultFlags(o) + ": restart with the checkpointed run's flags";
    AgreeOnError(context.collectives(), why);
    if (rt.leader())
      std::fprintf(stderr, "strads: restarting from %s (after operator %llu, %s)\n", dir.c_str(),
                   static_cast<unsigned long long>(restore_->operators), restore_->site.c_str());
  }
  if (!writes_) return;
  // A DIR that cannot be made stops the run here, with the reason: left to the first
  // checkpoint, the error named a file inside it ("No such file or directory") after the
  // run's first operators, where the cause was, say, a parent without write permission.
  why.clear();
  if (rt.leader()) {
    std::error_code ec;
    fs::create_directories(o.checkpoint_dir, ec);
    if (ec || !fs::is_directory(o.checkpoint_dir, ec))
      why = "--checkpoint " + o.checkpoint_dir + ": cannot make the directory: " +
            (ec ? ec.message() : std::string("a file of that name is in the way"));
    // Checkpoints of DIR after the one this run starts from (all, for a fresh run) belong to
    // another run: a later "restart from the latest" must not find them.
    if (why.empty())
      for (const auto& entry : fs::directory_iterator(o.checkpoint_dir, ec)) {
        const int64_t n = CheckpointNumber(entry.path().filename().string());
        if (n >= 0 && (!restore_ || static_cast<uint64_t>(n) > restore_->operators))
          DeleteCheckpoint(entry.path());
      }
  }
  AgreeOnError(context.collectives(), why);
}

Checkpointer::~Checkpointer() = default;

bool Checkpointer::SkipOperator(const char* kind, const char* file, uint32_t line) {
  if (!restore_) return false;
  ++operators_;
  last_site_ = std::string(kind) + " " + file + ":" + std::to_string(line);
  if (operators_ == restore_->operators) Restore();
  return true;
}

void Checkpointer::NoteAccessBeforeRestore(const std::string& what) {
  access_noted_ = true;
  if (!rt_.leader()) return;
  std::fflush(stdout);  // after the lines the driver printed so far
  std::fprintf(stderr,
               "strads: --restart: the driver accessed %s before the restore point (%llu of the "
               "checkpoint's %llu operators skipped%s%s): the restarted run reads its own values "
               "there, not the checkpointed run's, so what the driver computes from them can "
               "differ from the first run (%s; docs/checkpoints.md, the rule for the driver: "
               "before the checkpoint, decide from reductions, rt.rng() and the driver's own "
               "variables only)\n",
               what.c_str(), static_cast<unsigned long long>(operators_),
               static_cast<unsigned long long>(restore_->operators),
               last_site_.empty() ? "" : ", the last ", last_site_.c_str(), restore_->path.c_str());
}

void Checkpointer::OperatorEnded(const char* kind, const char* file, uint32_t line) {
  if (!active_) return;
  ++operators_;
  if (KillsRankAt(rt_.node(), operators_, !rt_.options().restart.empty())) std::raise(SIGKILL);
  last_site_ = std::string(kind) + " " + file + ":" + std::to_string(line);
  const RuntimeOptions& o = rt_.options();
  if (!writes_) return;
  bool due = false;
  if (o.checkpoint_every > 0) {
    due = operators_ % static_cast<uint64_t>(o.checkpoint_every) == 0;
  } else if (o.checkpoint_seconds > 0) {
    // Node 0's clock decides, so that all nodes write the same checkpoints.
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_write_).count();
    ByteWriter w;
    w.Put<uint8_t>(elapsed >= o.checkpoint_seconds ? 1 : 0);
    due = ByteReader(context_.collectives().Broadcast(0, w.Take())).Get<uint8_t>() != 0;
  }
  if (due) Write();
}

void Checkpointer::Write() {
  const RuntimeOptions& o = rt_.options();
  const auto start = std::chrono::steady_clock::now();
  const std::string dir = CheckpointDir(o.checkpoint_dir, operators_);
  std::error_code ec;
  fs::create_directories(dir, ec);
  // A manifest left by another run's checkpoint of this number is not this one's.
  if (rt_.leader()) fs::remove(fs::path(dir) / "MANIFEST", ec);

  ByteWriter w;
  w.PutRaw(kMagic, sizeof kMagic);
  w.Put<uint32_t>(kFormatVersion);
  w.Put<uint32_t>(static_cast<uint32_t>(rt_.node()));
  w.Put<uint32_t>(static_cast<uint32_t>(rt_.nodes()));
  w.Put<uint64_t>(operators_);
  PutString(w, last_site_);
  PutString(w, ResultFlags(o));
  std::ostringstream rng;
  rng << rt_.rng();
  PutString(w, rng.str());
  w.Put<uint64_t>(reductions_.size());
  for (const auto& r : reductions_) w.PutVector(r);
  // A DDS whose version and bytes are both those of the last checkpoint is referred to where
  // it is stored; any other is written whole here.
  std::vector<uint64_t> holders;  // the older checkpoints this file refers to
  w.Put<uint32_t>(static_cast<uint32_t>(context_.dds_count()));
  if (held_.size() < context_.dds_count()) held_.resize(context_.dds_count());
  for (uint32_t d = 0; d < context_.dds_count(); ++d) {
    const DdsBase& v = context_.dds(d);
    w.Put<uint32_t>(d);
    PutString(w, v.name());
    w.Put<int64_t>(v.size());
    w.Put<uint64_t>(v.element_bytes());
    ByteWriter part;
    v.SaveOwned(part);
    const std::vector<std::byte> payload = part.Take();
    const uint64_t digest = PartDigest(payload.data(), payload.size());
    HeldPart& held = held_[d];
    if (held.valid && held.version == v.version() && held.digest == digest &&
        held.length == payload.size()) {
      w.Put<uint8_t>(static_cast<uint8_t>(Stored::kReference));
      w.Put<uint64_t>(held.holder);
      w.Put<uint64_t>(held.offset);
      w.Put<uint64_t>(held.length);
      w.Put<uint64_t>(digest);
      if (std::find(holders.begin(), holders.end(), held.holder) == holders.end())
        holders.push_back(held.holder);
      referenced_bytes_ += payload.size();
    } else {
      w.Put<uint8_t>(static_cast<uint8_t>(Stored::kInline));
      held = {true, v.version(), digest, payload.size(), operators_, w.size() + 8};
      w.PutVector(payload);
      w.Put<uint64_t>(digest);
    }
  }
  MapRegistry& maps = MapRegistry::Of(rt_);
  w.Put<uint32_t>(static_cast<uint32_t>(maps.size()));
  for (uint32_t k = 0; k < maps.size(); ++k) {
    const MapBase& m = maps.at(k);
    w.Put<uint32_t>(k);
    PutString(w, m.name());
    w.Put<int64_t>(0);
    w.Put<uint64_t>(0);
    ByteWriter part;
    m.SaveLocal(part);
    const std::vector<std::byte> payload = part.Take();
    w.Put<uint8_t>(static_cast<uint8_t>(Stored::kInline));  // maps have no version: always
    w.PutVector(payload);
    w.Put<uint64_t>(PartDigest(payload.data(), payload.size()));
  }
  std::vector<std::byte> bytes = w.Take();
  const uint64_t sum = PartDigest(bytes.data(), bytes.size());
  bytes.resize(bytes.size() + 8);
  std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);

  const std::string error = WriteFileDurably((fs::path(dir) / NodeFileName(rt_.node())).string(),
                                             bytes, rt_.leader() && KillsAt(operators_, "data"));
  // The trace (Record) is cut here: its segment up to this checkpoint is sealed before the
  // checkpoint can be complete.
  const std::string cut = context_.ordering().CheckpointWritten(operators_);
  struct Written {
    uint64_t size, digest;
  };
  ByteWriter mine;
  mine.Put(Written{bytes.size(), sum});
  PutString(mine, error.empty() ? cut : error);
  mine.PutVector(holders);
  Manifest m{rt_.nodes(), operators_, last_site_, {}, {}, {}};
  for (const auto& theirs : context_.collectives().AllGather(mine.Take())) {
    ByteReader r(theirs);
    const auto written = r.Get<Written>();
    const std::string why = GetString(r);
    if (!why.empty()) throw std::runtime_error("checkpoint: " + why);
    m.sizes.push_back(written.size);
    m.digests.push_back(written.digest);
    for (const uint64_t n : r.GetVector<uint64_t>())
      if (std::find(m.data.begin(), m.data.end(), n) == m.data.end()) m.data.push_back(n);
  }
  std::sort(m.data.begin(), m.data.end());
  last_write_ = std::chrono::steady_clock::now();
  if (!rt_.leader()) return;
  ++written_;
  const uint64_t before = written_bytes_;
  for (const uint64_t size : m.sizes) written_bytes_ += size;
  if (written_ == 1) first_bytes_ = written_bytes_ - before;
  const std::string text = ManifestText(m);
  std::vector<std::byte> manifest(text.size());
  std::memcpy(manifest.data(), text.data(), text.size());
  if (const std::string why = WriteFileDurably((fs::path(dir) / "MANIFEST").string(), manifest,
                                               KillsAt(operators_, "manifest"));
      !why.empty())
    throw std::runtime_error("checkpoint: " + why);
  const std::vector<uint64_t> kept = DeleteBeyondKeep();
  context_.ordering().CheckpointsKept(fs::absolute(o.checkpoint_dir).string(), kept);
  written_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<uint64_t> Checkpointer::DeleteBeyondKeep() {
  const RuntimeOptions& o = rt_.options();
  std::vector<int64_t> complete, incomplete;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(o.checkpoint_dir, ec)) {
    const int64_t n = CheckpointNumber(entry.path().filename().string());
    if (n < 0) continue;
    (fs::exists(entry.path() / "MANIFEST", ec) ? complete : incomplete).push_back(n);
  }
  std::sort(complete.begin(), complete.end());
  const size_t keep = static_cast<size_t>(std::max(1, o.checkpoint_keep));
  const int64_t oldest_kept = complete.size() > keep ? complete[complete.size() - keep]
                                                     : (complete.empty() ? 0 : complete[0]);
  std::vector<uint64_t> kept;
  for (const int64_t n : complete)
    if (n >= oldest_kept) kept.push_back(static_cast<uint64_t>(n));
  // The older checkpoints whose node files hold parts that a kept one refers to stay, as data
  // only: without their MANIFEST they are no restart point. A kept manifest that cannot be read
  // keeps everything.
  std::vector<uint64_t> needed;
  for (const uint64_t n : kept) {
    std::string why;
    const Manifest m = ReadManifest(CheckpointDir(o.checkpoint_dir, n), &why);
    if (!why.empty()) return kept;
    needed.insert(needed.end(), m.data.begin(), m.data.end());
  }
  std::vector<int64_t> older;
  for (const auto* list : {&complete, &incomplete})  // incomplete: left by a killed write
    for (const int64_t n : *list)
      if (n < oldest_kept) older.push_back(n);
  // Every older one loses its MANIFEST before any directory goes, so that no complete
  // checkpoint is ever left referring to a deleted one.
  for (const int64_t n : older)
    fs::remove(fs::path(CheckpointDir(o.checkpoint_dir, static_cast<uint64_t>(n))) / "MANIFEST",
               ec);
  for (const int64_t n : older)
    if (std::find(needed.begin(), needed.end(), static_cast<uint64_t>(n)) == needed.end())
      DeleteCheckpoint(CheckpointDir(o.checkpoint_dir, static_cast<uint64_t>(n)));
  return kept;
}

void Checkpointer::Restore() {
  const RestoredNode& r = *restore_;
  auto refuse = [&](const std::string& what) {
    throw CollectiveUsageError("--restart: " + r.path + ": " + what +
                               " (the restarted program, its input or flags differ from the "
                               "checkpointed run's)");
  };
  if (last_site_ != r.site)
    refuse("this run's operator " + std::to_string(operators_) + " is " + last_site_ +
           ", the checkpoint was taken after " + r.site);
  if (replayed_ != reductions_.size())
    refuse("this run made " + std::to_string(replayed_) + " reductions before the checkpoint, " +
           "the checkpointed run " + std::to_string(reductions_.size()));
  if (r.dds.size() != context_.dds_count())
    refuse("the checkpoint holds " + std::to_string(r.dds.size()) + " DDS, this run has " +
           std::to_string(context_.dds_count()) + " at that point");
  MapRegistry& maps = MapRegistry::Of(rt_);
  if (r.maps.size() != maps.size())
    refuse("the checkpoint holds " + std::to_string(r.maps.size()) + " maps, this run has " +
           std::to_string(maps.size()) + " at that point");
  for (const auto& part : r.dds) {
    if (part.id >= context_.dds_count()) refuse("DDS id " + std::to_string(part.id) + " unknown");
    DdsBase& v = context_.dds(part.id);
    if (v.name() != part.name || v.size() != part.size || v.element_bytes() != part.element_bytes)
      refuse("DDS " + std::to_string(part.id) + " is '" + part.name + "' of " +
             std::to_string(part.size) + " elements of " + std::to_string(part.element_bytes) +
             " bytes in the checkpoint, '" + v.name() + "' of " + std::to_string(v.size()) +
             " elements of " + std::to_string(v.element_bytes()) + " bytes in this run");
    ByteReader in(part.payload);
    v.RestoreOwned(in);
    if (in.remaining() != 0) refuse("DDS '" + part.name + "': more bytes than its owned part");
    // Unchanged until the next checkpoint, it is referred to where the checkpoint has it.
    if (held_.size() <= part.id) held_.resize(part.id + 1);
    held_[part.id] = {true,        v.version(), part.digest, part.payload.size(),
                      part.holder, part.offset};
  }
  for (const auto& part : r.maps) {
    if (part.id >= maps.size()) refuse("map id " + std::to_string(part.id) + " unknown");
    MapBase& m = maps.at(part.id);
    if (m.name() != part.name)
      refuse("map " + std::to_string(part.id) + " is '" + part.name + "' in the checkpoint, '" +
             m.name() + "' in this run");
    ByteReader in(part.payload);
    m.RestoreLocal(in);
  }
  std::istringstream rng(r.rng);
  rng >> rt_.rng();
  // SyncFor parameters are whole on every node after a BSP SyncFor; only the owned parts were
  // restored, so make the rest current as the checkpointed run had it.
  ReplicateDeclaredParameters(rt_);
  restore_.reset();
  context_.ordering().Restored(operators_);
}

bool Checkpointer::ReplayedReduction(void* out, size_t bytes) {
  if (!restore_) return false;
  if (replayed_ >= reductions_.size() || reductions_[replayed_].size() != bytes)
    throw CollectiveUsageError("--restart: " + restore_->path + ": reduction " +
                               std::to_string(replayed_) +
                               " before the checkpoint differs from the checkpointed run's (the "
                               "program, its input or flags differ)");
  std::memcpy(out, reductions_[replayed_].data(), bytes);
  ++replayed_;
  return true;
}

void Checkpointer::NoteReduction(const void* result, size_t bytes) {
  if (!writes_) return;
  const auto* p = static_cast<const std::byte*>(result);
  reductions_.emplace_back(p, p + bytes);
}

void Checkpointer::DriverReturned() {
  if (const char* stats = std::getenv("STRADS_CHECKPOINT_STATS");
      stats != nullptr && *stats != '\0' && rt_.leader() && written_ > 0)
    std::fprintf(stderr,
                 "strads: checkpoints: %llu written, %.3f ms and %llu bytes each (the first %llu "
                 "bytes, the others %llu; node 0 referred to %llu unchanged bytes each)\n",
                 static_cast<unsigned long long>(written_), 1e3 * written_seconds_ / written_,
                 static_cast<unsigned long long>(written_bytes_ / written_),
                 static_cast<unsigned long long>(first_bytes_),
                 static_cast<unsigned long long>(
                     written_ > 1 ? (written_bytes_ - first_bytes_) / (written_ - 1) : 0),
                 static_cast<unsigned long long>(referenced_bytes_ / written_));
  if (restore_)
    throw CollectiveUsageError("--restart: " + restore_->path + ": the driver returned after " +
                               std::to_string(operators_) + " operators, before the checkpoint's " +
                               std::to_string(restore_->operators) +
                               " (the program, its input or flags differ)");
}

}  // namespace strads::internal
