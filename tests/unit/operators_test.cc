// Pretraining operators on dvectors (operators.h): partitioning, driver access, MakeDVector,
// ReadFromFile, Reduce / Sum / Min / Max, Map, Transform, Checksum. Every result must be the
// same for every number of nodes. Drivers run on several threads: they only record into
// per-node slots, and the checks run after RunNodes returns.
#include "strads/operators.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stderr_capture.h"
#include "strads/dvector.h"
#include "strads/fnv1a.h"
#include "strads/internal/even_split.h"
#include "strads/runtime.h"
#include "test_nodes.h"

namespace {

using strads::dvector;
using strads::Runtime;
using strads::testing::RunNodes;
using strads::testing::StderrCapture;

constexpr int kNodeCounts[] = {1, 2, 4};

// One dvector as seen by every node: its owned range and the elements in it.
template <class T>
struct Pieces {
  explicit Pieces(int p) : begin(p, -1), end(p, -1), part(p) {}
  void Record(dvector<T>& v, int node) {
    begin[node] = v.owned_begin();
    end[node] = v.owned_end();
    part[node].assign(v.local().begin(), v.local().end());
  }
  // The owned ranges are [0, n) cut in node order.
  bool Contiguous(int64_t n) const {
    if (begin.empty() || begin.front() != 0 || end.back() != n) return false;
    for (size_t p = 0; p < begin.size(); ++p) {
      if (end[p] < begin[p] || static_cast<int64_t>(part[p].size()) != end[p] - begin[p])
        return false;
      if (p + 1 < begin.size() && end[p] != begin[p + 1]) return false;
    }
    return true;
  }
  std::vector<T> Whole() const {
    std::vector<T> all;
    for (const auto& x : part) all.insert(all.end(), x.begin(), x.end());
    return all;
  }
  std::vector<int64_t> begin, end;
  std::vector<std::vector<T>> part;
};

uint64_t Bits(double x) { return std::bit_cast<uint64_t>(x); }

template <class T>
uint64_t SerialChecksum(const std::vector<T>& v) {
  strads::Fnv1a h;
  h.Update(v.data(), v.size() * sizeof(T));
  return h.digest();
}

// The documented order of Reduce: chunks of kReduceChunk folded left to right from the
// identity, then the chunk results left to right from the identity.
template <class R, class T, class MapFn, class CombineFn>
R SerialChunkedFold(const std::vector<T>& v, R identity, MapFn map, CombineFn combine) {
  R total = identity;
  const auto n = static_cast<int64_t>(v.size());
  for (int64_t c = 0; c * strads::kReduceChunk < n; ++c) {
    R acc = identity;
    for (int64_t i = c * strads::kReduceChunk; i < std::min(n, (c + 1) * strads::kReduceChunk); ++i)
      acc = combine(acc, map(v[i]));
    total = combine(total, acc);
  }
  return total;
}

// Values whose sum depends on the association: 1e16 + 1 == 1e16 in double.
double Tricky(int64_t i) {
  switch ((i * 7 + i / 5) % 6) {
    case 0:
      return 1e16;
    case 1:
      return 1.0;
    case 2:
      return -1e16;
    case 3:
      return 0.25 * static_cast<double>(i % 11);
    case 4:
      return 3.0;
    default:
      return -1.5e15 + static_cast<double>(i);
  }
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("strads_operators_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream out(path, std::ios::binary);
  out << text;
  return path;
}

struct Rec {
  int64_t a;
  double b;
  friend bool operator==(const Rec&, const Rec&) = default;
};

// "integer number", surrounding blanks allowed; anything else throws.
Rec ParseRec(std::string_view line) {
  const std::string s(line);
  char* end = nullptr;
  const long long a = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str()) throw std::runtime_error("expected an integer");
  char* end2 = nullptr;
  const double b = std::strtod(end, &end2);
  if (end2 == end) throw std::runtime_error("expected a number after the integer");
  for (const char* p = end2; *p != '\0'; ++p)
    if (*p != ' ' && *p != '\t' && *p != '\r') throw std::runtime_error("trailing characters");
  return {a, b};
}

// What ReadFromFile must give: the data lines of `text` in order.
std::vector<Rec> SerialParse(const std::string& text) {
  std::vector<Rec> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#' || line[start] == '%') continue;
    out.push_back(ParseRec(line));
  }
  return out;
}

}  // namespace

