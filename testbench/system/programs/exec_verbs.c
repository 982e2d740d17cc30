/* An executable with a main, linked with -libverbs as rdma-core's programs are, for the
 * `exec_programs` check: run by rnicsim as a simulated process (`exec:`), its verbs served by
 * the simulated card through the preload library. Modes:
 *   server N | client N  the client RDMA-Writes N blocks of 4 KiB from a malloc'ed buffer (not
 *                        page aligned) into the server's, then Sends the count from a buffer on
 *                        its stack; the server receives it into its stack and checks every
 *                        byte with plain loads. QP details go through rnicsim's out-of-band
 *                        board (rnic_oob_*, which the preload library provides).
 *   server-events N      the server, its CQ on a completion channel: made non-blocking, the
 *                        channel answers EAGAIN and polls empty before any event (and so does
 *                        the context's async_fd); an epoll
 *                        wait on its descriptor ends at the Send's completion, whose event
 *                        names the CQ
 *   server-events N bad | client N bad  then the client Writes to a wrong STag (its completion
 *                        says so) and the server's async_fd polls readable for the access
 *                        error, an async event of its QP
 *   client-ex N          the client, with rdma-core's extended verbs: its CQ from
 *                        ibv_create_cq_ex (polled with ibv_start_poll / ibv_next_poll), its QP
 *                        from ibv_create_qp_ex, the writes and the Send posted with ibv_wr_*.
 *   exit N               writes a line to stderr and exits N
 *   crash                registers memory, then dereferences a null pointer
 *   spin                 loops on the CPU without a call
 *   forged               passes a PD it made itself to ibv_dealloc_pd and ibv_reg_mr
 *   calls N              N calls of ibv_query_port (the bench's round trips)
 *   fork                 forks after opening the device
 *   thread-spin          starts a thread that spins on the CPU without a call; main joins it
 *   alarm                a 2 ms real-time timer (setitimer) ends a loop of clock reads, a 5 ms
 *                        one cuts a 1 s usleep short (EINTR), a 3 ms one ends a poll with no
 *                        timeout (EINTR), and a 0.5 ms one does not end a 1 ms ppoll whose
 *                        mask blocks SIGALRM (it rings as ppoll returns); pause until a 4 ms
 *                        one, sigsuspend until a 1 ms one, all in simulated time
 *   poll-server HOST | poll-client HOST  TCP over the management network with poll and select:
 *                        the server polls its listener, then its connection (a 1 ms timeout
 *                        first, the client writev's after 3 ms), and selects for the next bytes
 *                        (sendto; readv and recvfrom take them, getpeername names the client);
 *                        then, on a copy of the connection's descriptor (dup, the first
 *                        closed), ppoll and pselect time out after 0.5 and 0.25 ms; made
 *                        non-blocking (fcntl), a read answers EAGAIN at once, and so does the
 *                        accept of a listener made with SOCK_NONBLOCK, and of one made
 *                        non-blocking by ioctl's FIONBIO
 *   epoll-server HOST | epoll-client HOST  the same with epoll: the server waits on its
 *                        listener, then on its connection as a one-shot (a 1 ms timeout first),
 *                        again without re-arming it (3 ms: nothing), re-armed; then on a pipe of
 *                        its own in the same instance; epoll_pwait2 times out after 1.5 ms; and
 *                        it tries epoll_ctl's errors
 *   forever-server poll|epoll|late | forever-client HOST  the server takes the client's
 *                        connection (an epoll one-shot on its listener), then waits with no
 *                        timeout on a pipe of its own that nothing writes: poll (the listener
 *                        and the pipe) or epoll (the pipe alone is left) waits for ever; late:
 *                        a second thread writes the pipe after a 300 ms sleep and epoll ends
 *   shutdown-server | shutdown-client HOST  getsockname before bind, of a listener on any
 *                        address and of both ends of a connection; the client shuts its read
 *                        side (a read answers 0 at once) and, after 1 byte and 100 us later 2
 *                        more, its write side (the server peeks at the first with MSG_PEEK,
 *                        takes all 3 with MSG_WAITALL, then the end of stream; the next send is
 *                        EPIPE, with MSG_NOSIGNAL, then SIGPIPE without it); shutdown's
 *                        ENOTCONN and EINVAL; a second listener shut down while a thread
 *                        waits in its accept (SHUT_WR nothing, SHUT_RDWR ends the accept
 *                        with EINVAL), then polled (POLLHUP) and accepted on (EINVAL)
 *   nbconnect-server | nbconnect-client HOST  non-blocking connects: to a port where nothing
 *                        listens (EINPROGRESS; poll reports POLLOUT, POLLERR and POLLHUP when
 *                        the refusal comes; SO_ERROR says ECONNREFUSED once), then to the
 *                        server (EINPROGRESS; a second connect EALREADY, a send EAGAIN and
 *                        getpeername ENOTCONN meanwhile; poll's POLLOUT a round trip later,
 *                        SO_ERROR 0, the peer's address, EISCONN), and a byte to the server
 *   epoll-copy-server | epoll-copy-client HOST  the server registers its connection with an
 *                        epoll instance, keeps a copy of the descriptor (dup) and closes the
 *                        one it registered; a copy of the instance (dup) reports the client's
 *                        byte (1 ms later) with the registration's data; a delete by the
 *                        closed descriptor is EBADF
 *   cm-poll-server | cm-poll-client HOST  librdmacm: the server's event channel, made
 *                        non-blocking, answers EAGAIN before any event; a poll on its
 *                        descriptor ends when the client's connection request arrives, which
 *                        the server rejects; the client sees REJECTED
 *   kernel-waits         waits on no descriptor or on the kernel's only, in simulated time:
 *                        poll(NULL, 0, 5) and select's 2.5 ms sleep; a poll and an epoll wait
 *                        on an empty pipe time out (3 and 2 ms); a written pipe polls ready
 *                        at once; clock_nanosleep for 1 ms, then to 1.5 ms from a clock read
 *   timed-waits          a thread's timed waits in simulated time: a condition variable
 *                        signalled by a second thread after 2 ms (a 1 s deadline), one that
 *                        times out after 3 ms (realtime) and 1 ms (its clock monotonic), a
 *                        semaphore posted after 1.5 ms and one that times out after 0.5 ms,
 *                        a timed lock of a mutex it holds (0.5 ms) and a timed join
 *   signal-calls         a timer's SIGALRM (a handler without SA_RESTART) ends a blocking accept
 *                        (2 ms) and a connect to a port where nothing listens (1 ms) with
 *                        EINTR; with SA_RESTART a recv goes on after the handler, to the byte
 *                        another thread (SIGALRM blocked) writes after 3 ms
 *   signal-waits [alone]  pause with no timer pending ends at the SIGUSR1 a second thread sends
 *                        after 200 us (EINTR, its handler run); sigsuspend with SIGUSR1 in its
 *                        mask waits past the SIGUSR1 sent after 100 us to the SIGUSR2 sent after
 *                        300 us, and the SIGUSR1 is delivered once it returns; alone: a pause
 *                        nothing can end
 * Exit 0 when the mode's checks hold. */
#define _GNU_SOURCE /* ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

__attribute__((weak)) void rnic_oob_put(const char* key, const void* data, size_t len);
__attribute__((weak)) size_t rnic_oob_get(const char* key, void* data, size_t len);

enum { kBlock = 4096 };

struct dest {
  union ibv_gid gid;
  uint32_t qpn;
  uint64_t addr;
  uint32_t rkey;
};

static int fail(const char* what) {
  fprintf(stderr, "exec_verbs: %s failed\n", what);
  return 1;
}

static uint64_t now_ns(void);

static struct ibv_cq_ex* g_cqx;         /* client-ex: the extended CQ */
static struct ibv_comp_channel* g_chan; /* server-events: the CQ's completion channel */
static int g_bad;                       /* server-events/client N bad: the async event */

static int wait_one(struct ibv_cq* cq, struct ibv_wc* wc) {
  if (g_cqx) {
    struct ibv_poll_cq_attr pa = {0};
    while (ibv_start_poll(g_cqx, &pa) == ENOENT) {
    }
    memset(wc, 0, sizeof *wc);
    wc->status = g_cqx->status;
    wc->wr_id = g_cqx->wr_id;
    wc->opcode = ibv_wc_read_opcode(g_cqx);
    wc->qp_num = ibv_wc_read_qp_num(g_cqx);
    ibv_end_poll(g_cqx);
    return wc->status;
  }
  for (;;) {
    int n = ibv_poll_cq(cq, 1, wc);
    if (n < 0) return -1;
    if (n == 1) return wc->status;
  }
}

static struct ibv_context* open_ctx(void) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (!list || n < 1) return NULL;
  struct ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  return ctx;
}

