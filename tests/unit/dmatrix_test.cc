// dmatrix<T>: rows of a width set at run time, each row one DDS element. In AsyncFor bodies it
// equals the serial run in the reported order for any nodes and threads; a dmatrix of width W
// holds the bytes a dvector<std::array<T, W>> would under every engine (merges included);
// checkpoints, access checking, the memory report and driver access see rows.

#include <doctest/doctest.h>

#include <array>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "memory_report.h"
#include "strads/exit_code.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace {

constexpr int64_t kEdges = 6000, kRows = 300;
constexpr int kCalls = 3;

struct Edge {
  int32_t a, b;
};

Edge EdgeAt(int64_t i) {
  uint64_t x = static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ULL;
  return {static_cast<int32_t>(x % kRows), static_cast<int32_t>((x >> 32) % kRows)};
}

// A non-commutative update of two rows: the result depends on the order of conflicting bodies.
void Update(std::span<double> a, std::span<double> b, int64_t i) {
  for (size_t c = 0; c < a.size(); ++c) {
    const double t = a[c];
    a[c] = 0.5 * a[c] + 0.25 * b[c] + static_cast<double>((i + static_cast<int64_t>(c)) % 7);
    b[c] = 0.75 * b[c] - 0.125 * t;
  }
}

double Start(int64_t row, size_t c, bool u) {
  return u ? 1.0 + static_cast<double>(row) + 0.5 * static_cast<double>(c)
           : 2.0 - static_cast<double>(row) * 0.25 - static_cast<double>(c);
}

struct Outcome {
  uint64_t checksum = 0;
  std::vector<int64_t> order;
  std::vector<double> x;  // U's rows, then V's
};

// The loop on dmatrix<double> rows of `width` (a run-time value).
Outcome RunMatrix(int nodes, int threads, size_t width, std::vector<std::string> extra = {}) {
  Outcome out;
  std::mutex mu;
  const int rc = strads::testing::RunNodes(
      nodes, threads,
      [&](strads::Runtime& rt) {
        auto init = [width](bool u) {
          return [width, u](int64_t row, std::span<double> r) {
            for (size_t c = 0; c < width; ++c) r[c] = Start(row, c, u);
          };
        };
        auto& U =
            strads::MakeDMatrix<double>(rt, kRows, static_cast<int64_t>(width), init(true), "U");
        auto& V =
            strads::MakeDMatrix<double>(rt, kRows, static_cast<int64_t>(width), init(false), "V");
        for (int call = 0; call < kCalls; ++call)
          strads::AsyncFor(0, kEdges - 1, [&U, &V](int64_t i) {
            const Edge e = EdgeAt(i);
            Update(U[e.a], V[e.b], i);
          });
        const uint64_t sum = strads::Checksum(rt, {&U, &V});
        std::vector<double> x;
        for (auto* m : {&U, &V})
          for (int64_t r = 0; r < kRows; ++r) {
            const auto row = (*m)[r];  // driver access: the owner's row on every node
            x.insert(x.end(), row.begin(), row.end());
          }
        if (rt.leader()) {
          std::lock_guard<std::mutex> lock(mu);
          out.checksum = sum;
          out.order = rt.last_serial_order();
          out.x = x;
        }
      },
      extra);
  REQUIRE(rc == 0);
  return out;
}

// The same loop on dvector<std::array<double, 4>>: the width fixed at compile time.
uint64_t RunArrays(int nodes, int threads, std::vector<std::string> extra = {}) {
  using Row = std::array<double, 4>;
  uint64_t checksum = 0;
  const int rc = strads::testing::RunNodes(
      nodes, threads,
      [&](strads::Runtime& rt) {
        auto init = [](bool u) {
          return [u](int64_t row) {
            Row r;
            for (size_t c = 0; c < r.size(); ++c) r[c] = Start(row, c, u);
            return r;
          };
        };
        auto& U = strads::MakeDVector<Row>(rt, kRows, init(true), "U");
        auto& V = strads::MakeDVector<Row>(rt, kRows, init(false), "V");
        for (int call = 0; call < kCalls; ++call)
          strads::AsyncFor(0, kEdges - 1, [&U, &V](int64_t i) {
            const Edge e = EdgeAt(i);
            Update(U[e.a], V[e.b], i);
          });
        const uint64_t sum = strads::Checksum(rt, {&U, &V});
        if (rt.leader()) checksum = sum;
      },
      extra);
  REQUIRE(rc == 0);
  return checksum;
}

