// librnicsim_mpi.so: sim/ranks_backend.h's functions on Open MPI's C API.
#include <cstdint>

#include "sim/ranks_backend.h"

#define OMPI_SKIP_MPICXX 1  // the C API only (no C++ bindings to link)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

namespace {

void init(int* argc, char*** argv, int* rank, int* size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}
void finalize() { MPI_Finalize(); }
void alltoall_int(const int* send, int* recv) {
  MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
}
void alltoallv_bytes(const void* send, const int* sc, const int* sd, void* recv, const int* rc,
                     const int* rd) {
  MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
}
void allreduce_u64(uint64_t* v, int n, int op) {
  MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T,
                op == 0   ? MPI_MIN
                : op == 1 ? MPI_MAX
                          : MPI_SUM,
                MPI_COMM_WORLD);
}
void allgather_int(int v, int* out) {
  MPI_Allgather(&v, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
}
void allgatherv_chars(const char* s, int len, char* out, const int* lens, const int* displs) {
  MPI_Allgatherv(s, len, MPI_CHAR, out, lens, displs, MPI_CHAR, MPI_COMM_WORLD);
}

const RnicsimRanksBackend kBackend{init,          finalize,      alltoall_int,    alltoallv_bytes,
                                   allreduce_u64, allgather_int, allgatherv_chars};

}  // namespace

extern "C" const RnicsimRanksBackend* rnicsim_ranks_backend() { return &kBackend; }