static int transfer(int server, int blocks, int ex, int events) {
  struct ibv_context* ctx = open_ctx();
  if (!ctx) return fail("ibv_open_device");
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  const size_t bytes = (size_t)blocks * kBlock;
  char* raw = malloc(bytes + 100);
  char* buf = raw + 100; /* not page aligned: the pages around it move too */
  uint32_t count = 0;    /* on the stack: the count's receive buffer, or the Send's source */
  if (!pd || !raw) return fail("ibv_alloc_pd / malloc");
  memset(buf, server ? 0 : 'w', bytes);
  for (int b = 0; b < blocks && !server; ++b) buf[(size_t)b * kBlock] = (char)b;
  struct ibv_mr* mr = ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  struct ibv_mr* cmr = ibv_reg_mr(pd, &count, sizeof count, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_cq* cq = NULL;
  if (events && !(g_chan = ibv_create_comp_channel(ctx))) return fail("ibv_create_comp_channel");
  if (ex) {
    struct ibv_cq_init_attr_ex ca;
    memset(&ca, 0, sizeof ca);
    ca.cqe = (uint32_t)blocks + 4;
    ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
    g_cqx = ibv_create_cq_ex(ctx, &ca);
    cq = g_cqx ? ibv_cq_ex_to_cq(g_cqx) : NULL;
  } else {
    cq = ibv_create_cq(ctx, blocks + 4, NULL, g_chan, 0);
  }
  if (!mr || !cmr || !cq) return fail("ibv_reg_mr / ibv_create_cq");
  struct ibv_qp_init_attr_ex ia;
  memset(&ia, 0, sizeof ia);
  ia.send_cq = ia.recv_cq = cq;
  ia.cap.max_send_wr = (uint32_t)blocks + 1;
  ia.cap.max_recv_wr = 1;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.qp_type = IBV_QPT_RC;
  ia.comp_mask = IBV_QP_INIT_ATTR_PD | (ex ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0);
  ia.pd = pd;
  ia.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;
  struct ibv_qp* qp = ibv_create_qp_ex(ctx, &ia);
  if (!qp) return fail("ibv_create_qp");
  struct ibv_qp_ex* qx = ex ? ibv_qp_to_qp_ex(qp) : NULL;
  if (ex && !qx) return fail("ibv_qp_to_qp_ex");

  struct dest me, peer;
  memset(&me, 0, sizeof me);
  if (ibv_query_gid(ctx, 1, 0, &me.gid)) return fail("ibv_query_gid");
  me.qpn = qp->qp_num;
  me.addr = (uintptr_t)buf;
  me.rkey = mr->rkey;
  rnic_oob_put(server ? "exec.server" : "exec.client", &me, sizeof me);
  rnic_oob_get(server ? "exec.client" : "exec.server", &peer, sizeof peer);

  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    return fail("INIT");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = peer.qpn;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer.gid;
  a.ah_attr.port_num = 1;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN))
    return fail("RTR");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) return fail("RTS");
  struct ibv_qp_init_attr qi;
  if (ibv_query_qp(qp, &a, IBV_QP_STATE, &qi) || a.qp_state != IBV_QPS_RTS || qi.send_cq != cq)
    return fail("ibv_query_qp");

  struct ibv_wc wc;
  struct ibv_sge sge = {(uintptr_t)&count, sizeof count, cmr->lkey};
  if (server) {
    struct ibv_recv_wr rwr, *bad_r = NULL;
    memset(&rwr, 0, sizeof rwr);
    rwr.sg_list = &sge;
    rwr.num_sge = 1;
    if (ibv_post_recv(qp, &rwr, &bad_r)) return fail("ibv_post_recv");
    int ep = -1;
    if (events) {
      /* Made non-blocking, the channel has no event yet: EAGAIN at once, and a poll says so. */
      if (ibv_req_notify_cq(cq, 0)) return fail("ibv_req_notify_cq");
      if (fcntl(g_chan->fd, F_SETFL, fcntl(g_chan->fd, F_GETFL) | O_NONBLOCK)) return fail("fcntl");
      struct ibv_cq* ecq = NULL;
      void* ectx = NULL;
      const int early = ibv_get_cq_event(g_chan, &ecq, &ectx);
      const int eerr = errno;
      struct pollfd p = {g_chan->fd, POLLIN, 0};
      const int none = poll(&p, 1, 0);
      ep = epoll_create1(0);
      struct epoll_event ev = {0};
      ev.events = EPOLLIN;
      ev.data.u32 = 7;
      if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, g_chan->fd, &ev)) return fail("epoll (channel)");
      /* The context's async events, the same way (none has come). */
      if (fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK))
        return fail("fcntl (async_fd)");
      struct ibv_async_event ae;
      const int aearly = ibv_get_async_event(ctx, &ae);
      const int aerr = errno;
      struct pollfd ap = {ctx->async_fd, POLLIN, 0};
      const int anone = poll(&ap, 1, 0);
      printf(
          "exec_verbs: events: ibv_get_cq_event %d (%s) before any, poll %d; async: %d (%s), "
          "poll %d\n",
          early, strerror(eerr), none, aearly, strerror(aerr), anone);
    }
    const char ready = 1;
    rnic_oob_put("exec.ready", &ready, 1);
    if (events) {
      /* The Send's completion: the channel's descriptor is readable, its event the CQ's. */
      const uint64_t t0 = now_ns();
      struct epoll_event got;
      const int n = epoll_wait(ep, &got, 1, -1);
      const uint64_t t1 = now_ns();
      struct ibv_cq* ecq = NULL;
      void* ectx = NULL;
      if (ibv_get_cq_event(g_chan, &ecq, &ectx)) return fail("ibv_get_cq_event");
      ibv_ack_cq_events(ecq, 1);
      printf("exec_verbs: events: epoll %d (data %u) after %llu us, the event's CQ %s\n", n,
             n == 1 ? got.data.u32 : 0, (unsigned long long)((t1 - t0) / 1000),
             ecq == cq ? "ours" : "another");
      close(ep);
    }
    if (wait_one(cq, &wc) != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) return fail("receive");
    for (int b = 0; b < blocks; ++b)
      for (size_t i = 0; i < kBlock; ++i) {
        const char want = i == 0 ? (char)b : 'w';
        if (buf[(size_t)b * kBlock + i] != want) {
          fprintf(stderr, "exec_verbs: block %d byte %zu is %d, not %d\n", b, i,
                  buf[(size_t)b * kBlock + i], want);
          return 1;
        }
      }
    printf("exec_verbs: count %u, %d blocks of %d bytes arrived intact\n", count, blocks, kBlock);
    if (g_bad) {
      /* The client's next Write names a wrong STag: this QP's access error comes as an async
       * event, and the context's descriptor polls readable for it. */
      const uint64_t t0 = now_ns();
      struct pollfd ap = {ctx->async_fd, POLLIN, 0};
      const int n = poll(&ap, 1, 10);
      const uint64_t t1 = now_ns();
      struct ibv_async_event ae;
      if (ibv_get_async_event(ctx, &ae)) return fail("ibv_get_async_event");
      const int ours = ae.element.qp == qp;
      const char* what = ibv_event_type_str(ae.event_type);
      ibv_ack_async_event(&ae);
      struct ibv_async_event more;
      const int next = ibv_get_async_event(ctx, &more); /* (non-blocking: none left) */
      const int nerr = errno;
      printf("exec_verbs: async: poll %d (0x%x) after %llu us: %s on %s QP; then %d (%s)\n", n,
             ap.revents, (unsigned long long)((t1 - t0) / 1000), what, ours ? "our" : "another",
             next, strerror(nerr));
    }
  } else {
    char ready = 0;
    rnic_oob_get("exec.ready", &ready, 1);
    struct ibv_send_wr* bad = NULL;
    if (qx) ibv_wr_start(qx);
    for (int b = 0; b < blocks && qx; ++b) {
      qx->wr_id = (uint64_t)b;
      qx->wr_flags = b + 1 == blocks ? IBV_SEND_SIGNALED : 0;
      ibv_wr_rdma_write(qx, peer.rkey, peer.addr + (uint64_t)b * kBlock);
      ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)(buf + (size_t)b * kBlock), kBlock);
    }
    if (qx && ibv_wr_complete(qx)) return fail("ibv_wr_complete (writes)");
    for (int b = 0; b < blocks && !qx; ++b) {
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
    w.send_flags = IBV_SEND_SIGNALED;
    if (qx) {
      ibv_wr_start(qx);
      qx->wr_id = 0;
      qx->wr_flags = IBV_SEND_SIGNALED;
      ibv_wr_send(qx);
      ibv_wr_set_sge(qx, cmr->lkey, (uintptr_t)&count, sizeof count);
      if (ibv_wr_complete(qx)) return fail("ibv_wr_complete (send)");
    } else if (ibv_post_send(qp, &w, &bad)) {
      return fail("ibv_post_send (send)");
    }
    if (wait_one(cq, &wc) != IBV_WC_SUCCESS) return fail("send completion");
    printf("exec_verbs: wrote %d blocks and sent the count%s\n", blocks,
           qx ? " (extended verbs)" : "");
    if (g_bad) {
      struct ibv_sge s = {(uintptr_t)buf, kBlock, mr->lkey};
      memset(&w, 0, sizeof w);
      w.sg_list = &s;
      w.num_sge = 1;
      w.opcode = IBV_WR_RDMA_WRITE;
      w.send_flags = IBV_SEND_SIGNALED;
      w.wr.rdma.remote_addr = peer.addr;
      w.wr.rdma.rkey = peer.rkey ^ 0x100; /* another STag */
      if (ibv_post_send(qp, &w, &bad)) return fail("ibv_post_send (bad write)");
      const int st = wait_one(cq, &wc);
      printf("exec_verbs: a Write to a wrong STag: %s\n",
             ibv_wc_status_str((enum ibv_wc_status)st));
    }
  }
  if (ibv_destroy_qp(qp) || ibv_dereg_mr(mr) || ibv_dereg_mr(cmr) || ibv_destroy_cq(cq) ||
      ibv_dealloc_pd(pd) || ibv_close_device(ctx))
    return fail("teardown");
  free(raw);
  return 0;
}