TEST_CASE("EvenSplit: ranges cover 0..n in order, sizes differ by at most one, part_of agrees") {
  for (int64_t n : {0, 1, 2, 3, 5, 7, 8, 100, 101, 4097}) {
    for (int64_t parts : {1, 2, 3, 4, 7, 16}) {
      const strads::EvenSplit s(n, parts);
      CHECK(s.begin(0) == 0);
      CHECK(s.end(parts - 1) == n);
      int64_t lo = n, hi = 0;
      for (int64_t p = 0; p < parts; ++p) {
        const int64_t size = s.end(p) - s.begin(p);
        lo = std::min(lo, size);
        hi = std::max(hi, size);
        for (int64_t i = s.begin(p); i < s.end(p); ++i) CHECK(s.part_of(i) == p);
      }
      CHECK(hi - lo <= 1);
    }
  }
}

TEST_CASE("dvector partitioning: owned ranges cover 0..n exactly and owner(i) agrees") {
  for (int p : kNodeCounts) {
    for (int64_t n : {0, 1, 3, 4, 5, 37, 1000}) {
      CAPTURE(p);
      CAPTURE(n);
      Pieces<int64_t> pieces(p);
      std::vector<std::vector<int>> owners(p);
      const int rc = RunNodes(p, 1, [&](Runtime& rt) {
        auto& v = strads::MakeDVector<int64_t>(rt, n, [](int64_t i) { return i; });
        pieces.Record(v, rt.node());
        for (int64_t i = 0; i < n; ++i) owners[rt.node()].push_back(v.owner(i));
      });
      REQUIRE(rc == 0);
      CHECK(pieces.Contiguous(n));
      int64_t lo = n, hi = 0;
      for (int q = 0; q < p; ++q) {
        lo = std::min(lo, pieces.end[q] - pieces.begin[q]);
        hi = std::max(hi, pieces.end[q] - pieces.begin[q]);
        CHECK(owners[q] == owners[0]);  // every node agrees on every owner
        for (int64_t i = pieces.begin[q]; i < pieces.end[q]; ++i) CHECK(owners[0][i] == q);
      }
      CHECK(hi - lo <= 1);
      std::vector<int64_t> expect(n);
      for (int64_t i = 0; i < n; ++i) expect[i] = i;
      CHECK(pieces.Whole() == expect);  // MakeDVector: init(i) on the owner of i
    }
  }
}

TEST_CASE("driver-mode element access: every node reads and writes every element, owners keep it") {
  constexpr int64_t n = 37;
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<std::vector<int64_t>> reads(p), reads_after(p);
    Pieces<int64_t> pieces(p);
    std::vector<uint64_t> sums(p);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& v = strads::MakeDVector<int64_t>(rt, n, [](int64_t i) { return 10 * i; });
      const auto& cv = v;
      for (int64_t i = 0; i < n; ++i) reads[rt.node()].push_back(cv[i]);
      // Writes that depend on other elements owned elsewhere: v[i] = v[i] + v[n - 1 - i] + 1.
      for (int64_t i = 0; i < n; ++i) v[i] = v[i] + cv[n - 1 - i] + 1;
      for (int64_t i = 0; i < n; ++i) reads_after[rt.node()].push_back(cv[i]);
      pieces.Record(v, rt.node());
      sums[rt.node()] = strads::Checksum(rt, {&v});
    });
    REQUIRE(rc == 0);
    std::vector<int64_t> serial(n);
    for (int64_t i = 0; i < n; ++i) serial[i] = 10 * i;
    for (int q = 0; q < p; ++q) CHECK(reads[q] == serial);
    for (int64_t i = 0; i < n; ++i) serial[i] = serial[i] + serial[n - 1 - i] + 1;
    for (int q = 0; q < p; ++q) {
      CHECK(reads_after[q] == serial);
      CHECK(sums[q] == SerialChecksum(serial));
    }
    CHECK(pieces.Whole() == serial);  // the owners' own copies were written
  }
}

