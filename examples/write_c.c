/* A verbs program in C (docs/verbs.md, "Programs"), against rdma-core's <infiniband/verbs.h>
 * as Debian's libibverbs-dev installs it: the server registers a buffer for remote writes and
 * publishes where it is; the client RDMA-Writes N blocks of 4 KiB into it (the last WR
 * signalled), then an inline Send of the count; the server checks every byte. Built as a
 * shared object; run by scenarios/examples/write_c.yaml:
 *   args: server N | client N
 * Returns 0 when the server found every block where the client wrote it. */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/host/verbs/verbs.h"

enum { kBlock = 4096, kMaxBlocks = 256 };

struct dest {
  union ibv_gid gid;
  uint32_t qpn;
  uint64_t addr;
  uint32_t rkey;
};

static int fail(const char* what) {
  fprintf(stderr, "write_c: %s failed\n", what);
  return 1;
}

static int wait_one(struct ibv_cq* cq, struct ibv_wc* wc) {
  for (;;) {
    int n = ibv_poll_cq(cq, 1, wc);
    if (n < 0) return -1;
    if (n == 1) return wc->status;
  }
}

static int connect_qp(struct ibv_qp* qp, const struct dest* peer) {
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    return fail("ibv_modify_qp INIT");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = peer->qpn;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer->gid;
  a.ah_attr.port_num = 1;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN))
    return fail("ibv_modify_qp RTR");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) return fail("ibv_modify_qp RTS");
  return 0;
}

