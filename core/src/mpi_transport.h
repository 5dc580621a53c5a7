// MpiTransport: one node per MPI rank (MPICH). Only the driver thread calls it.
#pragma once

#include <mpi.h>

#include <list>
#include <map>
#include <utility>

#include "strads/seam/transport.h"

namespace strads {

class MpiTransport : public Transport {
 public:
  MpiTransport();  // MPI must be initialised
  ~MpiTransport() override;

  int node() const override { return rank_; }
  int nodes() const override { return size_; }
  void Send(int dest, Tag tag, std::vector<std::byte> payload) override;
  Message Receive(int source, Tag tag, double timeout_seconds) override;
  bool Poll(int source, Tag tag) override;
  void Abort(const char* why, int exit_code) noexcept override;

 private:
  struct PendingSend {
    MPI_Request request;
    std::vector<std::byte> payload;
  };
  void ReapSends(bool wait);

  int rank_ = 0, size_ = 1;
  std::list<PendingSend> pending_;
  std::map<std::pair<int, int>, uint64_t> received_;  // (source, tag) -> messages so far
};

}  // namespace strads