TEST_CASE("ReadFromFile: the same dvector for every node count, whatever the file's shape") {
  std::vector<std::string> texts;
  std::string big;
  for (int i = 0; i < 200; ++i) {
    if (i % 17 == 3) big += "# comment " + std::to_string(i) + "\n";
    if (i % 23 == 5) big += "\n   \n";
    if (i % 29 == 7) big += "% matrix-market comment\n";
    big += std::to_string(i * 3 - 100) + " " + std::to_string(i * 0.5) + "\n";
  }
  texts.push_back(big);                                   // final newline
  texts.push_back(big.substr(0, big.size() - 1));         // no final newline
  texts.push_back("# only a comment\n\n7 1.5");           // short, no final newline
  texts.push_back("1 2\n");                               // one line, fewer bytes than nodes
  texts.push_back("5 5");                                 // no newline at all
  texts.push_back("\n\n\n#x\n  3 4  \r\n\n#y\n4 5\n\n");  // blanks around, CRLF, trailing blank
  texts.push_back("1 1\n2 2\n3 3\n4 4\n5 5\n6 6\n7 7\n8 8\n9 9\n");
  // Lines longer than the reader's 4 KiB scan buffer, so that a node's range often starts
  // and ends far from any newline.
  std::string wide;
  for (int i = 0; i < 12; ++i)
    wide += std::to_string(i) + " " + std::to_string(i * 1.5) + std::string(1000 + 1700 * i, ' ') +
            (i % 4 == 1 ? "\n#" + std::string(6000, 'c') : "") + "\n";
  texts.push_back(wide);
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::string path = WriteFile("read" + std::to_string(t), texts[t]);
    const std::vector<Rec> expect = SerialParse(texts[t]);
    REQUIRE(!expect.empty());
    for (int p : {1, 2, 3, 4, 7}) {
      CAPTURE(t);
      CAPTURE(p);
      Pieces<Rec> pieces(p);
      std::vector<int64_t> sizes(p);
      const int rc = RunNodes(p, 1, [&](Runtime& rt) {
        auto& v = strads::ReadFromFile<Rec>(rt, path, ParseRec);
        sizes[rt.node()] = v.size();
        pieces.Record(v, rt.node());
      });
      REQUIRE(rc == 0);
      for (int q = 0; q < p; ++q) CHECK(sizes[q] == static_cast<int64_t>(expect.size()));
      CHECK(pieces.Contiguous(static_cast<int64_t>(expect.size())));
      CHECK(pieces.Whole() == expect);
    }
    std::filesystem::remove(path);
  }
}

TEST_CASE("ReadFromFile: a malformed line exits with code 2 naming the file and the line") {
  struct Case {
    std::string text;
    int line;
  };
  std::string lines;
  for (int i = 1; i <= 60; ++i) lines += (i % 10 == 0 ? "# c\n" : std::to_string(i) + " 1\n");
  std::vector<Case> cases = {
      {"1 2\nbad\n3 4\n", 2},
      {"x 1\n" + lines, 1},
      {lines + "oops 1\n", 61},
      {lines + "1 1\n2 zz", 62},  // last line, no final newline
      {lines.substr(0, lines.find('\n', 200) + 1) + "\n#c\n1 1 1\n" + lines,
       0},                                            // line computed below
      {lines + "1 bad\n" + lines + "2 worse\n", 61},  // the lowest bad line is reported
  };
  {
    // Physical line of the "1 1 1" line of case 4: lines before it, counted.
    const std::string& t = cases[4].text;
    cases[4].line =
        static_cast<int>(std::count(t.begin(), t.begin() + t.find("#c\n1 1 1") + 3, '\n')) + 1;
  }
  for (size_t c = 0; c < cases.size(); ++c) {
    const std::string path = WriteFile("bad" + std::to_string(c), cases[c].text);
    for (int p : kNodeCounts) {
      CAPTURE(c);
      CAPTURE(p);
      int rc = -1;
      std::string err;
      {
        StderrCapture capture(TempPath("stderr"));
        rc = RunNodes(p, 1, [&](Runtime& rt) { strads::ReadFromFile<Rec>(rt, path, ParseRec); });
        err = capture.text();
      }
      CHECK(rc == 2);
      const std::string where = path + ":" + std::to_string(cases[c].line) + ":";
      CAPTURE(err);
      CHECK(err.find(where) != std::string::npos);
      // One report, not one per node.
      CHECK(err.find(where) == err.rfind(where));
    }
    std::filesystem::remove(path);
  }
  std::filesystem::remove(TempPath("stderr"));
}

