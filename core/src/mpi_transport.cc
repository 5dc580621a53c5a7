#include "mpi_transport.h"

#include <chrono>
#include <climits>
#include <cstdio>
#include <string>
#include <thread>

#include "strads/errors.h"
#include "strads/seam/wait_bound.h"

namespace strads {

MpiTransport::MpiTransport() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiTransport::~MpiTransport() { ReapSends(/*wait=*/true); }

void MpiTransport::Send(int dest, Tag tag, std::vector<std::byte> payload) {
  if (payload.size() > static_cast<size_t>(INT_MAX))
    throw std::runtime_error("strads: message of " + std::to_string(payload.size()) +
                             " bytes exceeds MPI's 2 GiB limit");
  pending_.push_back({MPI_REQUEST_NULL, std::move(payload)});
  PendingSend& p = pending_.back();
  MPI_Isend(p.payload.data(), static_cast<int>(p.payload.size()), MPI_BYTE, dest,
            static_cast<int>(tag), MPI_COMM_WORLD, &p.request);
  ReapSends(/*wait=*/false);
}

void MpiTransport::ReapSends(bool wait) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    if (wait)
      MPI_Wait(&it->request, MPI_STATUS_IGNORE), done = 1;
    else
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    it = done ? pending_.erase(it) : std::next(it);
  }
}

Message MpiTransport::Receive(int source, Tag tag, double timeout_seconds) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = DeadlineAfter(timeout_seconds);
  const int mpi_source = source == kAnySource ? MPI_ANY_SOURCE : source;
  int spins = 0;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(mpi_source, static_cast<int>(tag), MPI_COMM_WORLD, &flag, &status);
    if (flag) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      Message m;
      m.source = status.MPI_SOURCE;
      m.tag = tag;
      m.payload.resize(static_cast<size_t>(count));
      MPI_Recv(m.payload.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      m.seq = received_[{m.source, static_cast<int>(tag)}]++;
      return m;
    }
    ReapSends(/*wait=*/false);
    if (++spins > 1000) {
      if (Clock::now() > deadline)
        throw TimeoutError(ReceiveTimeoutMessage(rank_, timeout_seconds, tag, source));
      std::this_thread::sleep_for(std::chrono::microseconds(spins > 100000 ? 200 : 20));
    }
  }
}

bool MpiTransport::Poll(int source, Tag tag) {
  int flag = 0;
  MPI_Iprobe(source == kAnySource ? MPI_ANY_SOURCE : source, static_cast<int>(tag), MPI_COMM_WORLD,
             &flag, MPI_STATUS_IGNORE);
  return flag != 0;
}

void MpiTransport::Abort(const char* why, int exit_code) noexcept {
  std::fflush(stdout);
  std::fprintf(stderr, "strads: node %d aborts the job: %s\n", rank_, why);
  std::fflush(stderr);
  // mpiexec (MPICH's hydra) tears the job down at the first MPI_Abort and may drop what any
  // rank wrote just before that it has not yet forwarded, this report included, when two ranks
  // abort at once. A moment's pause lets it forward the report; bounded, so never a hang.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  MPI_Abort(MPI_COMM_WORLD, exit_code);
}

}  // namespace strads