static volatile sig_atomic_t g_rang;
static void on_alarm(int sig) {
  (void)sig;
  g_rang = 1;
}
static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
static int alarms(void) {
  signal(SIGALRM, on_alarm);
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = 2000;
  const uint64_t t0 = now_ns();
  if (setitimer(ITIMER_REAL, &it, NULL)) return fail("setitimer");
  uint64_t reads = 0;
  while (!g_rang) {
    now_ns();
    ++reads;
  }
  const uint64_t loop = now_ns() - t0;
  g_rang = 0;
  it.it_value.tv_usec = 5000;
  const uint64_t t1 = now_ns();
  setitimer(ITIMER_REAL, &it, NULL);
  const int r = usleep(1000000);
  const int e = errno;
  const uint64_t slept = now_ns() - t1;
  const int rang = g_rang;
  /* A poll with no timeout on a listener nothing connects to: a 3 ms timer ends it (EINTR). */
  const int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(19992);
  if (l < 0 || bind(l, (struct sockaddr*)&a, sizeof a) || listen(l, 1)) return fail("listen");
  g_rang = 0;
  it.it_value.tv_usec = 3000;
  const uint64_t t2 = now_ns();
  setitimer(ITIMER_REAL, &it, NULL);
  struct pollfd p = {l, POLLIN, 0};
  const int pr = poll(&p, 1, -1);
  const int pe = errno;
  const uint64_t t3 = now_ns();
  const int prang = g_rang;
  /* ppoll with SIGALRM blocked for its wait: a 0.5 ms timer does not end its 1 ms timeout; the
   * signal comes when ppoll has put the mask back. */
  g_rang = 0;
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGALRM);
  it.it_value.tv_usec = 500;
  const struct timespec ms = {0, 1000000};
  setitimer(ITIMER_REAL, &it, NULL);
  const int qr = ppoll(&p, 1, &ms, &block);
  const uint64_t t4 = now_ns();
  const int qrang = g_rang;
  close(l);
  /* pause until a 4 ms timer; then, SIGALRM blocked, sigsuspend with it unblocked (1 ms). */
  g_rang = 0;
  it.it_value.tv_usec = 4000;
  setitimer(ITIMER_REAL, &it, NULL);
  const int pa = pause();
  const int pae = errno;
  const uint64_t t5 = now_ns();
  const int parang = g_rang;
  g_rang = 0;
  sigset_t old, none;
  sigemptyset(&none);
  sigprocmask(SIG_BLOCK, &block, &old);
  it.it_value.tv_usec = 1000;
  setitimer(ITIMER_REAL, &it, NULL);
  const int su = sigsuspend(&none);
  const uint64_t t6 = now_ns();
  sigprocmask(SIG_SETMASK, &old, NULL);
  printf(
      "exec_verbs: the timer ended the loop after %llu us (%llu reads); usleep returned %d "
      "(%s) after %llu us, alarm %s; poll returned %d (%s) after %llu us, alarm %s; ppoll with "
      "SIGALRM masked returned %d after %llu us, alarm %s; pause %d (%s) after %llu us, alarm %s; "
      "sigsuspend %d after %llu us, alarm %s\n",
      (unsigned long long)(loop / 1000), (unsigned long long)reads, r, r ? strerror(e) : "no error",
      (unsigned long long)(slept / 1000), rang ? "rang" : "silent", pr, strerror(pe),
      (unsigned long long)((t3 - t2) / 1000), prang ? "rang" : "silent", qr,
      (unsigned long long)((t4 - t3) / 1000), qrang ? "rang" : "silent", pa, strerror(pae),
      (unsigned long long)((t5 - t4) / 1000), parang ? "rang" : "silent", su,
      (unsigned long long)((t6 - t5) / 1000), g_rang ? "rang" : "silent");
  return 0;
}

/* A TCP socket, and in *res the address to bind it to (server: any of this host's) or to
 * connect it to (host's) at port; -1 (said on stderr) when either fails. */
static int tcp_socket(int server, const char* host, const char* port, struct addrinfo** res) {
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = server ? AI_PASSIVE : 0;
  if (getaddrinfo(server ? NULL : host, port, &hints, res)) {
    fail("getaddrinfo");
    return -1;
  }
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) fail("socket");
  return s;
}

static int polls(int server, const char* host) {
  struct addrinfo* res = NULL;
  const int s = tcp_socket(server, host, "19999", &res);
  if (s < 0) return 1;
  char b[8] = {0};
  if (!server) {
    if (connect(s, res->ai_addr, res->ai_addrlen)) return fail("connect");
    usleep(3000);
    struct iovec xv[2] = {{"x", 1}, {"", 0}}; /* gathered: the stream's one byte */
    if (writev(s, xv, 2) != 1) return fail("writev");
    usleep(2000);
    if (sendto(s, "y", 1, 0, NULL, 0) != 1) return fail("sendto");
    if (read(s, b, 1) != 0) return fail("end of stream");
    close(s);
    printf("exec_verbs: poll client done\n");
    return 0;
  }
  if (bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1)) return fail("bind / listen");
  const uint64_t t0 = now_ns();
  struct pollfd p = {s, POLLIN, 0};
  if (poll(&p, 1, -1) != 1 || !(p.revents & POLLIN)) return fail("poll (listener)");
  const int c = accept(s, NULL, NULL);
  if (c < 0) return fail("accept");
  const uint64_t t1 = now_ns();
  struct pollfd q = {c, POLLIN, 0};
  const int none = poll(&q, 1, 1);
  const uint64_t t2 = now_ns();
  const int one = poll(&q, 1, -1);
  const uint64_t t3 = now_ns();
  struct iovec bv = {b, 1};
  if (readv(c, &bv, 1) != 1) return fail("readv");
  /* From here on a copy of the descriptor, the first one closed: the socket stays open. */
  const int d = dup(c);
  if (d < 0 || close(c)) return fail("dup / close");
  fd_set rd;
  FD_ZERO(&rd);
  FD_SET(d, &rd);
  const int sel = select(d + 1, &rd, NULL, NULL, NULL);
  const uint64_t t4 = now_ns();
  struct sockaddr_in from;
  socklen_t flen = sizeof from, plen = sizeof(struct sockaddr_in);
  if (recvfrom(d, b + 1, 1, 0, (struct sockaddr*)&from, &flen) != 1) return fail("recvfrom");
  struct sockaddr_in peer;
  int soerr = -1;
  socklen_t elen = sizeof soerr;
  if (getpeername(d, (struct sockaddr*)&peer, &plen) ||
      getsockopt(d, SOL_SOCKET, SO_ERROR, &soerr, &elen))
    return fail("getpeername / getsockopt");
  /* Timeouts finer than a millisecond: nothing more comes before the server closes. */
  const struct timespec half = {0, 500000}, quarter = {0, 250000};
  struct pollfd r = {d, POLLIN, 0};
  const int pp = ppoll(&r, 1, &half, NULL);
  const uint64_t t5 = now_ns();
  FD_ZERO(&rd);
  FD_SET(d, &rd);
  const int ps = pselect(d + 1, &rd, NULL, NULL, &quarter, NULL);
  const uint64_t t6 = now_ns();
  /* Non-blocking (O_NONBLOCK by fcntl): a read with nothing there answers at once. */
  if (fcntl(d, F_SETFL, fcntl(d, F_GETFL) | O_NONBLOCK)) return fail("fcntl");
  const int nb = (fcntl(d, F_GETFL) & O_NONBLOCK) != 0;
  const ssize_t rn = read(d, b + 2, 1);
  const int rerr = errno;
  const uint64_t t7 = now_ns();
  /* A listener made non-blocking (SOCK_NONBLOCK) with no connection waiting. */
  const int l2 = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  struct sockaddr_in a2;
  memset(&a2, 0, sizeof a2);
  a2.sin_family = AF_INET;
  a2.sin_port = htons(19998);
  if (l2 < 0 || bind(l2, (struct sockaddr*)&a2, sizeof a2) || listen(l2, 1))
    return fail("listen (non-blocking)");
  const int an = accept(l2, NULL, NULL);
  const int aerr = errno;
  const uint64_t t8 = now_ns();
  /* And one made non-blocking by ioctl's FIONBIO. */
  const int l3 = socket(AF_INET, SOCK_STREAM, 0);
  const int yes = 1;
  a2.sin_port = htons(19997);
  if (l3 < 0 || bind(l3, (struct sockaddr*)&a2, sizeof a2) || listen(l3, 1) ||
      ioctl(l3, FIONBIO, &yes))
    return fail("listen (FIONBIO)");
  const int an3 = accept(l3, NULL, NULL);
  const int aerr3 = errno;
  const uint64_t t9 = now_ns();
  close(l3);
  close(l2);
  close(d);
  close(s);
  printf(
      "exec_verbs: listener ready after %llu us; poll %d after %llu us (1 ms timeout), poll %d "
      "after %llu us more, select %d after %llu us more, ppoll %d after %llu ns more (0.5 ms "
      "timeout), pselect %d after %llu ns more (0.25 ms timeout); non-blocking %d, read %d (%s) "
      "after %llu ns more; a non-blocking listener's accept %d (%s) after %llu ns more, by "
      "FIONBIO %d (%s) after %llu ns more; from port %u, peer port %u, SO_ERROR %d: '%s'\n",
      (unsigned long long)((t1 - t0) / 1000), none, (unsigned long long)((t2 - t1) / 1000), one,
      (unsigned long long)((t3 - t2) / 1000), sel, (unsigned long long)((t4 - t3) / 1000), pp,
      (unsigned long long)(t5 - t4), ps, (unsigned long long)(t6 - t5), nb, (int)rn, strerror(rerr),
      (unsigned long long)(t7 - t6), an, strerror(aerr), (unsigned long long)(t8 - t7), an3,
      strerror(aerr3), (unsigned long long)(t9 - t8), ntohs(from.sin_port), ntohs(peer.sin_port),
      soerr, b);
  return 0;
}

static int epolls(int server, const char* host) {
  if (!server) return polls(0, host); /* the same client */
  struct addrinfo* res = NULL;
  const int s = tcp_socket(1, NULL, "19999", &res);
  if (s < 0 || bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1)) return fail("listen");
  const int ep = epoll_create1(0);
  int pipefd[2];
  if (ep < 0 || pipe(pipefd)) return fail("epoll_create1 / pipe");
  struct epoll_event ev = {0}, got[4];
  ev.events = EPOLLIN;
  ev.data.u32 = 1;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev)) return fail("epoll_ctl (listener)");
  ev.data.u32 = 9;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev)) return fail("epoll_ctl (pipe)");
  const uint64_t t0 = now_ns();
  if (epoll_wait(ep, got, 4, -1) != 1 || got[0].data.u32 != 1 || !(got[0].events & EPOLLIN))
    return fail("epoll_wait (listener)");
  const int c = accept(s, NULL, NULL);
  if (c < 0) return fail("accept");
  const uint64_t t1 = now_ns();
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.u32 = 2;
  if (epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL) || epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev))
    return fail("epoll_ctl (connection)");
  const int dup = epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev) ? errno : 0;
  const int absent = epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL) ? errno : 0;
  const int none = epoll_wait(ep, got, 4, 1);
  const uint64_t t2 = now_ns();
  const int one = epoll_wait(ep, got, 4, -1);
  const unsigned data = one == 1 ? got[0].data.u32 : 0;
  const uint64_t t3 = now_ns();
  char b[8] = {0};
  if (read(c, b, 1) != 1) return fail("read");
  const int quiet = epoll_wait(ep, got, 4, 3); /* the one-shot fired: 'y' at 2 ms is not seen */
  const uint64_t t4 = now_ns();
  if (epoll_ctl(ep, EPOLL_CTL_MOD, c, &ev)) return fail("epoll_ctl (re-arm)");
  const int again = epoll_wait(ep, got, 4, -1);
  const uint64_t t5 = now_ns();
  if (read(c, b + 1, 1) != 1) return fail("read");
  if (write(pipefd[1], "p", 1) != 1) return fail("write (pipe)");
  const int piped = epoll_wait(ep, got, 4, -1);
  const unsigned pdata = piped == 1 ? got[0].data.u32 : 0;
  const uint64_t t6 = now_ns();
  char pc;
  if (read(pipefd[0], &pc, 1) != 1) return fail("read (pipe)");
  const struct timespec fine = {0, 1500000}; /* finer than epoll_wait's milliseconds */
  const int timed = epoll_pwait2(ep, got, 4, &fine, NULL);
  const uint64_t t7 = now_ns();
  close(c);
  close(s);
  close(ep);
  printf(
      "exec_verbs: epoll: listener after %llu us; none %d after %llu us (1 ms timeout); one-shot "
      "%d (data %u) after %llu us more; %d after %llu us more (3 ms timeout, not re-armed); "
      "re-armed %d after %llu us more; pipe %d (data %u) after %llu us more; epoll_pwait2 %d "
      "after %llu ns more (1.5 ms timeout); a second add: %s; a delete of one not there: %s: "
      "'%s'\n",
      (unsigned long long)((t1 - t0) / 1000), none, (unsigned long long)((t2 - t1) / 1000), one,
      data, (unsigned long long)((t3 - t2) / 1000), quiet, (unsigned long long)((t4 - t3) / 1000),
      again, (unsigned long long)((t5 - t4) / 1000), piped, pdata,
      (unsigned long long)((t6 - t5) / 1000), timed, (unsigned long long)(t7 - t6), strerror(dup),
      strerror(absent), b);
  return 0;
}

