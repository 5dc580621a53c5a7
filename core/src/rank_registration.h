// A rank's side of `strads run`'s watch (strads/rank_watch.h): register, so that a death is
// ordered; say when the rank ends of its own accord; and keep an abort or a crash that another
// rank's death caused from being taken for the first death.
#pragma once

namespace strads::internal {

class RankRegistration {
 public:
  // Registers rank `rank` of `ranks` with the set named in STRADS_RANK_WATCH, if any (else does
  // nothing). Returns once the watcher's semop for it is queued (at most 10 s).
  RankRegistration(int rank, int ranks);
  // The rank is about to abort the job for a failure it reports: if another rank has begun to
  // exit, the failure is that death's consequence (a lost peer), and is not counted as one.
  void BeforeAbort();
  // The rank ends of its own accord (any failure it reported itself): its exit is no death.
  void Finished();

 private:
  int set_ = -1;
  int rank_ = -1;
};

}  // namespace strads::internal