std::vector<double> SerialInOrder(const std::vector<int64_t>& order, size_t width) {
  std::vector<double> u(kRows * width), v(kRows * width);
  for (int64_t r = 0; r < kRows; ++r)
    for (size_t c = 0; c < width; ++c)
      u[r * width + c] = Start(r, c, true), v[r * width + c] = Start(r, c, false);
  for (int call = 0; call < kCalls; ++call)
    for (int64_t i : order) {
      const Edge e = EdgeAt(i);
      Update(std::span(u).subspan(e.a * width, width), std::span(v).subspan(e.b * width, width), i);
    }
  u.insert(u.end(), v.begin(), v.end());
  return u;
}

}  // namespace

TEST_CASE(
    "dmatrix rows in AsyncFor equal the serial run in the reported order, any nodes/threads") {
  const size_t width = 5;  // a run-time value: nothing below is sized at compile time
  const Outcome base = RunMatrix(1, 1, width);
  REQUIRE(base.order.size() == kEdges);
  CHECK(base.x == SerialInOrder(base.order, width));
  // The natural order gives another result: the comparison above can fail.
  std::vector<int64_t> natural(kEdges);
  for (int64_t i = 0; i < kEdges; ++i) natural[i] = i;
  CHECK(base.x != SerialInOrder(natural, width));
  for (auto [nodes, threads] : {std::pair{2, 1}, {4, 1}, {2, 2}, {4, 2}}) {
    CAPTURE(nodes);
    CAPTURE(threads);
    const Outcome o = RunMatrix(nodes, threads, width);
    CHECK(o.order == base.order);
    CHECK(o.checksum == base.checksum);
    CHECK(o.x == base.x);
  }
}

TEST_CASE("a dmatrix of width 4 holds the bytes of a dvector<std::array<double, 4>>") {
  const uint64_t schedule = RunArrays(2, 2);
  CHECK(RunMatrix(2, 2, 4).checksum == schedule);
  CHECK(RunMatrix(1, 1, 4).checksum == schedule);
  // The lock engine on 2 nodes of 1 thread: each node runs its share in index order and the
  // owner merges its own change, then the other node's (the one order there is): deterministic.
  // The rows merge column by column as the arrays do.
  const std::vector<std::string> locks = {"--async-engine", "locks"};
  const uint64_t locked = RunArrays(2, 1, locks);
  CHECK(RunMatrix(2, 1, 4, locks).checksum == locked);
  // Merged changes are averages: not the serial result (so the comparison above covers merges).
  CHECK(locked != schedule);
  // Another width gives other bytes (the comparison can fail).
  CHECK(RunMatrix(2, 2, 3).checksum != schedule);
}

TEST_CASE("dmatrix MergeChanges merges each column as Delta<T> does") {
  strads::dmatrix<double> m(0, "m", 2, 3, 0, 1);
  const std::array<double, 3> start = {1.0, 2.0, 3.0};
  const std::array<std::array<double, 3>, 2> afters = {{{2.0, 2.0, 7.0}, {4.0, 0.0, 3.0}}};
  m.MergeChanges(1, reinterpret_cast<const std::byte*>(start.data()),
                 reinterpret_cast<const std::byte*>(afters.data()), 2);
  std::array<double, 3> want;
  strads::Delta<std::array<double, 3>>::Merge(want, start, afters);
  CHECK(std::vector<double>(m.data() + 3, m.data() + 6) ==
        std::vector<double>(want.begin(), want.end()));
  CHECK(want == std::array<double, 3>{3.0, 1.0, 5.0});  // start + mean change
}