static int g_forever_pipe[2];

static void* late_writer(void* arg) {
  (void)arg;
  usleep(300000);
  if (write(g_forever_pipe[1], "p", 1) != 1) fprintf(stderr, "exec_verbs: write (pipe) failed\n");
  return NULL;
}

static int forever(int server, const char* how, const char* host) {
  struct addrinfo* res = NULL;
  const int s = tcp_socket(server, host, "19996", &res);
  if (s < 0) return 1;
  if (!server) {
    if (connect(s, res->ai_addr, res->ai_addrlen)) return fail("connect");
    close(s);
    printf("exec_verbs: forever client done\n");
    return 0;
  }
  if (bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1)) return fail("bind / listen");
  const int ep = epoll_create1(0);
  if (ep < 0 || pipe(g_forever_pipe)) return fail("epoll_create1 / pipe");
  struct epoll_event ev = {0}, got[2];
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.u32 = 1;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev)) return fail("epoll_ctl (listener)");
  ev.events = EPOLLIN;
  ev.data.u32 = 9;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, g_forever_pipe[0], &ev)) return fail("epoll_ctl (pipe)");
  if (epoll_wait(ep, got, 2, -1) != 1 || got[0].data.u32 != 1) return fail("epoll_wait (listener)");
  if (accept(s, NULL, NULL) < 0) return fail("accept");
  const uint64_t t0 = now_ns();
  printf("exec_verbs: forever: connected, waiting (%s)\n", how);
  fflush(stdout);
  if (!strcmp(how, "poll")) {
    struct pollfd p[2] = {{s, POLLIN, 0}, {g_forever_pipe[0], POLLIN, 0}};
    poll(p, 2, -1);
    return fail("poll returned");
  }
  pthread_t t;
  if (!strcmp(how, "late") && pthread_create(&t, NULL, late_writer, NULL))
    return fail("pthread_create");
  const int n = epoll_wait(ep, got, 2, -1);
  if (strcmp(how, "late")) return fail("epoll_wait returned");
  pthread_join(t, NULL);
  printf("exec_verbs: forever: epoll %d (data %u) after %llu us\n", n, n == 1 ? got[0].data.u32 : 0,
         (unsigned long long)((now_ns() - t0) / 1000));
  return 0;
}

static const char* name_of(int fd, char* out) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  memset(&a, 0xff, sizeof a);
  if (getsockname(fd, (struct sockaddr*)&a, &len) || len != sizeof a || a.sin_family != AF_INET)
    return "failed";
  const uint32_t ip = ntohl(a.sin_addr.s_addr);
  sprintf(out, "%u.%u.%u.%u:%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255,
          ntohs(a.sin_port));
  return out;
}

static volatile sig_atomic_t g_piped;
static void on_pipe(int sig) {
  (void)sig;
  g_piped = 1;
}

/* shutdown-server's second listener: an accept that another thread's shutdown ends. */
struct Acceptor {
  int fd, err;
  uint64_t at;
};
static void* blocked_accept(void* arg) {
  struct Acceptor* a = arg;
  const int c = accept(a->fd, NULL, NULL);
  a->err = c < 0 ? errno : 0;
  a->at = now_ns();
  return NULL;
}

/* A listener shut down while a thread waits in accept (Linux's: SHUT_WR does nothing, SHUT_RDWR
 * stops it listening and the accept answers EINVAL); then poll and accept on it. */
static int listener_shutdown(const struct addrinfo* res, char* out) {
  const int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memcpy(&a, res->ai_addr, sizeof a);
  a.sin_port = htons(19992);
  if (l < 0 || bind(l, (struct sockaddr*)&a, sizeof a) || listen(l, 1))
    return fail("second listener");
  struct Acceptor acc = {l, 0, 0};
  pthread_t t;
  const uint64_t t0 = now_ns();
  if (pthread_create(&t, NULL, blocked_accept, &acc)) return fail("pthread_create");
  usleep(100);
  const int wr = shutdown(l, SHUT_WR) ? errno : 0;
  const int rd = shutdown(l, SHUT_RDWR) ? errno : 0;
  pthread_join(t, NULL);
  struct pollfd p = {l, POLLIN, 0};
  const int n = poll(&p, 1, 0);
  const int again = accept(l, NULL, NULL) < 0 ? errno : 0;
  close(l);
  sprintf(out,
          "listener: SHUT_WR %s, SHUT_RDWR %s after %llu us, the waiting accept %s %llu us "
          "after, poll %d 0x%x, accept %s",
          strerror(wr), strerror(rd), (unsigned long long)((now_ns() - t0) / 1000),
          strerror(acc.err), (unsigned long long)((acc.at - t0) / 1000), n, p.revents,
          strerror(again));
  return 0;
}

static int shutdowns(int server, const char* host) {
  struct addrinfo* res = NULL;
  const int s = tcp_socket(server, host, "19995", &res);
  if (s < 0) return 1;
  char n0[32], n1[32], n2[32];
  name_of(s, n0);
  if (server) {
    if (bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1)) return fail("bind / listen");
    name_of(s, n1);
    const int c = accept(s, NULL, NULL);
    if (c < 0) return fail("accept");
    name_of(c, n2);
    const uint64_t t0 = now_ns();
    char pb[2] = {0}, b[8] = {0};
    const ssize_t pk = recv(c, pb, 1, MSG_PEEK); /* the first byte, left in the stream */
    const uint64_t t1 = now_ns();
    const ssize_t wa = recv(c, b, 3, MSG_WAITALL); /* all 3, which come 100 us apart */
    const uint64_t t2 = now_ns();
    const ssize_t r = read(c, b + 3, 4);
    close(c);
    close(s);
    char lis[256];
    if (listener_shutdown(res, lis)) return 1;
    printf(
        "exec_verbs: shutdown server: unbound %s, listener %s, connection %s; peek %d '%s' "
        "after %llu us, waitall %d '%s' after %llu us more, then %d; %s\n",
        n0, n1, n2, (int)pk, pb, (unsigned long long)((t1 - t0) / 1000), (int)wa, b,
        (unsigned long long)((t2 - t1) / 1000), (int)r, lis);
    return 0;
  }
  const int idle = socket(AF_INET, SOCK_STREAM, 0);
  const int notconn = shutdown(idle, SHUT_WR) ? errno : 0;
  close(idle);
  if (connect(s, res->ai_addr, res->ai_addrlen)) return fail("connect");
  name_of(s, n1);
  const int badhow = shutdown(s, 7) ? errno : 0;
  /* The read side shut: a read answers 0 at once (the server writes nothing, and closes only
   * once it sees this end's end of stream). */
  const uint64_t t0 = now_ns();
  if (shutdown(s, SHUT_RD)) return fail("shutdown (read)");
  char b[4];
  const ssize_t rd = read(s, b, sizeof b);
  const uint64_t t1 = now_ns();
  if (write(s, "a", 1) != 1 || usleep(100) || write(s, "bc", 2) != 2) return fail("write");
  if (shutdown(s, SHUT_WR)) return fail("shutdown (write)");
  const ssize_t w1 = send(s, "d", 1, MSG_NOSIGNAL);
  const int e1 = errno;
  signal(SIGPIPE, on_pipe);
  const ssize_t w2 = write(s, "d", 1);
  const int e2 = errno;
  close(s);
  printf(
      "exec_verbs: shutdown client: unbound %s, connected %s; SHUT_RD: read %d after %llu ns; "
      "after SHUT_WR: send %d (%s), write %d (%s, SIGPIPE %d); unconnected: %s; how 7: %s\n",
      n0, n1, (int)rd, (unsigned long long)(t1 - t0), (int)w1, strerror(e1), (int)w2, strerror(e2),
      (int)g_piped, strerror(notconn), strerror(badhow));
  return 0;
}

/* reset-server / reset-client: a listener closed with a connection no accept took resets it:
   the client's poll sees the error, its recv fails with ECONNRESET once and then reads the end,
   its send fails with EPIPE. */
static int resets(int server, const char* host) {
  struct addrinfo* res = NULL;
  const int s = tcp_socket(server, host, "19992", &res);
  if (s < 0) return 1;
  if (server) {
    if (bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1)) return fail("bind / listen");
    usleep(100000); /* the client has connected by then */
    close(s);
    printf("exec_verbs: reset server: closed the listener\n");
    return 0;
  }
  if (connect(s, res->ai_addr, res->ai_addrlen)) return fail("connect");
  const uint64_t t0 = now_ns();
  struct pollfd p = {s, POLLIN, 0};
  const int p1 = poll(&p, 1, -1);
  const uint64_t t1 = now_ns();
  const short rev1 = p.revents;
  char b[4];
  const ssize_t r1 = recv(s, b, sizeof b, 0);
  const int e1 = errno;
  const ssize_t r2 = recv(s, b, sizeof b, 0);
  const ssize_t w = send(s, "x", 1, MSG_NOSIGNAL);
  const int e3 = errno;
  int err = -1;
  socklen_t el = sizeof err;
  getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
  p.events = POLLIN | POLLOUT;
  p.revents = 0;
  const int p2 = poll(&p, 1, 0);
  close(s);
  printf(
      "exec_verbs: reset client: poll %d 0x%x after %llu us; recv %d (%s), then %d; send %d (%s); "
      "SO_ERROR %d; poll %d 0x%x\n",
      p1, (unsigned)rev1, (unsigned long long)((t1 - t0) / 1000), (int)r1, strerror(e1), (int)r2,
      (int)w, strerror(e3), err, p2, (unsigned)p.revents);
  return 0;
}

