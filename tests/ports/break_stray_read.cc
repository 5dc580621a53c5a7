// Rule break: a body reads an element it did not read in reconnaissance: a neighbour chosen by a
// driver-local offset that changes between epochs (--mode offset), or only once late
// (--mode late). The loop writes w, reads src (which another loop changes).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "strads/strads.h"

int main(int argc, char** argv) {
  std::string mode = "offset";
  int64_t n = 20000;
  int epochs = 8, late = 6;
  CLI::App app{"stray read"};
  app.add_option("--mode", mode);
  app.add_option("--n", n);
  app.add_option("--epochs", epochs);
  app.add_option("--late", late);
  return strads::Run(app, argc, argv, [&](strads::Runtime& rt) {
    auto& src = strads::MakeDVector<double>(
        rt, n, [](int64_t i) { return double(i); }, "src");
    auto& w = strads::MakeDVector<double>(
        rt, n, [](int64_t) { return 0.0; }, "w");
    for (int ep = 1; ep <= epochs; ++ep) {
      if (mode == "oob") {  // off by one: reads src[n] in the last body
        const auto& s = src;
        strads::AsyncFor(0, n - 1, [&](int64_t i) { w[i] += s[i + 1]; });
        continue;
      }
      if (mode == "oobwrite") {  // off by one: writes w[n] in the last body
        strads::AsyncFor(0, n - 1, [&](int64_t i) { w[i + 1] += 1.0; });
        continue;
      }
      const int64_t off = mode == "offset" ? ep : (ep >= late ? n / 2 + 17 : 1);
      const auto& s = src;
      strads::AsyncFor(0, n - 1, [&, off](int64_t i) { w[i] += s[(i + off) % n]; });
      strads::AsyncFor(0, n - 1, [&](int64_t i) { src[i] += 1.0; });
    }
    const double total = strads::Sum(rt, std::as_const(w), [](double v) { return v; });
    const uint64_t h = strads::Checksum(rt, {&w});
    if (rt.leader()) std::printf("total %.1f\nchecksum: %016llx\n", total, (unsigned long long)h);
  });
}