TEST_CASE("dmatrix: RestoreOwned reads back what SaveOwned wrote") {
  std::vector<uint8_t> ok(2, 0);
  REQUIRE(strads::testing::RunNodes(2, 1, [&](strads::Runtime& rt) {
            auto& m = strads::MakeDMatrix<int32_t>(rt, 51, 3, [](int64_t i, std::span<int32_t> r) {
              for (size_t c = 0; c < r.size(); ++c) r[c] = static_cast<int32_t>(i * 10 + c);
            });
            strads::ByteWriter w;
            m.SaveOwned(w);
            const auto saved = w.Take();
            bool same = saved.size() ==
                        static_cast<size_t>(m.owned_end() - m.owned_begin()) * 3 * sizeof(int32_t);
            for (int32_t& x : m.local()) x = -1;
            strads::ByteReader r(saved);
            m.RestoreOwned(r);
            same = same && r.remaining() == 0;
            for (int64_t i = m.owned_begin(); i < m.owned_end(); ++i)
              for (size_t c = 0; c < 3; ++c)
                same = same && m.data()[i * 3 + c] == static_cast<int32_t>(i * 10 + c);
            ok[rt.node()] = same ? 1 : 0;
          }) == 0);
  CHECK(ok == std::vector<uint8_t>{1, 1});
}

TEST_CASE("dmatrix: a body whose rows change from call to call fails the access check") {
  // Bodies read row (i + shift) % rows: the same on every call (passes) or shifted per call.
  auto run = [](bool shifting) {
    return strads::testing::RunNodes(
        2, 2,
        [shifting](strads::Runtime& rt) {
          const auto& in = strads::MakeDMatrix<float>(
              rt, 64, 6,
              [](int64_t i, std::span<float> r) {
                for (float& x : r) x = static_cast<float>(i);
              },
              "in");
          auto& out = strads::MakeDMatrix<float>(
              rt, 64, 6,
              [](int64_t, std::span<float> r) {
                for (float& x : r) x = 0;
              },
              "out");
          for (int call = 0; call < 3; ++call)
            strads::AsyncFor(0, 63, [&in, &out, call, shifting](int64_t i) {
              const auto src = in[(i + (shifting ? call : 1)) % 64];
              const auto dst = out[i];
              for (size_t c = 0; c < dst.size(); ++c) dst[c] += src[c];
            });
        },
        {"--access-check", "all"});
  };
  CHECK(run(false) == 0);
  CHECK(run(true) == static_cast<int>(strads::ExitCode::kBadInput));
}

TEST_CASE("dmatrix: the memory report counts rows of width x sizeof(T) bytes; bad widths") {
  std::string report;
  std::vector<std::string> errors;
  const int rc = strads::testing::RunNodes(2, 1, [&](strads::Runtime& rt) {
    auto& m = strads::MakeDMatrix<double>(
        rt, 1000, 10,
        [](int64_t, std::span<double> r) {
          for (double& x : r) x = 1;
        },
        "emb");
    CHECK(m.rows() == 1000);
    CHECK(m.width() == 10);
    CHECK(m.element_bytes() == 80);
    const std::string text = strads::DescribeNodeMemory(rt);
    for (int64_t width : {int64_t{0}, int64_t{-3}, int64_t{1} << 40}) {
      try {
        strads::MakeDMatrix<double>(
            rt, 10, width, [](int64_t, std::span<double>) {}, "bad");
      } catch (const strads::UsageError& e) {
        if (rt.leader()) errors.push_back(e.what());
      }
    }
    if (rt.leader()) report = text;
  });
  REQUIRE(rc == 0);
  CHECK(report.find("memory: node 0 dds 0 'emb': ") != std::string::npos);
  CHECK(report.find(" 40000 owned, 80000 full length") != std::string::npos);
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].find("MakeDMatrix 'bad': width 0 is not in") != std::string::npos);
}

// The size check names the dmatrix as one, its rows as rows (before: "dvector 'emb' of N
// elements"); refused before anything is allocated.
TEST_CASE("dmatrix: a size past the machine's memory is refused naming the dmatrix and its rows") {
  std::string error;
  const int rc = strads::testing::RunNodes(1, 1, [&](strads::Runtime& rt) {
    try {
      strads::MakeDMatrix<double>(
          rt, int64_t{1} << 40, 16, [](int64_t, std::span<double>) {}, "emb");
    } catch (const strads::UsageError& e) {
      error = e.what();
    }
  });
  CHECK(rc == 0);
  CHECK_MESSAGE(error.find("dmatrix 'emb' of 1099511627776 rows of 128 bytes: ") == 0, error);
  CHECK(error.find("over this machine's memory") != std::string::npos);
}