/* udp-server / udp-client: datagrams on the management network: a ping and its pong, a
   datagram truncated (MSG_TRUNC), a connected socket's send, and the kernel's errors. */
static int udps(int server, const char* host) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = server ? AI_PASSIVE : 0;
  if (getaddrinfo(server ? NULL : host, "19990", &hints, &res)) return fail("getaddrinfo");
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  if (s < 0) return fail("socket");
  struct sockaddr_in from;
  socklen_t flen = sizeof from;
  char b[16] = {0};
  if (server) {
    if (bind(s, res->ai_addr, res->ai_addrlen)) return fail("bind");
    const ssize_t n = recvfrom(s, b, sizeof b, 0, (struct sockaddr*)&from, &flen);
    if (n != 4 || sendto(s, "pong", 4, 0, (struct sockaddr*)&from, flen) != 4)
      return fail("recvfrom / sendto");
    char two[2];
    const ssize_t t = recv(s, two, sizeof two, MSG_TRUNC);
    struct msghdr mh = {0};
    struct iovec iov = {b, sizeof b};
    struct sockaddr_in src;
    mh.msg_name = &src;
    mh.msg_namelen = sizeof src;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    memset(b, 0, sizeof b);
    const ssize_t m = recvmsg(s, &mh, 0);
    struct pollfd p = {s, POLLIN | POLLOUT, 0};
    const int pr = poll(&p, 1, 0);
    close(s);
    printf(
        "exec_verbs: udp server: ping from %s:%u; truncated %d '%.2s'; recvmsg %d '%s' from port "
        "%u (same %d); poll %d 0x%x\n",
        inet_ntoa(from.sin_addr), ntohs(from.sin_port), (int)t, two, (int)m, b, ntohs(src.sin_port),
        src.sin_port == from.sin_port, pr, (unsigned)p.revents);
    return 0;
  }
  int type = 0;
  socklen_t tl = sizeof type;
  getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &tl);
  const uint64_t t0 = now_ns();
  if (sendto(s, "ping", 4, 0, res->ai_addr, res->ai_addrlen) != 4) return fail("sendto");
  const ssize_t n = recvfrom(s, b, sizeof b, 0, (struct sockaddr*)&from, &flen);
  const uint64_t t1 = now_ns();
  char me[32];
  name_of(s, me);
  if (connect(s, res->ai_addr, res->ai_addrlen)) return fail("connect");
  const int sent = (int)send(s, "hello", 5, 0) + (int)send(s, "again", 5, 0);
  struct sockaddr_in bc = *(struct sockaddr_in*)res->ai_addr;
  bc.sin_addr.s_addr = htonl(INADDR_BROADCAST);
  const int b1 = (int)sendto(s, "x", 1, 0, (struct sockaddr*)&bc, sizeof bc);
  const int e1 = errno;
  static char big[70000];
  const int b2 = (int)send(s, big, sizeof big, 0);
  const int e2 = errno;
  close(s);
  printf(
      "exec_verbs: udp client: SO_TYPE %d; pong %d '%s' from %s:%u after %llu us; bound %s; "
      "connected, sent %d; broadcast %d (%s); 70000 bytes %d (%s)\n",
      type, (int)n, b, inet_ntoa(from.sin_addr), ntohs(from.sin_port),
      (unsigned long long)((t1 - t0) / 1000), me, sent, b1, strerror(e1), b2, strerror(e2));
  return 0;
}

static int nbconnects(int server, const char* host) {
  struct addrinfo hints, *res = NULL, *none = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = server ? AI_PASSIVE : 0;
  if (getaddrinfo(server ? NULL : host, "19994", &hints, &res) ||
      getaddrinfo(server ? NULL : host, "19993", &hints, &none))
    return fail("getaddrinfo");
  if (server) {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1)) return fail("listen");
    const int c = accept(s, NULL, NULL);
    char b[2] = {0};
    if (c < 0 || read(c, b, 1) != 1) return fail("accept / read");
    close(c);
    close(s);
    printf("exec_verbs: nbconnect server: read '%s'\n", b);
    return 0;
  }
  /* Refused: nothing listens on 19993. */
  const int r = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  const uint64_t t0 = now_ns();
  const int c1 = connect(r, none->ai_addr, none->ai_addrlen);
  const int e1 = errno;
  struct pollfd p = {r, POLLOUT, 0};
  const int p1 = poll(&p, 1, -1);
  const uint64_t t1 = now_ns();
  const short rev1 = p.revents;
  int err = -1, err2 = -1;
  socklen_t el = sizeof err;
  getsockopt(r, SOL_SOCKET, SO_ERROR, &err, &el);
  getsockopt(r, SOL_SOCKET, SO_ERROR, &err2, &el);
  close(r);
  /* Connected: the server listens on 19994. */
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0 || fcntl(s, F_SETFL, O_NONBLOCK)) return fail("socket / fcntl");
  const uint64_t t2 = now_ns();
  const int c2 = connect(s, res->ai_addr, res->ai_addrlen);
  const int e2 = errno;
  const int again = connect(s, res->ai_addr, res->ai_addrlen) ? errno : 0;
  const ssize_t early = send(s, "z", 1, 0);
  const int e3 = errno;
  struct sockaddr_in peer;
  socklen_t plen = sizeof peer;
  const int gp = getpeername(s, (struct sockaddr*)&peer, &plen) ? errno : 0;
  p.fd = s;
  p.revents = 0;
  const int p2 = poll(&p, 1, -1);
  const uint64_t t3 = now_ns();
  const short rev2 = p.revents;
  int err3 = -1;
  getsockopt(s, SOL_SOCKET, SO_ERROR, &err3, &el);
  plen = sizeof peer;
  if (getpeername(s, (struct sockaddr*)&peer, &plen)) return fail("getpeername");
  const int isconn = connect(s, res->ai_addr, res->ai_addrlen) ? errno : 0;
  if (write(s, "z", 1) != 1) return fail("write");
  close(s);
  const uint32_t ip = ntohl(peer.sin_addr.s_addr);
  printf(
      "exec_verbs: nbconnect client: refused: connect %d (%s), poll %d (%s%s%s) after %llu us, "
      "SO_ERROR %s, then %d; connected: connect %d (%s), again: %s, send %d (%s), getpeername: "
      "%s; poll %d (%s) after %llu us, SO_ERROR %d, peer %u.%u.%u.%u:%u, connect again: %s\n",
      c1, strerror(e1), p1, rev1 & POLLOUT ? "POLLOUT " : "", rev1 & POLLERR ? "POLLERR " : "",
      rev1 & POLLHUP ? "POLLHUP" : "", (unsigned long long)((t1 - t0) / 1000), strerror(err), err2,
      c2, strerror(e2), strerror(again), (int)early, strerror(e3), strerror(gp), p2,
      rev2 == POLLOUT ? "POLLOUT" : "other", (unsigned long long)((t3 - t2) / 1000), err3, ip >> 24,
      (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, ntohs(peer.sin_port), strerror(isconn));
  return 0;
}

static int epoll_copies(int server, const char* host) {
  struct addrinfo* res = NULL;
  const int s = tcp_socket(server, host, "19991", &res);
  if (s < 0) return 1;
  char b[2] = {0};
  if (!server) {
    if (connect(s, res->ai_addr, res->ai_addrlen)) return fail("connect");
    usleep(1000);
    if (write(s, "q", 1) != 1) return fail("write");
    if (read(s, b, 1) != 0) return fail("end of stream");
    close(s);
    return 0;
  }
  if (bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1)) return fail("bind / listen");
  const int c = accept(s, NULL, NULL);
  const int ep = epoll_create1(0);
  if (c < 0 || ep < 0) return fail("accept / epoll_create1");
  struct epoll_event ev = {0}, got[2];
  ev.events = EPOLLIN;
  ev.data.u32 = 5;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev)) return fail("epoll_ctl");
  const int d = dup(c);
  const int ep2 = dup(ep);
  if (d < 0 || ep2 < 0 || close(c) || close(ep)) return fail("dup / close");
  const uint64_t t0 = now_ns();
  const int n = epoll_wait(ep2, got, 2, -1);
  const uint64_t t1 = now_ns();
  const int del = epoll_ctl(ep2, EPOLL_CTL_DEL, c, NULL) ? errno : 0;
  if (read(d, b, 1) != 1) return fail("read");
  close(d);
  close(ep2);
  close(s);
  printf(
      "exec_verbs: epoll copies: %d (data %u) after %llu us, '%s'; a delete by the closed "
      "descriptor: %s\n",
      n, n == 1 ? got[0].data.u32 : 0, (unsigned long long)((t1 - t0) / 1000), b, strerror(del));
  return 0;
}

static int cm_event(struct rdma_event_channel* ch, enum rdma_cm_event_type want) {
  struct rdma_cm_event* e = NULL;
  if (rdma_get_cm_event(ch, &e)) return fail("rdma_get_cm_event");
  const enum rdma_cm_event_type got = e->event;
  rdma_ack_cm_event(e);
  if (got != want) {
    fprintf(stderr, "exec_verbs: %s, not %s\n", rdma_event_str(got), rdma_event_str(want));
    return 1;
  }
  return 0;
}