RNIC_PROGRAM {
  if (argc != 3) return fail("arguments (server N | client N)");
  const int server = strcmp(argv[1], "server") == 0;
  const int blocks = atoi(argv[2]);
  if (blocks < 1 || blocks > kMaxBlocks) return fail("N (1 to 256)");

  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (!list || n < 1) return fail("ibv_get_device_list");
  struct ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  if (!ctx) return fail("ibv_open_device");

  /* What the card is, through rdma-core's inline verbs (the context's operations). */
  struct ibv_device_attr_ex dx;
  struct ibv_port_attr port;
  if (ibv_query_device_ex(ctx, NULL, &dx)) return fail("ibv_query_device_ex");
  if (ibv_query_port(ctx, 1, &port)) return fail("ibv_query_port");
  if (server)
    printf("write_c: %s, %s over %s, port %s, active MTU %d, ODP %s\n",
           ibv_get_device_name(ctx->device), ibv_node_type_str(ctx->device->node_type),
           port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand",
           ibv_port_state_str(port.state), 128 << port.active_mtu,
           (dx.odp_caps.general_caps & IBV_ODP_SUPPORT) ? "yes" : "no");

  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  const size_t bytes = (size_t)blocks * kBlock;
  /* Aligned to 2 MiB: a buffer across a 2 MiB boundary takes one more page-table read to
     register, and where the heap puts it differs between builds and processes (docs/verbs.md,
     "Plain memory"). */
  const size_t align = (size_t)2 << 20;
  char* buf = aligned_alloc(align, (bytes + align - 1) / align * align);
  if (!pd || !buf) return fail("ibv_alloc_pd / aligned_alloc");
  memset(buf, server ? 0 : 'w', bytes);
  for (int b = 0; b < blocks && !server; ++b) buf[(size_t)b * kBlock] = (char)b;
  struct ibv_mr* mr = ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  struct ibv_cq* cq = ibv_create_cq(ctx, 2 * kMaxBlocks, NULL, NULL, 0);
  if (!mr || !cq) return fail("ibv_reg_mr / ibv_create_cq");
  struct ibv_qp_init_attr ia;
  memset(&ia, 0, sizeof ia);
  ia.send_cq = ia.recv_cq = cq;
  ia.cap.max_send_wr = kMaxBlocks + 1;
  ia.cap.max_recv_wr = 1;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.cap.max_inline_data = 64;
  ia.qp_type = IBV_QPT_RC;
  struct ibv_qp* qp = ibv_create_qp(pd, &ia);
  if (!qp) return fail("ibv_create_qp");

  struct dest me, peer;
  memset(&me, 0, sizeof me);
  if (ibv_query_gid(ctx, 1, 0, &me.gid)) return fail("ibv_query_gid");
  me.qpn = qp->qp_num;
  me.addr = (uintptr_t)buf;
  me.rkey = mr->rkey;
  rnic_oob_put(server ? "write_c.server" : "write_c.client", &me, sizeof me);
  rnic_oob_get(server ? "write_c.client" : "write_c.server", &peer, sizeof peer);
  if (connect_qp(qp, &peer)) return 1;

  struct ibv_wc wc;
  uint32_t count = 0;
  struct ibv_sge sge = {(uintptr_t)&count, sizeof count, mr->lkey};
  if (server) {
    /* The count lands in a receive buffer of its own: the first 4 bytes of the last block
     * would be overwritten otherwise. */
    struct ibv_mr* cmr = ibv_reg_mr(pd, &count, sizeof count, IBV_ACCESS_LOCAL_WRITE);
    if (!cmr) return fail("ibv_reg_mr (count)");
    sge.lkey = cmr->lkey;
    struct ibv_recv_wr rwr, *bad_r = NULL;
    memset(&rwr, 0, sizeof rwr);
    rwr.sg_list = &sge;
    rwr.num_sge = 1;
    if (ibv_post_recv(qp, &rwr, &bad_r)) return fail("ibv_post_recv");
    const char ready = 1;
    rnic_oob_put("write_c.ready", &ready, 1);
    if (wait_one(cq, &wc) != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) return fail("receive");
    for (int b = 0; b < blocks; ++b)
      for (size_t i = 0; i < kBlock; ++i) {
        const char want = i == 0 ? (char)b : 'w';
        if (buf[(size_t)b * kBlock + i] != want) {
          fprintf(stderr, "write_c: block %d byte %zu is %d, not %d\n", b, i,
                  buf[(size_t)b * kBlock + i], want);
          return 1;
        }
      }
    printf("write_c: %u blocks of %d bytes arrived intact\n", count, kBlock);
    ibv_dereg_mr(cmr);
  } else {
    char ready = 0;
    rnic_oob_get("write_c.ready", &ready, 1);
    const double t0 = rnic_now_ns();
    struct ibv_send_wr* bad = NULL;
    for (int b = 0; b < blocks; ++b) {
      struct ibv_sge s = {(uintptr_t)(buf + (size_t)b * kBlock), kBlock, mr->lkey};
      struct ibv_send_wr w;
      memset(&w, 0, sizeof w);
      w.wr_id = (uint64_t)b;
      w.sg_list = &s;
      w.num_sge = 1;
      w.opcode = IBV_WR_RDMA_WRITE;
      w.send_flags = b + 1 == blocks ? IBV_SEND_SIGNALED : 0;
      w.wr.rdma.remote_addr = peer.addr + (uint64_t)b * kBlock;
      w.wr.rdma.rkey = peer.rkey;
      if (ibv_post_send(qp, &w, &bad)) return fail("ibv_post_send (write)");
    }
    if (wait_one(cq, &wc) != IBV_WC_SUCCESS) return fail("write completion");
    count = (uint32_t)blocks;
    struct ibv_send_wr w;
    memset(&w, 0, sizeof w);
    w.sg_list = &sge;
    w.num_sge = 1;
    w.opcode = IBV_WR_SEND;
    w.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE; /* the bytes are taken at post */
    if (ibv_post_send(qp, &w, &bad)) return fail("ibv_post_send (send)");
    if (wait_one(cq, &wc) != IBV_WC_SUCCESS) return fail("send completion");
    const double us = (rnic_now_ns() - t0) / 1000.0;
    printf("write_c: %d blocks of %d bytes written in %.2f us: %.1f MiB/s\n", blocks, kBlock, us,
           (double)bytes / (1 << 20) / (us / 1e6));
  }
  ibv_destroy_qp(qp);
  ibv_dereg_mr(mr);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  free(buf);
  return 0;
}
