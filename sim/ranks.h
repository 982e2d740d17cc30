// The processes of one run over MPI (`mpirun -n N build/rnicsim ...`; docs/performance.md, "Runs
// over several processes"): this process's rank, how many there are, and what passes between
// them. Started without mpirun there is one rank and nothing passes; under mpirun rnicsim loads
// its MPI plugin (librnicsim_mpi.so, built where Open MPI is installed: sim/ranks_backend.h). Every
// rank runs the same elaboration, so channels registered in the same order have the same numbers
// everywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rnic::ranks {

// MPI_Init when started by mpirun (its environment says so); call first thing in main.
void init(int* argc, char*** argv);
// MPI_Finalize (after the last collective call).
void finish();
// Stops every rank (MPI_Abort) after an error on this one; returns without MPI.
[[noreturn]] void abort_all(int code);

int rank();
int size();
inline bool parallel() { return size() > 1; }

// A channel: bytes sent to a rank are handed to the channel's receiver there at the next
// exchange, in the order of their source rank, then of their sending.
using Receiver = std::function<void(int from, const uint8_t* data, size_t len)>;
uint32_t channel(Receiver r);
// A channel's receiver goes (its owner does); nothing more is sent on it.
void drop_channel(uint32_t ch);
// `not_before_ps`: nothing the message sets off at its receiver happens before then (it bounds
// the next window's start).
void send(int to, uint32_t ch, const void* data, size_t len, uint64_t not_before_ps);
// To every other rank.
void broadcast(uint32_t ch, const void* data, size_t len, uint64_t not_before_ps);

// The end of a window, one collective call in the common case: the ranks agree on the earliest
// next event of any (each rank's own `next_ps`, and what its messages set off), whether every
// rank is `done` and whether any had an `error`; when any rank sent messages they are then
// delivered (a second exchange).
struct Agreement {
  uint64_t next_ps;
  bool all_done;
  bool error;
};
Agreement settle(uint64_t next_ps, bool done, bool error);
uint64_t max_all(uint64_t v);
uint64_t sum_all(uint64_t v);
void sum_all(std::vector<uint64_t>& v);
void sum_all(std::vector<double>& v);
// Every rank's string, at rank 0 (empty elsewhere).
std::vector<std::string> gather(const std::string& s);
// Every rank's string, at every rank.
std::vector<std::string> all_gather(const std::string& s);

}  // namespace rnic::ranks