static int cm_polls(int server, const char* host) {
  struct rdma_event_channel* ch = rdma_create_event_channel();
  struct rdma_cm_id* id = NULL;
  if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) return fail("rdma_create_id");
  if (server) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(19990);
    if (rdma_bind_addr(id, (struct sockaddr*)&a) || rdma_listen(id, 1)) return fail("listen");
    if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK)) return fail("fcntl");
    struct rdma_cm_event* e = NULL;
    const int early = rdma_get_cm_event(ch, &e);
    const int eerr = errno;
    const uint64_t t0 = now_ns();
    struct pollfd p = {ch->fd, POLLIN, 0};
    const int n = poll(&p, 1, -1);
    const uint64_t t1 = now_ns();
    if (rdma_get_cm_event(ch, &e)) return fail("rdma_get_cm_event");
    const enum rdma_cm_event_type type = e->event;
    if (type == RDMA_CM_EVENT_CONNECT_REQUEST) rdma_reject(e->id, NULL, 0);
    rdma_ack_cm_event(e);
    printf("exec_verbs: cm: rdma_get_cm_event %d (%s) before any; poll %d after %llu us: %s\n",
           early, strerror(eerr), n, (unsigned long long)((t1 - t0) / 1000), rdma_event_str(type));
  } else {
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, "19990", &hints, &res)) return fail("getaddrinfo");
    if (rdma_resolve_addr(id, NULL, res->ai_addr, 1000) ||
        cm_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED) || rdma_resolve_route(id, 1000) ||
        cm_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED))
      return fail("resolve");
    struct ibv_pd* pd = ibv_alloc_pd(id->verbs);
    struct ibv_cq* cq = pd ? ibv_create_cq(id->verbs, 4, NULL, NULL, 0) : NULL;
    struct ibv_qp_init_attr qa;
    memset(&qa, 0, sizeof qa);
    qa.send_cq = qa.recv_cq = cq;
    qa.cap.max_send_wr = qa.cap.max_recv_wr = 1;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    qa.qp_type = IBV_QPT_RC;
    if (!cq || rdma_create_qp(id, pd, &qa)) return fail("rdma_create_qp");
    struct rdma_conn_param cp;
    memset(&cp, 0, sizeof cp);
    if (rdma_connect(id, &cp) || cm_event(ch, RDMA_CM_EVENT_REJECTED)) return fail("connect");
    printf("exec_verbs: cm: rejected\n");
    rdma_destroy_qp(id);
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
  }
  rdma_destroy_id(id);
  rdma_destroy_event_channel(ch);
  return 0;
}

static int kernel_waits(void) {
  int pfd[2];
  if (pipe(pfd)) return fail("pipe");
  const uint64_t t0 = now_ns();
  const int a = poll(NULL, 0, 5);
  const uint64_t t1 = now_ns();
  struct timeval tv = {0, 2500};
  const int b = select(0, NULL, NULL, NULL, &tv);
  const uint64_t t2 = now_ns();
  struct pollfd p = {pfd[0], POLLIN, 0};
  const int c = poll(&p, 1, 3);
  const uint64_t t3 = now_ns();
  const int ep = epoll_create1(0);
  struct epoll_event ev = {0}, got;
  ev.events = EPOLLIN;
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev)) return fail("epoll");
  const int d = epoll_wait(ep, &got, 1, 2);
  const uint64_t t4 = now_ns();
  if (write(pfd[1], "k", 1) != 1) return fail("write");
  const int e = poll(&p, 1, -1);
  const uint64_t t5 = now_ns();
  const struct timespec ms = {0, 1000000};
  const int f = clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL);
  const uint64_t t6 = now_ns();
  struct timespec at;
  clock_gettime(CLOCK_MONOTONIC, &at);
  at.tv_nsec += 1500000;
  if (at.tv_nsec >= 1000000000) at.tv_sec += 1, at.tv_nsec -= 1000000000;
  const int g = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
  const uint64_t t7 = now_ns();
  printf(
      "exec_verbs: kernel waits: poll(NULL, 0, 5) %d after %llu us, select's sleep %d after "
      "%llu us, a pipe's poll %d after %llu us, epoll %d after %llu us, written %d after %llu "
      "ns; clock_nanosleep %d after %llu us, to an absolute time %d after %llu us\n",
      a, (unsigned long long)((t1 - t0) / 1000), b, (unsigned long long)((t2 - t1) / 1000), c,
      (unsigned long long)((t3 - t2) / 1000), d, (unsigned long long)((t4 - t3) / 1000), e,
      (unsigned long long)(t5 - t4), f, (unsigned long long)((t6 - t5) / 1000), g,
      (unsigned long long)((t7 - t6) / 1000));
  return 0;
}

static pthread_mutex_t g_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_c = PTHREAD_COND_INITIALIZER;
static int g_flag;
static sem_t g_sem;

static void* signaller(void* arg) {
  (void)arg;
  usleep(2000);
  pthread_mutex_lock(&g_m);
  g_flag = 1;
  pthread_cond_signal(&g_c);
  pthread_mutex_unlock(&g_m);
  usleep(5500); /* (the main thread waits for the post 1.5 ms) */
  sem_post(&g_sem);
  return NULL;
}

static struct timespec in(clockid_t id, long ns) {
  struct timespec t;
  clock_gettime(id, &t);
  t.tv_nsec += ns % 1000000000;
  t.tv_sec += ns / 1000000000 + t.tv_nsec / 1000000000;
  t.tv_nsec %= 1000000000;
  return t;
}

static int timed_waits(void) {
  if (sem_init(&g_sem, 0, 0)) return fail("sem_init");
  pthread_t t;
  pthread_mutex_lock(&g_m);
  const uint64_t t0 = now_ns();
  if (pthread_create(&t, NULL, signaller, NULL)) return fail("pthread_create");
  const struct timespec second = in(CLOCK_REALTIME, 1000000000);
  int a = 0;
  while (!g_flag && a == 0) a = pthread_cond_timedwait(&g_c, &g_m, &second);
  const uint64_t t1 = now_ns();
  pthread_cond_t c2 = PTHREAD_COND_INITIALIZER, c3;
  const struct timespec three = in(CLOCK_REALTIME, 3000000);
  const int b = pthread_cond_timedwait(&c2, &g_m, &three);
  const uint64_t t2 = now_ns();
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&c3, &ca);
  const struct timespec one = in(CLOCK_MONOTONIC, 1000000);
  const int c = pthread_cond_timedwait(&c3, &g_m, &one);
  const uint64_t t3 = now_ns();
  pthread_mutex_unlock(&g_m);
  const struct timespec sec2 = in(CLOCK_REALTIME, 1000000000);
  const int d = sem_timedwait(&g_sem, &sec2);
  const uint64_t t4 = now_ns();
  const struct timespec half = in(CLOCK_REALTIME, 500000);
  const int e = sem_timedwait(&g_sem, &half);
  const int eerr = errno;
  const uint64_t t5 = now_ns();
  /* A mutex this thread holds: a timed lock times out (0.5 ms); the thread has ended by now. */
  pthread_mutex_lock(&g_m);
  const struct timespec half2 = in(CLOCK_REALTIME, 500000);
  const int f = pthread_mutex_timedlock(&g_m, &half2);
  const uint64_t t6 = now_ns();
  pthread_mutex_unlock(&g_m);
  const struct timespec sec3 = in(CLOCK_REALTIME, 1000000000);
  const int g = pthread_timedjoin_np(t, NULL, &sec3);
  printf(
      "exec_verbs: timed waits: signalled %d (flag %d) after %llu us; %s after %llu us more; "
      "monotonic %s after %llu us more; sem %d after %llu us more; %d (%s) after %llu us more; "
      "mutex %s after %llu us more; join %d\n",
      a, g_flag, (unsigned long long)((t1 - t0) / 1000), strerror(b),
      (unsigned long long)((t2 - t1) / 1000), strerror(c), (unsigned long long)((t3 - t2) / 1000),
      d, (unsigned long long)((t4 - t3) / 1000), e, strerror(eerr),
      (unsigned long long)((t5 - t4) / 1000), strerror(f), (unsigned long long)((t6 - t5) / 1000),
      g);
  return 0;
}

static int g_self_fd;

static void* late_byte(void* arg) {
  (void)arg;
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &block, NULL); /* (the timer's signal is the main thread's) */
  usleep(3000);
  if (write(g_self_fd, "r", 1) != 1) fprintf(stderr, "exec_verbs: write failed\n");
  return NULL;
}

static int signal_calls(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART */
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(19989);
  a.sin_addr.s_addr = htonl(0x7F000001);
  const int l = socket(AF_INET, SOCK_STREAM, 0);
  if (l < 0 || bind(l, (struct sockaddr*)&a, sizeof a) || listen(l, 1)) return fail("listen");
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = 2000;
  g_rang = 0;
  const uint64_t t0 = now_ns();
  setitimer(ITIMER_REAL, &it, NULL);
  const int ac = accept(l, NULL, NULL);
  const int ace = errno;
  const uint64_t t1 = now_ns();
  const int r1 = g_rang;
  struct sockaddr_in none = a;
  none.sin_port = htons(19988);
  const int c = socket(AF_INET, SOCK_STREAM, 0);
  it.it_value.tv_usec = 1000;
  g_rang = 0;
  setitimer(ITIMER_REAL, &it, NULL);
  const int co = connect(c, (struct sockaddr*)&none, sizeof none);
  const int coe = errno;
  const uint64_t t2 = now_ns();
  const int r2 = g_rang;
  close(c);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  g_self_fd = socket(AF_INET, SOCK_STREAM, 0);
  if (g_self_fd < 0 || connect(g_self_fd, (struct sockaddr*)&a, sizeof a)) return fail("connect");
  const int s2 = accept(l, NULL, NULL);
  pthread_t t;
  if (s2 < 0 || pthread_create(&t, NULL, late_byte, NULL)) return fail("accept / thread");
  g_rang = 0;
  const uint64_t t3 = now_ns();
  setitimer(ITIMER_REAL, &it, NULL);
  char b = 0;
  const ssize_t n = recv(s2, &b, 1, 0);
  const uint64_t t4 = now_ns();
  pthread_join(t, NULL);
  close(s2);
  close(g_self_fd);
  close(l);
  printf(
      "exec_verbs: signal calls: accept %d (%s) after %llu us, alarm %s; connect %d (%s) after "
      "%llu us, alarm %s; with SA_RESTART recv %d '%c' after %llu us, alarm %s\n",
      ac, strerror(ace), (unsigned long long)((t1 - t0) / 1000), r1 ? "rang" : "silent", co,
      strerror(coe), (unsigned long long)((t2 - t1) / 1000), r2 ? "rang" : "silent", (int)n,
      b ? b : '-', (unsigned long long)((t4 - t3) / 1000), g_rang ? "rang" : "silent");
  return 0;
}

static void* spinner(void* arg) {
  volatile uint64_t* n = (volatile uint64_t*)arg;
  for (;;) ++*n;
  return NULL;
}