TEST_CASE("ReadFromFile: a missing file or one without data lines exits with code 2") {
  const std::string empty = WriteFile("nodata", "# nothing\n\n");
  for (int p : kNodeCounts) {
    CAPTURE(p);
    StderrCapture capture(TempPath("stderr2"));
    const int rc1 = RunNodes(p, 1, [&](Runtime& rt) {
      strads::ReadFromFile<Rec>(rt, TempPath("does_not_exist"), ParseRec);
    });
    const int rc2 =
        RunNodes(p, 1, [&](Runtime& rt) { strads::ReadFromFile<Rec>(rt, empty, ParseRec); });
    // A directory opens as a stream: it must be refused, not read.
    const std::string dir = std::filesystem::temp_directory_path().string();
    const int rc3 =
        RunNodes(p, 1, [&](Runtime& rt) { strads::ReadFromFile<Rec>(rt, dir, ParseRec); });
    const std::string err = capture.text();
    CHECK(rc1 == 2);
    CHECK(rc2 == 2);
    CHECK(rc3 == 2);
    CAPTURE(err);
    CHECK(err.find("does_not_exist") != std::string::npos);
    CHECK(err.find(empty + ": no data lines") != std::string::npos);
    CHECK(err.find(dir + ": not a regular file (a directory)") != std::string::npos);
  }
  std::filesystem::remove(empty);
  std::filesystem::remove(TempPath("stderr2"));
}

TEST_CASE("Copy and Assign: the same elements on every node count; Assign refuses other sizes") {
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<uint64_t> source(p), copied(p), assigned(p), after_change(p);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& v = strads::MakeDVector<double>(rt, 5000, Tricky, "v");
      auto& c = strads::Copy(rt, std::as_const(v), "c");
      auto& a = strads::MakeDVector<double>(
          rt, 5000, [](int64_t) { return 0.0; }, "a");
      strads::Assign(a, v);
      const int me = rt.node();
      source[me] = strads::Checksum(rt, {&v});
      copied[me] = strads::Checksum(rt, {&c});
      assigned[me] = strads::Checksum(rt, {&a});
      strads::Transform(c, [](double& x) { x += 1; });  // a copy, not a view
      after_change[me] = strads::Checksum(rt, {&v});
    });
    REQUIRE(rc == 0);
    for (int q = 0; q < p; ++q) {
      CHECK(copied[q] == source[0]);
      CHECK(assigned[q] == source[0]);
      CHECK(after_change[q] == source[0]);
    }
  }
  const int rc = RunNodes(2, 1, [&](Runtime& rt) {
    const auto& v = strads::MakeDVector<double>(rt, 10, Tricky, "v");
    auto& w = strads::MakeDVector<double>(rt, 11, Tricky, "w");
    strads::Assign(w, v);
  });
  CHECK(rc == 2);
}

