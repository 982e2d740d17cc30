// A verbs program that misbehaves on purpose, for the hostile-programs check
// (testbench/checks/hostile_programs.py): `misbehave MODE`.
//   throw         throws std::runtime_error after waiting a little (its peer may be waiting)
//   throw_int     throws an int (not a std::exception)
//   abort         calls abort()
//   segv          writes through a null pointer
//   fpe           divides by zero
//   exit N        calls exit(N)
//   _exit N       calls _exit(N)
//   wait KEY      waits on the out-of-band board for a key nobody puts
//   destroyed_qp  posts a Send on a QP it destroyed and returns what ibv_post_send returned
//   destroyed_all destroys a QP, then posts, modifies, queries and destroys it again, and the
//                 same with its CQ (poll, arm, destroy) and PD (deallocate): each of the nine
//                 calls must return an error (returns 0 when all did)
//   spin          loops for ever without a call (the spin guard ends the run)
//   idle          spends simulated time for ever, a microsecond at a time, and nothing moves
//                 (the watchdog ends the run)
//   ok            returns 0
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "models/host/verbs/verbs.h"

namespace {

volatile int g_zero = 0;

int destroyed(bool all) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
  ibv_qp_init_attr ia{};
  ia.send_cq = cq;
  ia.recv_cq = cq;
  ia.cap.max_send_wr = 4;
  ia.cap.max_recv_wr = 4;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  ia.qp_type = IBV_QPT_RC;
  ibv_qp* qp = ibv_create_qp(pd, &ia);
  if (!qp || ibv_destroy_qp(qp) != 0) return 90;
  int errors = 0;
  ibv_send_wr swr{};
  swr.opcode = IBV_WR_SEND;
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qp, &swr, &bad);
  if (!all) return rc;
  errors += rc != 0;
  ibv_recv_wr rwr{};
  ibv_recv_wr* rbad = nullptr;
  errors += ibv_post_recv(qp, &rwr, &rbad) != 0;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  errors += ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0;
  ibv_qp_init_attr init{};
  errors += ibv_query_qp(qp, &a, 0, &init) != 0;
  errors += ibv_destroy_qp(qp) != 0;
  // The CQ the QP used is free again.
  if (ibv_destroy_cq(cq) != 0) return 91;
  ibv_wc wc{};
  errors += ibv_poll_cq(cq, 1, &wc) < 0;
  errors += ibv_req_notify_cq(cq, 0) != 0;
  errors += ibv_destroy_cq(cq) != 0;
  if (ibv_dealloc_pd(pd) != 0) return 92;
  errors += ibv_dealloc_pd(pd) != 0;
  ibv_close_device(ctx);
  std::printf("misbehave: %d of 9 calls on destroyed objects returned an error\n", errors);
  return errors == 9 ? 0 : 10 + errors;
}

}  // namespace

RNIC_PROGRAM {
  if (argc < 2) return 100;
  const char* mode = argv[1];
  if (!std::strcmp(mode, "throw")) {
    rnic_spend_ns(5000);
    throw std::runtime_error("misbehave: thrown on purpose");
  }
  if (!std::strcmp(mode, "throw_int")) throw 42;
  if (!std::strcmp(mode, "abort")) std::abort();
  if (!std::strcmp(mode, "segv")) {
    rnic_spend_ns(2000);
    *reinterpret_cast<volatile int*>(uintptr_t(g_zero)) = 1;
    return 101;
  }
  if (!std::strcmp(mode, "fpe")) return 7 / g_zero;  // an integer division: SIGFPE
  if (!std::strcmp(mode, "exit") && argc == 3) std::exit(std::atoi(argv[2]));
  if (!std::strcmp(mode, "_exit") && argc == 3) _exit(std::atoi(argv[2]));
  if (!std::strcmp(mode, "wait") && argc == 3) {
    char c;
    rnic_oob_get(argv[2], &c, 1);
    return 0;
  }
  if (!std::strcmp(mode, "destroyed_qp")) return destroyed(false);
  if (!std::strcmp(mode, "destroyed_all")) return destroyed(true);
  if (!std::strcmp(mode, "spin")) {
    while (g_zero == 0) {
    }
    return 103;
  }
  if (!std::strcmp(mode, "idle")) {
    while (g_zero == 0) rnic_spend_ns(1000);
    return 104;
  }
  if (!std::strcmp(mode, "ok")) return 0;
  return 102;
}