/* signal-waits: a second thread's signals, each after its sleep. */
static volatile sig_atomic_t g_usr1, g_usr2;
static void on_usr(int sig) {
  if (sig == SIGUSR1) ++g_usr1;
  if (sig == SIGUSR2) ++g_usr2;
}
struct Kill {
  pthread_t to;
  int sig[2];
  unsigned us[2];
};
static void* killer(void* arg) {
  const struct Kill* k = arg;
  for (int i = 0; i < 2 && k->sig[i]; ++i) {
    usleep(k->us[i]);
    pthread_kill(k->to, k->sig[i]);
  }
  return NULL;
}

static int signal_waits(int alone) {
  signal(SIGUSR1, on_usr);
  signal(SIGUSR2, on_usr);
  if (alone) {
    if (alone == 2) { /* a process of several threads: the other has ended */
      pthread_t t;
      struct Kill none = {pthread_self(), {0, 0}, {0, 0}};
      if (pthread_create(&t, NULL, killer, &none)) return fail("pthread_create");
      pthread_join(t, NULL);
    }
    printf("exec_verbs: signal waits: a pause nothing can end\n");
    fflush(stdout);
    pause();
    return fail("pause returned");
  }
  struct Kill k1 = {pthread_self(), {SIGUSR1, 0}, {200, 0}};
  pthread_t t;
  uint64_t t0 = now_ns();
  if (pthread_create(&t, NULL, killer, &k1)) return fail("pthread_create");
  const int p = pause();
  const int perr = errno;
  const uint64_t t1 = now_ns();
  pthread_join(t, NULL);
  const int usr1 = g_usr1;
  /* sigsuspend: SIGUSR1 blocked while it waits, SIGUSR2 not. */
  sigset_t m;
  sigemptyset(&m);
  sigaddset(&m, SIGUSR1);
  struct Kill k2 = {pthread_self(), {SIGUSR1, SIGUSR2}, {100, 200}};
  g_usr1 = g_usr2 = 0;
  const uint64_t t2 = now_ns();
  if (pthread_create(&t, NULL, killer, &k2)) return fail("pthread_create");
  const int s = sigsuspend(&m);
  const int serr = errno;
  const uint64_t t3 = now_ns();
  const int usr2_then = g_usr2, usr1_then = g_usr1;
  pthread_join(t, NULL);
  printf(
      "exec_verbs: signal waits: pause %d (%s) after %llu us, SIGUSR1 %d; sigsuspend %d (%s) "
      "after %llu us, SIGUSR2 %d, SIGUSR1 %d then %d\n",
      p, strerror(perr), (unsigned long long)((t1 - t0) / 1000), usr1, s, strerror(serr),
      (unsigned long long)((t3 - t2) / 1000), usr2_then, usr1_then, (int)g_usr1);
  return 0;
}

/* exact-wakes: another thread's signal, post and signals end the waits on them at its own
   simulated time, between two of a wait's looks (odd microseconds). */
static pthread_mutex_t g_xm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_xc = PTHREAD_COND_INITIALIZER;
static int g_xflag;
static sem_t g_xsem;
static pthread_mutex_t g_xl = PTHREAD_MUTEX_INITIALIZER;
static void* waker(void* arg) {
  const pthread_t to = *(const pthread_t*)arg;
  pthread_mutex_lock(&g_xl);
  usleep(1234);
  pthread_mutex_lock(&g_xm);
  g_xflag = 1;
  pthread_cond_signal(&g_xc);
  pthread_mutex_unlock(&g_xm);
  usleep(567);
  sem_post(&g_xsem);
  usleep(89);
  pthread_kill(to, SIGUSR1);
  usleep(43);
  kill(getpid(), SIGUSR2);
  usleep(29);
  pthread_mutex_unlock(&g_xl);
  usleep(71);
  return NULL;
}

static int exact_wakes(void) {
  signal(SIGUSR1, on_usr);
  signal(SIGUSR2, on_usr);
  if (sem_init(&g_xsem, 0, 0)) return fail("sem_init");
  pthread_t self = pthread_self(), t;
  pthread_mutex_lock(&g_xm);
  const uint64_t t0 = now_ns();
  if (pthread_create(&t, NULL, waker, &self)) return fail("pthread_create");
  const struct timespec sec = in(CLOCK_REALTIME, 1000000000);
  int a = 0;
  while (!g_xflag && a == 0) a = pthread_cond_timedwait(&g_xc, &g_xm, &sec);
  const uint64_t t1 = now_ns();
  pthread_mutex_unlock(&g_xm);
  const struct timespec sec2 = in(CLOCK_REALTIME, 1000000000);
  const int b = sem_timedwait(&g_xsem, &sec2);
  const uint64_t t2 = now_ns();
  const int c = pause();
  const int cerr = errno;
  const uint64_t t3 = now_ns();
  const int d = pause();
  const uint64_t t4 = now_ns();
  const struct timespec sec3 = in(CLOCK_REALTIME, 1000000000);
  const int f = pthread_mutex_timedlock(&g_xl, &sec3);
  const uint64_t t5 = now_ns();
  pthread_mutex_unlock(&g_xl);
  const int g = pthread_timedjoin_np(t, NULL, &sec3);
  const uint64_t t6 = now_ns();
  errno = 0;
  const int e = kill(1, 0);
  const int eerr = errno;
  printf(
      "exec_verbs: exact wakes: cond %d after %llu us, sem %d after %llu us more, pause %d (%s) "
      "after %llu us more, again %d after %llu us more, SIGUSR1 %d, SIGUSR2 %d; lock %d after "
      "%llu us more, join %d after %llu us more; kill(1, 0) %d (%s)\n",
      a, (unsigned long long)((t1 - t0) / 1000), b, (unsigned long long)((t2 - t1) / 1000), c,
      strerror(cerr), (unsigned long long)((t3 - t2) / 1000), d,
      (unsigned long long)((t4 - t3) / 1000), (int)g_usr1, (int)g_usr2, f,
      (unsigned long long)((t5 - t4) / 1000), g, (unsigned long long)((t6 - t5) / 1000), e,
      e ? strerror(eerr) : "Success");
  return 0;
}

/* fd-wakes: another thread's write to a pipe, eventfd_write, close of a pipe's end and write
   beside a socket end the waits on them at its own simulated time, between two looks. */
static int g_fw_pipe[2], g_fw_hup[2], g_fw_mixed[2], g_fw_ev;
static void* fd_waker(void* arg) {
  (void)arg;
  usleep(1234);
  if (write(g_fw_pipe[1], "w", 1) != 1) return NULL;
  usleep(567);
  eventfd_write(g_fw_ev, 5);
  usleep(89);
  close(g_fw_hup[1]);
  usleep(43);
  if (write(g_fw_mixed[1], "m", 1) != 1) return NULL;
  return NULL;
}

static int fd_wakes(void) {
  struct addrinfo* res = NULL;
  const int s = tcp_socket(1, NULL, "19995", &res);
  if (s < 0) return 1;
  if (bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1)) return fail("bind / listen");
  g_fw_ev = eventfd(0, 0);
  if (pipe(g_fw_pipe) || pipe(g_fw_hup) || pipe(g_fw_mixed) || g_fw_ev < 0)
    return fail("pipe / eventfd");
  const int ep = epoll_create1(0);
  struct epoll_event ev = {0}, got;
  ev.events = EPOLLIN;
  ev.data.u32 = 7;
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, g_fw_ev, &ev)) return fail("epoll");
  pthread_t t;
  const uint64_t t0 = now_ns();
  if (pthread_create(&t, NULL, fd_waker, NULL)) return fail("pthread_create");
  struct pollfd p = {g_fw_pipe[0], POLLIN, 0};
  const int a = poll(&p, 1, -1);
  const uint64_t t1 = now_ns();
  const int b = epoll_wait(ep, &got, 1, -1);
  eventfd_t v = 0;
  eventfd_read(g_fw_ev, &v);
  const uint64_t t2 = now_ns();
  struct pollfd h = {g_fw_hup[0], POLLIN, 0};
  const int c = poll(&h, 1, 1000);
  const uint64_t t3 = now_ns();
  struct pollfd m[2] = {{s, POLLIN, 0}, {g_fw_mixed[0], POLLIN, 0}};
  const int d = poll(m, 2, -1);
  const uint64_t t4 = now_ns();
  pthread_join(t, NULL);
  printf(
      "exec_verbs: fd wakes: pipe %d after %llu us, eventfd %d (%llu) after %llu us more, hangup "
      "%d "
      "(%s) after %llu us more, beside a socket %d (pipe %s) after %llu us more\n",
      a, (unsigned long long)((t1 - t0) / 1000), b, (unsigned long long)v,
      (unsigned long long)((t2 - t1) / 1000), c, (h.revents & POLLHUP) ? "POLLHUP" : "-",
      (unsigned long long)((t3 - t2) / 1000), d, (m[1].revents & POLLIN) ? "POLLIN" : "-",
      (unsigned long long)((t4 - t3) / 1000));
  return 0;
}

/* kill-target / kill-sender, two processes of one host: the target sends its pid over UDP on
   the loopback, then waits in pause and sigsuspend; the sender signals it (kill, sigqueue with a
   value) after its sleeps, and tries pids nobody has. */
static volatile sig_atomic_t g_kt_usr1, g_kt_value = -1, g_kt_from = -1;
static void on_kt(int sig, siginfo_t* si, void* uc) {
  (void)uc;
  if (sig == SIGUSR1) ++g_kt_usr1;
  if (sig == SIGUSR2) g_kt_value = si->si_value.sival_int, g_kt_from = si->si_pid;
}
static int kills(int target) {
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons(19989);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  if (s < 0) return fail("socket");
  if (target) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_kt;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    usleep(10); /* the sender has bound its port */
    const int pid = getpid();
    const uint64_t t0 = now_ns();
    if (sendto(s, &pid, sizeof pid, 0, (struct sockaddr*)&a, sizeof a) != sizeof pid)
      return fail("sendto");
    const int p = pause();
    const uint64_t t1 = now_ns();
    sigset_t none;
    sigemptyset(&none);
    const int q = sigsuspend(&none);
    const uint64_t t2 = now_ns();
    printf(
        "exec_verbs: kill target: pause %d after %llu us, SIGUSR1 %d; sigsuspend %d after %llu us "
        "more, value %d from %d\n",
        p, (unsigned long long)((t1 - t0) / 1000), (int)g_kt_usr1, q,
        (unsigned long long)((t2 - t1) / 1000), (int)g_kt_value, (int)g_kt_from);
    return 0;
  }
  if (bind(s, (struct sockaddr*)&a, sizeof a)) return fail("bind");
  int pid = 0;
  if (recv(s, &pid, sizeof pid, 0) != sizeof pid) return fail("recv");
  usleep(123);
  const int k1 = kill(pid, SIGUSR1);
  usleep(7);
  union sigval v;
  v.sival_int = 42;
  const int k2 = sigqueue(pid, SIGUSR2, v);
  const int k3 = kill(pid, 0);
  errno = 0;
  const int k4 = kill(pid + 1000, 0);
  const int e4 = errno;
  printf("exec_verbs: kill sender: target %d; kill %d, sigqueue %d, probe %d; pid %d: %d (%s)\n",
         pid, k1, k2, k3, pid + 1000, k4, strerror(e4));
  return 0;
}

