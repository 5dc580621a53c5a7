// Reconnaissance's two layouts: the binned one (AsyncFor's schedule engine) reads back, body by
// body, the same accesses as the touches one, with each write as its fine bin, and its counts by
// fine bin are those of the accesses; on several nodes too, where bodies that miss a remote read
// are merged back in after later passes.
#include "reconnaissance.h"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "access_check.h"
#include "cache_line.h"
#include "node_context.h"
#include "recon_hook.h"
#include "strads/strads.h"
#include "test_nodes.h"

namespace strads {
namespace {

constexpr int64_t kBodies = 3000, kRows = 1000;

struct Read {
  uint32_t dds;
  bool write;
  bool binned;
  int64_t at;
  bool operator==(const Read&) const = default;
};

std::vector<std::vector<Read>> ReadBack(const ReconResult& res) {
  std::vector<std::vector<Read>> bodies(static_cast<size_t>(res.share_count));
  res.ForEachBody([&](int64_t k, std::span<const ReconAccess> accesses) {
    for (const ReconAccess& a : accesses) bodies[k].push_back({a.dds, a.write, a.binned, a.at});
  });
  return bodies;
}

// `many_shapes`: body i also writes i % 300 more rows of W, so that the chunk's bodies take 300
// shapes, numbered past 127 (two bytes of LEB128) and changing from body to body.
void CheckLayoutsAgree(int nodes, int threads, bool many_shapes = false) {
  std::mutex mu;
  int64_t bodies_seen = 0, binned_writes = 0;
  const int rc = testing::RunNodes(nodes, threads, [&](Runtime& rt) {
    const auto& A = MakeDVector<int64_t>(rt, kBodies, [](int64_t i) { return i * 7919 % kRows; });
    auto& W = MakeDVector<double>(
        rt, kRows, [](int64_t) { return 0.0; }, "W");
    auto& H = MakeDVector<double>(
        rt, 50, [](int64_t) { return 0.0; }, "H");
    // Reads its own A[i] and, on every third body, another (often remote) element; writes
    // one row of W chosen by A's value (known only once the read is served) and one of H.
    const auto body = [&](int64_t i) {
      const int64_t row = A[i];
      if (i % 3 == 0) W[(row + A[(i * 31) % kBodies]) % kRows] += 1.0;
      W[row] += 1.0;
      if (i % 5 != 0) H[i % 50] -= 1.0;
      if (many_shapes)
        for (int64_t r = 1; r <= i % 300; ++r) W[(row + 7 * r) % kRows] += 1.0;
    };
    const ReconResult touches = Reconnoitre(rt, "test", 0, kBodies - 1, body);
    const ReconResult binned = Reconnoitre(rt, "test", 0, kBodies - 1, body, true, 256);
    REQUIRE(!touches.binned());
    REQUIRE(binned.binned());
    CHECK(binned.flags == touches.flags);
    CHECK(binned.digests == touches.digests);
    std::vector<std::vector<Read>> expected = ReadBack(touches);
    for (auto& accesses : expected)
      for (Read& a : accesses)
        if (a.write) {
          a.binned = true;
          a.at = EvenSplit(rt.context().dds(a.dds).size(), binned.fine_bins[a.dds]).part_of(a.at);
        }
    const std::vector<std::vector<Read>> got = ReadBack(binned);
    CHECK(got == expected);
    if (many_shapes)
      for (const ReconResult::Chunk& chunk : binned.of_chunk) CHECK(chunk.shapes.size() > 128);
    // Every access, read or written, counted by its fine bin while the bodies ran.
    std::vector<std::vector<int64_t>> counts(rt.context().dds_count());
    for (const auto& accesses : ReadBack(touches))
      for (const Read& a : accesses) {
        const EvenSplit fine(rt.context().dds(a.dds).size(), binned.fine_bins[a.dds]);
        if (counts[a.dds].empty()) counts[a.dds].assign(static_cast<size_t>(fine.parts()), 0);
        ++counts[a.dds][static_cast<size_t>(fine.part_of(a.at))];
      }
    CHECK(binned.fine_counts == counts);
    std::lock_guard lock(mu);
    bodies_seen += binned.share_count;
    for (const auto& accesses : got)
      for (const Read& a : accesses) binned_writes += a.binned;
  });
  REQUIRE(rc == 0);
  CHECK(bodies_seen == kBodies);
  CHECK(binned_writes > kBodies);
}

TEST_CASE("binned reconnaissance reads back the touches' accesses, writes as their fine bins") {
  CheckLayoutsAgree(1, 1);
  CheckLayoutsAgree(1, 3);
  CheckLayoutsAgree(3, 2);  // remote reads miss: late bodies are merged back in order
}

TEST_CASE("binned reconnaissance reads back bodies of hundreds of shapes, in turn") {
  CheckLayoutsAgree(1, 1, /*many_shapes=*/true);
  CheckLayoutsAgree(1, 2, true);
  CheckLayoutsAgree(2, 1, true);
}

TEST_CASE("reconnaissance: a written element's copy starts as zeros, a read one as its value") {
  constexpr int64_t kN = 200;
  std::vector<double> written_seen(kN, -1.0), read_seen(kN, -1.0), read_then_written(kN, -1.0);
  const int rc = testing::RunNodes(1, 2, [&](Runtime& rt) {
    auto& W = MakeDVector<double>(
        rt, kN, [](int64_t) { return 5.0; }, "W");
    auto& V = MakeDVector<double>(
        rt, kN, [](int64_t) { return 7.0; }, "V");
    const auto& R = MakeDVector<double>(
        rt, kN, [](int64_t) { return 3.0; }, "R");
    const auto& Vc = V;
    Reconnoitre(rt, "test", 0, kN - 1, [&](int64_t i) {
      double& w = W[i];  // a write: its value decides nothing the body touches
      written_seen[i] = w;
      w += 1.0;
      read_seen[i] = R[i];
      const double before = Vc[i];  // read first: the later write shares the copy read
      read_then_written[i] = V[i] + 0.0 * before;
    });
    for (int64_t i = 0; i < kN; ++i) CHECK(W[i] == 5.0);  // nothing was committed
  });
  REQUIRE(rc == 0);
  for (int64_t i = 0; i < kN; ++i) {
    CHECK(written_seen[i] == 0.0);
    CHECK(read_seen[i] == 3.0);
    CHECK(read_then_written[i] == 7.0);
  }
}

// An element of N bytes, for the scratch copies' sizes.
template <size_t N>
struct Bytes {
  unsigned char b[N];
};

TEST_CASE("reconnaissance: written copies of any size start as zeros, after a body dirtied them") {
  // Each body finds its written elements' copies all zeros, then sets every byte: the next body
  // reuses the scratch (BeginBody frees it), so a copy zeroed only in part shows the last body's
  // bytes. Sizes below, at, between and above the 16-byte pieces the copies are zeroed in.
  constexpr int64_t kN = 300;
  std::vector<int> dirty(kN, -1);
  const int rc = testing::RunNodes(1, 2, [&](Runtime& rt) {
    auto& a = MakeDVector<Bytes<4>>(
        rt, kN, [](int64_t) { return Bytes<4>{}; }, "a");
    auto& b = MakeDVector<Bytes<12>>(
        rt, kN, [](int64_t) { return Bytes<12>{}; }, "b");
    auto& c = MakeDVector<Bytes<16>>(
        rt, kN, [](int64_t) { return Bytes<16>{}; }, "c");
    auto& d = MakeDVector<Bytes<72>>(
        rt, kN, [](int64_t) { return Bytes<72>{}; }, "d");
    auto& e = MakeDVector<Bytes<136>>(
        rt, kN, [](int64_t) { return Bytes<136>{}; }, "e");
    Reconnoitre(rt, "test", 0, kN - 1, [&](int64_t i) {
      int seen = 0;
      const auto check_and_dirty = [&seen](auto& element) {
        for (unsigned char& byte : element.b) {
          seen += byte != 0;
          byte = 0xff;
        }
      };
      check_and_dirty(a[i]);
      check_and_dirty(b[(i * 7) % kN]);
      check_and_dirty(c[(i * 11) % kN]);
      check_and_dirty(d[(i * 13) % kN]);
      check_and_dirty(e[(i * 17) % kN]);
      dirty[i] = seen;
    });
  });
  REQUIRE(rc == 0);
  for (int64_t i = 0; i < kN; ++i) CHECK(dirty[i] == 0);
}

TEST_CASE("pair sums: each fine pair's pair bodies' digest parts summed, other digests per body") {
  // W (20 rows) and H (10) give a table of 200 fine pairs, under a byte a body of a 1500-body
  // chunk. Bodies i % 5 == 0 write W only and bodies i % 7 == 0 two rows of W: not pair bodies.
  constexpr int64_t kN = 3000;
  const int rc = testing::RunNodes(1, 2, [&](Runtime& rt) {
    const auto& A = MakeDVector<int64_t>(rt, kN, [](int64_t i) { return i * 7919 % 20; });
    auto& W = MakeDVector<double>(
        rt, 20, [](int64_t) { return 0.0; }, "W");
    auto& H = MakeDVector<double>(
        rt, 10, [](int64_t) { return 0.0; }, "H");
    const auto body = [&](int64_t i) {
      const int64_t row = A[i];
      W[row] += 1.0;
      if (i % 7 == 0) W[(row + 1) % 20] += 1.0;
      if (i % 5 != 0) H[i % 10] -= 1.0;
    };
    const ReconResult per_body = Reconnoitre(rt, "test", 0, kN - 1, body);  // touches, digests
    const ReconResult pairs = Reconnoitre(rt, "test", 0, kN - 1, body, true, 256, true);
    REQUIRE(pairs.pair_sums);
    CHECK(pairs.digests.empty());
    CHECK(pairs.PairSumsHold());
    const uint32_t w = W.id(), h = H.id();
    for (size_t c = 0; c < pairs.of_chunk.size(); ++c) {
      const ReconResult::Chunk& chunk = pairs.of_chunk[c];
      REQUIRE(chunk.pairs.active());
      CHECK(chunk.pairs.dds[0] == std::min(w, h));
      CHECK(chunk.pairs.dds[1] == std::max(w, h));
      std::vector<uint32_t> sums(chunk.pairs.sums.size(), 0);
      std::vector<uint32_t> kept(static_cast<size_t>(pairs.chunks.end(static_cast<int64_t>(c)) -
                                                     pairs.chunks.begin(static_cast<int64_t>(c))));
      int64_t pair_bodies = 0;
      for (int64_t k = pairs.chunks.begin(static_cast<int64_t>(c));
           k < pairs.chunks.end(static_cast<int64_t>(c)); ++k) {
        int64_t written_w = -1, written_h = -1, writes = 0;
        for (const PackedTouch& t : per_body.of_body(k)) {
          if (!t.write()) continue;
          ++writes;
          (t.dds() == w ? written_w : written_h) = t.index();
        }
        const uint32_t digest = per_body.digests[static_cast<size_t>(k)];
        if (writes == 2 && written_w >= 0 && written_h >= 0) {
          ++pair_bodies;
          const int64_t fw = EvenSplit(20, pairs.fine_bins[w]).part_of(written_w);
          const int64_t fh = EvenSplit(10, pairs.fine_bins[h]).part_of(written_h);
          const int64_t f = w < h ? fw * chunk.pairs.bins[1] + fh : fh * chunk.pairs.bins[1] + fw;
          sums[static_cast<size_t>(f)] += BodyDigestPart(k, digest);
        } else {
          kept[static_cast<size_t>(k - pairs.chunks.begin(static_cast<int64_t>(c)))] = digest;
        }
      }
      CHECK(pair_bodies > 0);
      CHECK(chunk.pairs.sums == sums);
      CHECK(chunk.body_digests == kept);
    }
  });
  REQUIRE(rc == 0);
}

TEST_CASE("pair sums do not hold when a pair body reads a DDS the loop writes") {
  const int rc = testing::RunNodes(1, 1, [&](Runtime& rt) {
    auto& W = MakeDVector<double>(
        rt, 8, [](int64_t) { return 0.0; }, "W");
    auto& H = MakeDVector<double>(
        rt, 8, [](int64_t) { return 0.0; }, "H");
    auto& X = MakeDVector<double>(
        rt, 8, [](int64_t) { return 0.0; }, "X");
    const ReconResult res = Reconnoitre(
        rt, "test", 0, 999,
        [&](int64_t i) {
          const auto& x = X;
          if (i % 2 == 0) {
            W[i % 8] += x[i % 8];  // a pair body that reads X, which the odd bodies write
            H[i % 8] += 1.0;
          } else {
            X[i % 8] += 1.0;
          }
        },
        true, 256, true);
    REQUIRE(res.pair_sums);
    REQUIRE(res.of_chunk[0].pairs.active());
    CHECK_FALSE(res.PairSumsHold());
  });
  REQUIRE(rc == 0);
}

// The threads' hooks are made one after another and their scratch copies come from one heap:
// unaligned, thread 0's copies once shared a cache line with thread 1's delayed adds and
// reconnaissance ran twice as long (cache_line.h). Each must start a line of its own.
TEST_CASE("reconnaissance: each thread's hook and scratch copies are on cache lines of their own") {
  constexpr int64_t kN = 400;
  constexpr int kThreads = 4;
  std::vector<uintptr_t> first_copy(kN, 1), row_copy(kN, 1);
  const int rc = testing::RunNodes(1, kThreads, [&](Runtime& rt) {
    auto& W = MakeDVector<double>(
        rt, kN, [](int64_t) { return 0.0; }, "W");
    using Row = std::array<float, 32>;  // 128 bytes, as sgdmf's rows
    auto& R = MakeDVector<Row>(
        rt, kN, [](int64_t) { return Row{}; }, "R");
    // A body's first access takes the start of its thread's scratch; a row's copy after a
    // double's starts a line of its own too (vector loads on it split no line).
    Reconnoitre(rt, "test", 0, kN - 1, [&](int64_t i) {
      double& w = W[i];
      first_copy[i] = reinterpret_cast<uintptr_t>(&w);
      w += 1.0;
      Row& row = R[(i * 7) % kN];
      row_copy[i] = reinterpret_cast<uintptr_t>(row.data());
      row[0] += 1.0f;
      W[(i + 1) % kN] += 1.0;
    });
    // Hooks made as Reconnoitre makes them, one per thread.
    std::vector<std::unique_ptr<ReconHook>> hooks;
    for (int t = 0; t < kThreads; ++t)
      hooks.push_back(std::make_unique<ReconHook>(rt, ReconHook::Values::kFetchMisses));
    for (auto& hook : hooks) {
      CHECK(reinterpret_cast<uintptr_t>(hook.get()) % kCacheLineBytes == 0);
      hook->BeginBody();
      CHECK(reinterpret_cast<uintptr_t>(hook->Access(W, 0, true)) % kCacheLineBytes == 0);
      CHECK(reinterpret_cast<uintptr_t>(hook->touches().data()) % kCacheLineBytes == 0);
    }
  });
  REQUIRE(rc == 0);
  for (int64_t i = 0; i < kN; ++i) {
    CHECK(first_copy[i] % kCacheLineBytes == 0);
    CHECK(row_copy[i] % kCacheLineBytes == 0);
  }
}

// Scratch comes in chunks of 64 KB, used in order from the first at every body. An element
// larger than a chunk gets a chunk grown to hold it, and the chunks held stay what one body
// needs however many bodies run (a chunk made per such body once kept growing the list).
TEST_CASE("reconnaissance: copies of elements larger than a scratch chunk are whole and bounded") {
  using Big = std::array<uint8_t, 100000>;
  const int rc = testing::RunNodes(1, 1, [&](Runtime& rt) {
    auto& B = MakeDVector<Big>(
        rt, 4,
        [](int64_t i) {
          Big b;
          for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<uint8_t>(i * 31 + k);
          return b;
        },
        "B");
    auto& W = MakeDVector<double>(
        rt, 4, [](int64_t i) { return static_cast<double>(i); }, "W");
    ReconHook hook(rt, ReconHook::Values::kCurrent);
    std::vector<size_t> held;
    for (int body = 0; body < 50; ++body) {
      hook.BeginBody();
      const auto* w0 = reinterpret_cast<const double*>(hook.Access(W, body % 4, false));
      const auto* b1 = reinterpret_cast<const Big*>(hook.Access(B, body % 4, false));
      auto* b2 = reinterpret_cast<Big*>(hook.Access(B, (body + 1) % 4, true));
      const auto* w1 = reinterpret_cast<const double*>(hook.Access(W, (body + 1) % 4, false));
      CHECK(*w0 == static_cast<double>(body % 4));
      CHECK(*w1 == static_cast<double>((body + 1) % 4));
      CHECK(std::memcmp(b1->data(), B.data()[body % 4].data(), sizeof(Big)) == 0);
      CHECK(std::memcmp(b2->data(), B.data()[(body + 1) % 4].data(), sizeof(Big)) == 0);
      // Each copy its own bytes: writing one leaves the others as they were.
      b2->fill(0xee);
      CHECK(std::memcmp(b1->data(), B.data()[body % 4].data(), sizeof(Big)) == 0);
      CHECK(*w0 == static_cast<double>(body % 4));
      CHECK(*w1 == static_cast<double>((body + 1) % 4));
      CHECK(hook.touches().size() == 4);
      held.push_back(hook.ScratchBytesHeld());
    }
    CHECK(held.back() == held[1]);
    CHECK(held.back() < 4 * sizeof(Big));
  });
  REQUIRE(rc == 0);
}

}  // namespace
}  // namespace strads