TEST_CASE("Reduce / Sum / Min / Max: identical for every node count, equal to the chunked fold") {
  // Chunks straddle owners for 2 and 4 nodes; the last chunk is partial.
  for (int64_t n : {int64_t{1}, int64_t{5000}, 3 * strads::kReduceChunk + 1234}) {
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i) values[i] = Tricky(i);
    auto id = [](double x) { return x; };
    auto plus = [](double a, double b) { return a + b; };
    const double expect_sum = SerialChunkedFold(values, 0.0, id, plus);
    if (n > strads::kReduceChunk) {
      // The data do detect a wrong order: a plain left fold gives another value.
      double plain = 0;
      for (double x : values) plain += x;
      REQUIRE(Bits(plain) != Bits(expect_sum));
      // ... and so does folding each node's owned range, then the node results.
      for (int64_t parts : {2, 4}) {
        const strads::EvenSplit split(n, parts);
        double by_owner = 0;
        for (int64_t q = 0; q < parts; ++q) {
          double acc = 0;
          for (int64_t i = split.begin(q); i < split.end(q); ++i) acc += values[i];
          by_owner += acc;
        }
        REQUIRE(Bits(by_owner) != Bits(expect_sum));
      }
    }
    // An order-sensitive integer fold, with a map.
    auto mix = [](uint64_t a, uint64_t b) { return a * 1000003u + b; };
    auto key = [](double x) { return static_cast<uint64_t>(static_cast<int64_t>(x) & 0xffff); };
    const uint64_t expect_mix = SerialChunkedFold(values, uint64_t{7}, key, mix);
    double expect_min = values[0], expect_max = values[0];
    for (double x : values)
      expect_min = std::min(expect_min, x), expect_max = std::max(expect_max, x);

    for (int p : kNodeCounts) {
      CAPTURE(n);
      CAPTURE(p);
      std::vector<double> sums(p), reduced(p), mins(p), maxs(p);
      std::vector<uint64_t> mixes(p);
      std::vector<int64_t> int_max(p);
      const int rc = RunNodes(p, 1, [&](Runtime& rt) {
        // Const, as input data is captured: the reductions take it so.
        const auto& v = strads::MakeDVector<double>(rt, n, Tricky);
        const int me = rt.node();
        sums[me] = strads::Sum(rt, v, id);
        reduced[me] = strads::Reduce(rt, v, 0.0, id, plus);
        mixes[me] = strads::Reduce(rt, v, uint64_t{7}, key, mix);
        mins[me] = strads::Min(rt, v, id);
        maxs[me] = strads::Max(rt, v, id);
        int_max[me] = strads::Max(rt, v, [](double x) { return static_cast<int64_t>(x) % 1000; });
      });
      REQUIRE(rc == 0);
      int64_t expect_int_max = std::numeric_limits<int64_t>::lowest();
      for (double x : values)
        expect_int_max = std::max(expect_int_max, static_cast<int64_t>(x) % 1000);
      for (int q = 0; q < p; ++q) {
        CHECK(Bits(sums[q]) == Bits(expect_sum));
        CHECK(Bits(reduced[q]) == Bits(expect_sum));
        CHECK(mixes[q] == expect_mix);
        CHECK(Bits(mins[q]) == Bits(expect_min));
        CHECK(Bits(maxs[q]) == Bits(expect_max));
        CHECK(int_max[q] == expect_int_max);
      }
    }
  }
}

TEST_CASE("Min / Max of infinities and of an empty dvector") {
  const double inf = std::numeric_limits<double>::infinity();
  for (int p : kNodeCounts) {
    CAPTURE(p);
    std::vector<double> maxs(p), mins(p), empty_sum(p);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& lows = strads::MakeDVector<double>(rt, 9, [inf](int64_t) { return -inf; });
      auto& highs = strads::MakeDVector<double>(rt, 9, [inf](int64_t) { return inf; });
      auto& none = strads::MakeDVector<double>(rt, 0, [](int64_t) { return 1.0; });
      auto id = [](double x) { return x; };
      maxs[rt.node()] = strads::Max(rt, lows, id);
      mins[rt.node()] = strads::Min(rt, highs, id);
      empty_sum[rt.node()] = strads::Sum(rt, none, id);
    });
    REQUIRE(rc == 0);
    for (int q = 0; q < p; ++q) {
      CHECK(maxs[q] == -inf);
      CHECK(mins[q] == inf);
      CHECK(empty_sum[q] == 0.0);
    }
    StderrCapture capture(TempPath("stderr3"));
    const int rc2 = RunNodes(p, 1, [&](Runtime& rt) {
      auto& none = strads::MakeDVector<double>(rt, 0, [](int64_t) { return 1.0; });
      strads::Max(rt, none, [](double x) { return x; });
    });
    CHECK(rc2 == 2);
  }
  std::filesystem::remove(TempPath("stderr3"));
}