/* identity: the host's name and interfaces, as the program's usual calls find them. */
static int identity(void) {
  char host[64] = {0};
  struct utsname u;
  if (gethostname(host, sizeof host) || uname(&u)) return fail("gethostname / uname");
  char ifs[256] = {0};
  struct ifaddrs* all = NULL;
  if (getifaddrs(&all)) return fail("getifaddrs");
  for (struct ifaddrs* a = all; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char ip[16], mask[16];
    snprintf(ip, sizeof ip, "%s", inet_ntoa(((struct sockaddr_in*)a->ifa_addr)->sin_addr));
    snprintf(mask, sizeof mask, "%s", inet_ntoa(((struct sockaddr_in*)a->ifa_netmask)->sin_addr));
    snprintf(ifs + strlen(ifs), sizeof ifs - strlen(ifs), "%s%s %s/%s%s", ifs[0] ? ", " : "",
             a->ifa_name, ip, mask, (a->ifa_flags & IFF_LOOPBACK) ? " loopback" : "");
  }
  freeifaddrs(all);
  char name1[IF_NAMESIZE] = {0};
  const unsigned eth = if_nametoindex("eth0");
  if_indextoname(1, name1);
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  struct ifreq q[8];
  struct ifconf c = {sizeof q, {(char*)q}};
  const int conf = ioctl(s, SIOCGIFCONF, &c);
  struct ifreq a;
  memset(&a, 0, sizeof a);
  snprintf(a.ifr_name, IFNAMSIZ, "eth0");
  const int ad = ioctl(s, SIOCGIFADDR, &a);
  char ip[16];
  snprintf(ip, sizeof ip, "%s", inet_ntoa(((struct sockaddr_in*)&a.ifr_addr)->sin_addr));
  const int hw = ioctl(s, SIOCGIFHWADDR, &a);
  const unsigned char* m = (const unsigned char*)a.ifr_hwaddr.sa_data;
  snprintf(a.ifr_name, IFNAMSIZ, "nosuch0");
  const int none = ioctl(s, SIOCGIFADDR, &a) ? errno : 0;
  close(s);
  /* The older resolver calls: by name and by address. */
  const struct hostent* he = gethostbyname("node1");
  char byname[16] = "none", byaddr[32] = "none", ni[32] = "none";
  if (he) snprintf(byname, sizeof byname, "%s", inet_ntoa(*(struct in_addr*)he->h_addr_list[0]));
  struct in_addr n1;
  inet_aton("10.0.0.2", &n1);
  const struct hostent* ha = gethostbyaddr(&n1, sizeof n1, AF_INET);
  if (ha) snprintf(byaddr, sizeof byaddr, "%s", ha->h_name);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr = n1;
  sa.sin_port = htons(19990);
  char port[16] = "";
  const int g1 = getnameinfo((struct sockaddr*)&sa, sizeof sa, ni, sizeof ni, port, sizeof port,
                             NI_NAMEREQD | NI_NUMERICSERV);
  inet_aton("10.9.9.9", &sa.sin_addr);
  char nobody[32];
  const int g2 =
      getnameinfo((struct sockaddr*)&sa, sizeof sa, nobody, sizeof nobody, NULL, 0, NI_NAMEREQD);
  printf(
      "exec_verbs: identity: %s, uname %s; %s; eth0 index %u, index 1 %s; SIOCGIFCONF %d: %d "
      "interfaces; eth0 %d %s, hardware %d %02x:%02x:%02x:%02x:%02x:%02x; nosuch0: %s; node1 %s, "
      "10.0.0.2 %s, getnameinfo %d %s:%s, 10.9.9.9 %s\n",
      host, u.nodename, ifs, eth, name1, conf, (int)(c.ifc_len / sizeof(struct ifreq)), ad, ip, hw,
      m[0], m[1], m[2], m[3], m[4], m[5], strerror(none), byname, byaddr, g1, ni, port,
      gai_strerror(g2));
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return fail("arguments");
  if (!strcmp(argv[1], "server") || !strcmp(argv[1], "client") || !strcmp(argv[1], "client-ex") ||
      !strcmp(argv[1], "server-events")) {
    g_bad = argc > 3 && !strcmp(argv[3], "bad");
    return transfer(!strcmp(argv[1], "server") || !strcmp(argv[1], "server-events"),
                    argc > 2 ? atoi(argv[2]) : 4, !strcmp(argv[1], "client-ex"),
                    !strcmp(argv[1], "server-events"));
  }
  if (!strcmp(argv[1], "exit")) {
    fprintf(stderr, "exec_verbs: leaving with %s\n", argc > 2 ? argv[2] : "1");
    return argc > 2 ? atoi(argv[2]) : 1;
  }
  if (!strcmp(argv[1], "crash")) {
    struct ibv_context* ctx = open_ctx();
    struct ibv_pd* pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    char* b = malloc(8192);
    if (!pd || !b || !ibv_reg_mr(pd, b, 8192, IBV_ACCESS_LOCAL_WRITE)) return fail("set-up");
    fprintf(stderr, "exec_verbs: about to fault\n");
    volatile int* p = NULL;
    return *p;
  }
  if (!strcmp(argv[1], "spin")) {
    struct ibv_context* ctx = open_ctx();
    if (!ctx) return fail("ibv_open_device");
    volatile unsigned long x = 0;
    for (;;) ++x;
  }
  if (!strcmp(argv[1], "alarm")) return alarms();
  if (!strcmp(argv[1], "exact-wakes")) return exact_wakes();
  if (!strcmp(argv[1], "fd-wakes")) return fd_wakes();
  if (!strcmp(argv[1], "identity")) return identity();
  if (!strcmp(argv[1], "kill-target") || !strcmp(argv[1], "kill-sender"))
    return kills(!strcmp(argv[1], "kill-target"));
  if (!strcmp(argv[1], "thread-spin")) {
    static uint64_t n;
    pthread_t t;
    fprintf(stderr, "exec_verbs: a thread spins\n");
    if (pthread_create(&t, NULL, spinner, &n)) return fail("pthread_create");
    pthread_join(t, NULL);
    return 0;
  }
  if (!strcmp(argv[1], "poll-server") || !strcmp(argv[1], "poll-client"))
    return polls(!strcmp(argv[1], "poll-server"), argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "epoll-server") || !strcmp(argv[1], "epoll-client"))
    return epolls(!strcmp(argv[1], "epoll-server"), argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "forever-server")) return forever(1, argc > 2 ? argv[2] : "epoll", NULL);
  if (!strcmp(argv[1], "forever-client")) return forever(0, "", argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "shutdown-server") || !strcmp(argv[1], "shutdown-client"))
    return shutdowns(!strcmp(argv[1], "shutdown-server"), argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "udp-server") || !strcmp(argv[1], "udp-client"))
    return udps(!strcmp(argv[1], "udp-server"), argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "reset-server") || !strcmp(argv[1], "reset-client"))
    return resets(!strcmp(argv[1], "reset-server"), argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "nbconnect-server") || !strcmp(argv[1], "nbconnect-client"))
    return nbconnects(!strcmp(argv[1], "nbconnect-server"), argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "epoll-copy-server") || !strcmp(argv[1], "epoll-copy-client"))
    return epoll_copies(!strcmp(argv[1], "epoll-copy-server"), argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "cm-poll-server") || !strcmp(argv[1], "cm-poll-client"))
    return cm_polls(!strcmp(argv[1], "cm-poll-server"), argc > 2 ? argv[2] : "node1");
  if (!strcmp(argv[1], "kernel-waits")) return kernel_waits();
  if (!strcmp(argv[1], "timed-waits")) return timed_waits();
  if (!strcmp(argv[1], "signal-calls")) return signal_calls();
  if (!strcmp(argv[1], "signal-waits"))
    return signal_waits(argc < 3                            ? 0
                        : !strcmp(argv[2], "alone")         ? 1
                        : !strcmp(argv[2], "alone-threads") ? 2
                                                            : 0);
  if (!strcmp(argv[1], "fork")) {
    if (!open_ctx()) return fail("ibv_open_device");
    const pid_t p = fork();
    printf("exec_verbs: fork returned %d\n", (int)p);
    return 0;
  }
  if (!strcmp(argv[1], "calls")) {
    struct ibv_context* ctx = open_ctx();
    if (!ctx) return fail("ibv_open_device");
    const long n = argc > 2 ? atol(argv[2]) : 0;
    struct ibv_port_attr pa;
    for (long i = 0; i < n; ++i)
      if (ibv_query_port(ctx, 1, &pa)) return fail("ibv_query_port");
    return ibv_close_device(ctx) ? fail("ibv_close_device") : 0;
  }
  if (!strcmp(argv[1], "forged")) {
    struct ibv_context* ctx = open_ctx();
    if (!ctx) return fail("ibv_open_device");
    struct {
      struct ibv_pd pd;
      uint64_t id;
    } fake;
    memset(&fake, 0, sizeof fake);
    fake.pd.context = ctx;
    fake.id = 0x1234567890ull;
    char b[64];
    const int rc = ibv_dealloc_pd(&fake.pd);
    struct ibv_mr* mr = ibv_reg_mr(&fake.pd, b, sizeof b, IBV_ACCESS_LOCAL_WRITE);
    printf("exec_verbs: forged PD: dealloc %d, reg_mr %s\n", rc, mr ? "succeeded" : "refused");
    return rc == EINVAL && !mr ? 0 : 1;
  }
  return fail("mode");
}
