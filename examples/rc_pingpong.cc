// rc_pingpong as a verbs program of its own (docs/verbs.md, "Programs"): two processes, a server
// and a client, ping-pong a message of 64 bytes over an RC QP, the way rdma-core's
// ibv_rc_pingpong does: device list, PD, a page-aligned buffer (memalign, as there), CQ, QP through
// INIT, RTR (the peer's GID, path MTU, PSN) and RTS (timeout, retries), post and poll. The
// connection details go through rnicsim's out-of-band board (what rc_pingpong's TCP socket
// does). Built as a shared object; run by scenarios/examples/rc_pingpong.yaml:
//   args: server N [SIZE] | client N [SIZE]   (N round trips of SIZE bytes, 64 by default)
// Returns 0 when every reply carried the round trip's number back.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "models/host/verbs/verbs.h"

namespace {

struct Dest {
  ibv_gid gid;
  uint32_t qpn;
  uint32_t psn;
};

int fail(const char* what) {
  std::fprintf(stderr, "rc_pingpong: %s failed\n", what);
  return 1;
}

// Polls until one completion arrives; returns its status (or -1).
int wait_one(ibv_cq* cq, ibv_wc* wc) {
  for (;;) {
    const int n = ibv_poll_cq(cq, 1, wc);
    if (n < 0) return -1;
    if (n == 1) return wc->status;
  }
}

}  // namespace

RNIC_PROGRAM {
  if (argc != 3 && argc != 4) return fail("arguments (server N [SIZE] | client N [SIZE])");
  const bool server = std::strcmp(argv[1], "server") == 0;
  const int iters = std::atoi(argv[2]);
  const size_t size = argc == 4 ? size_t(std::atol(argv[3])) : 64;
  if (size < 16 || size > 4096) return fail("SIZE (16 to 4096)");

  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n < 1) return fail("ibv_get_device_list");
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  if (!ctx) return fail("ibv_open_device");
  ibv_pd* pd = ibv_alloc_pd(ctx);
  // Plain memory, used with plain loads and stores. Page-aligned as ibv_rc_pingpong's: where a
  // buffer sits in its page moves the card's DMA timing (docs/verbs.md, "Programs").
  std::unique_ptr<char, decltype(&std::free)> mem(
      static_cast<char*>(std::aligned_alloc(4096, 4096)), &std::free);
  char* const buf = mem.get();
  std::memset(buf, 0, 4096);  // what a round trip leaves unwritten goes on the wire as zeros
  ibv_mr* mr = ibv_reg_mr(pd, buf, size, IBV_ACCESS_LOCAL_WRITE);
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
  if (!pd || !mr || !cq) return fail("ibv_alloc_pd / ibv_reg_mr / ibv_create_cq");
  ibv_qp_init_attr ia{};
  ia.send_cq = cq;
  ia.recv_cq = cq;
  ia.cap.max_send_wr = 1;
  ia.cap.max_recv_wr = 1;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  ia.qp_type = IBV_QPT_RC;
  ibv_qp* qp = ibv_create_qp(pd, &ia);
  if (!qp) return fail("ibv_create_qp");

  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = 0;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    return fail("ibv_modify_qp INIT");

  Dest me{};
  if (ibv_query_gid(ctx, 1, 0, &me.gid)) return fail("ibv_query_gid");
  me.qpn = qp->qp_num;
  me.psn = server ? 0x1111 : 0x2222;
  rnic_oob_put(server ? "pingpong.server" : "pingpong.client", &me, sizeof me);
  Dest peer{};
  rnic_oob_get(server ? "pingpong.client" : "pingpong.server", &peer, sizeof peer);

  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer.gid;
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = 1;
  if (ibv_modify_qp(qp, &a,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return fail("ibv_modify_qp RTR");
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = me.psn;
  a.max_rd_atomic = 1;
  if (ibv_modify_qp(qp, &a,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
    return fail("ibv_modify_qp RTS");
  // Both sides ready before the first Send (rc_pingpong's socket handshake).
  const char ready = 1;
  rnic_oob_put(server ? "pingpong.server.ready" : "pingpong.client.ready", &ready, 1);
  char other = 0;
  rnic_oob_get(server ? "pingpong.client.ready" : "pingpong.server.ready", &other, 1);

  ibv_sge sge{reinterpret_cast<uint64_t>(buf), uint32_t(size), mr->lkey};
  ibv_recv_wr rwr{};
  rwr.sg_list = &sge;
  rwr.num_sge = 1;
  ibv_send_wr swr{};
  swr.sg_list = &sge;
  swr.num_sge = 1;
  swr.opcode = IBV_WR_SEND;
  swr.send_flags = IBV_SEND_SIGNALED;
  ibv_recv_wr* bad_r = nullptr;
  ibv_send_wr* bad_s = nullptr;
  ibv_wc wc{};
  const double t0 = rnic_now_ns();
  for (int i = 0; i < iters; ++i) {
    if (ibv_post_recv(qp, &rwr, &bad_r)) return fail("ibv_post_recv");
    if (!server) {
      std::snprintf(buf, size, "ping %d", i);  // a plain store the card sends
      if (ibv_post_send(qp, &swr, &bad_s)) return fail("ibv_post_send");
      if (wait_one(cq, &wc) != IBV_WC_SUCCESS) return fail("send completion");
    }
    if (wait_one(cq, &wc) != IBV_WC_SUCCESS) return fail("receive completion");
    char want[64];
    std::snprintf(want, sizeof want, "ping %d", i);
    if (std::strcmp(buf, want) != 0) {  // a plain load of what the card placed
      std::fprintf(stderr, "rc_pingpong: round trip %d carried '%s'\n", i, buf);
      return 1;
    }
    if (server) {
      if (ibv_post_send(qp, &swr, &bad_s)) return fail("ibv_post_send");
      if (wait_one(cq, &wc) != IBV_WC_SUCCESS) return fail("send completion");
    }
  }
  const double us = (rnic_now_ns() - t0) / 1000.0;
  if (!server)
    std::printf("rc_pingpong: %d round trips of %zu bytes in %.2f us: %.2f us each\n", iters, size,
                us, us / iters);
  ibv_destroy_qp(qp);
  ibv_dereg_mr(mr);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  return 0;
}
