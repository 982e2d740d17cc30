// librnicsim_mpi.so: sim/ranks_backend.h's functions on Open MPI's C API.
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>

#include "sim/ranks_backend.h"

#define OMPI_SKIP_MPICXX 1  // the C API only (no C++ bindings to link)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

namespace {

// The TCP sockets MPI_Init opened (PMIx's to its server, and any of Open MPI's own) send at once
// (TCP_NODELAY). PMIx leaves its client's socket with Nagle's algorithm on, so at MPI_Finalize
// its second small message waits for the ACK of its first, which the server's side delays by
// Linux's 40 ms: 43-46 ms of every two-rank run's MPI_Finalize, 2-4 ms with this
// (docs/performance.md, "Runs over several processes"). Only latency changes: every message
// still arrives, in order.
void send_at_once() {
  DIR* fds = opendir("/proc/self/fd");
  if (!fds) return;
  while (const dirent* e = readdir(fds)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const int fd = std::atoi(e->d_name);
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    sockaddr_storage a{};
    len = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
        (a.ss_family != AF_INET && a.ss_family != AF_INET6))
      continue;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  closedir(fds);
}

void init(int* argc, char*** argv, int* rank, int* size) {
  MPI_Init(argc, argv);
  send_at_once();
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
