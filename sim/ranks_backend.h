// What a run over several processes needs of MPI (sim/ranks.h), as a table of C functions: the
// plugin librnicsim_mpi.so (sim/ranks_mpi.cc, linked with Open MPI) fills it. rnicsim loads the
// plugin only when mpirun started it, so a run in one process never maps MPI.
#pragma once

#include <cstdint>

extern "C" {

struct RnicsimRanksBackend {
  // MPI_Init; this process's rank and the number of ranks.
  void (*init)(int* argc, char*** argv, int* rank, int* size);
  void (*finalize)();
  // MPI_Alltoall of one int per rank; MPI_Alltoallv of bytes.
  void (*alltoall_int)(const int* send, int* recv);
  void (*alltoallv_bytes)(const void* send, const int* send_counts, const int* send_displs,
                          void* recv, const int* recv_counts, const int* recv_displs);
  // MPI_Allreduce in place: op 0 min, 1 max, 2 sum.
  void (*allreduce_u64)(uint64_t* v, int n, int op);
  // MPI_Allgather of one int; MPI_Allgatherv of chars.
  void (*allgather_int)(int v, int* out);
  void (*allgatherv_chars)(const char* s, int len, char* out, const int* lens, const int* displs);
};

// The plugin's one entry point.
const RnicsimRanksBackend* rnicsim_ranks_backend();
}
