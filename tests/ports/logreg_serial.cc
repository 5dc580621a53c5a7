// Sparse logistic regression by SGD over rows, serial.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "port_data.h"
#include "strads/fnv1a.h"

int main(int argc, char** argv) {
  int64_t n = 20000;
  int features = 2000, epochs = 5;
  uint64_t seed = 3;
  double lr = 0.05, l2 = 1e-4;
  CLI::App app{"sparse logistic regression, serial"};
  app.add_option("--rows", n);
  app.add_option("--features", features);
  app.add_option("--epochs", epochs);
  app.add_option("--data-seed", seed);
  std::string order_path;  // visit rows in this order (one index per line, strads --order-out)
  app.add_option("--order", order_path);
  CLI11_PARSE(app, argc, argv);
  std::vector<int64_t> order;
  if (!order_path.empty()) {
    std::ifstream in(order_path);
    for (int64_t i; in >> i;) order.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) order.push_back(i);
  }
  const std::vector<ports::Row> rows = ports::MakeRows(n, features, seed);
  std::vector<double> w(features, 0.0);
  for (int ep = 1; ep <= epochs; ++ep) {
    double loss = 0;
    for (int64_t i : order) {
      const ports::Row& r = rows[i];
      double z = 0;
      for (int k = 0; k < ports::kNnz; ++k) z += w[r.idx[k]] * r.val[k];
      const double p = 1.0 / (1.0 + std::exp(-z));
      loss += -(r.y * std::log(p + 1e-12) + (1 - r.y) * std::log(1 - p + 1e-12));
      const double gr = p - r.y;
      for (int k = 0; k < ports::kNnz; ++k) w[r.idx[k]] -= lr * (gr * r.val[k] + l2 * w[r.idx[k]]);
    }
    std::printf("epoch %d loss %.6f\n", ep, loss / n);
  }
  strads::Fnv1a h;
  h.Update(w.data(), w.size() * sizeof(double));
  std::printf("checksum: %s\n", h.hex().c_str());
}