TEST_CASE("Map, Transform and Checksum: identical for every node count") {
  constexpr int64_t n = 1001;
  std::vector<double> base(n);
  for (int64_t i = 0; i < n; ++i) base[i] = Tricky(i);
  std::vector<Rec> mapped(n);
  for (int64_t i = 0; i < n; ++i) mapped[i] = {static_cast<int64_t>(base[i]) / 3, base[i] * 0.5};
  std::vector<double> transformed = base;
  for (double& x : transformed) x = x * 3 + 1;
  strads::Fnv1a both;
  both.Update(transformed.data(), n * sizeof(double));
  both.Update(mapped.data(), n * sizeof(Rec));

  for (int p : kNodeCounts) {
    CAPTURE(p);
    Pieces<Rec> map_pieces(p);
    Pieces<double> transform_pieces(p);
    std::vector<uint64_t> sum_mapped(p), sum_both(p);
    std::vector<uint32_t> ids(p);
    const int rc = RunNodes(p, 1, [&](Runtime& rt) {
      auto& v = strads::MakeDVector<double>(rt, n, Tricky);
      auto& m = strads::Map<Rec>(rt, v, [](const double& x) {
        return Rec{static_cast<int64_t>(x) / 3, x * 0.5};
      });
      strads::Transform(v, [](double& x) { x = x * 3 + 1; });
      const int me = rt.node();
      map_pieces.Record(m, me);
      transform_pieces.Record(v, me);
      ids[me] = m.id();
      sum_mapped[me] = strads::Checksum(rt, {&m});
      sum_both[me] = strads::Checksum(rt, {&v, &m});
    });
    REQUIRE(rc == 0);
    CHECK(map_pieces.Contiguous(n));
    CHECK(map_pieces.Whole() == mapped);
    CHECK(transform_pieces.Whole() == transformed);
    for (int q = 0; q < p; ++q) {
      CHECK(ids[q] == 1);
      CHECK(sum_mapped[q] == SerialChecksum(mapped));
      CHECK(sum_both[q] == both.digest());
    }
  }
}

// Tables that each fit in memory but not together: the size check counts what the node already
// holds. Before, only the new table was compared with the machine's memory, so a width flag that
// made two 20 GB tables on a 25 GB machine passed it and the OOM killer ended the run. The first
// table is made without initialising its elements (its pages stay unresident), the second only
// checked, so that the test allocates nothing either way.
TEST_CASE("CheckFitsInMemory counts the DDSs the node already holds") {
  const double memory =
      static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  const auto part = static_cast<int64_t>(memory * 0.6);
  std::string error;
  const int rc = RunNodes(1, 1, [&](Runtime& rt) {
    strads::internal::CheckFitsInMemory(rt, "dvector", "first", part, "elements",
                                        1);  // alone, it fits
    strads::internal::CreateDds<dvector<char>>(rt, "first", part);
    try {
      strads::internal::CheckFitsInMemory(rt, "dvector", "second", part, "elements", 1);
    } catch (const strads::UsageError& e) {
      error = e.what();
    }
  });
  CHECK(rc == 0);
  CHECK(error.find("dvector 'second' of " + std::to_string(part) + " elements of 1 bytes") == 0);
  CHECK(error.find("beside the") != std::string::npos);
  CHECK(error.find("over this machine's memory") != std::string::npos);
}
