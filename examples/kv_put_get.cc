// A small key-value store over RDMA Write and Read, as a verbs program of its own
// (docs/verbs.md, "Programs"). The server keeps a table of fixed-size slots in a std::vector it
// registers for remote write and read, and publishes its address and rkey on the out-of-band
// board. The client puts values with RDMA Writes into slots (key -> slot key % slots), gets
// them back with RDMA Reads, and checks them; a final Send tells the server the puts are done
// (a Send's completion follows the Writes before it), and the server checks its table with
// plain loads. Run by scenarios/examples/kv_put_get.yaml:
//   args: server | client N   (N keys)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "models/host/verbs/verbs.h"

namespace {

constexpr uint32_t kSlots = 64, kSlot = 256;

// Storage for the std::vector aligned to 2 MiB: a buffer's offset in its page sets how the card's
// DMA splits at page boundaries, a buffer across a 2 MiB boundary takes one more page-table read
// to register, and a heap address is wherever the allocator happens to put it (docs/verbs.md,
// "Plain memory"). Aligned so, the run's timing does not depend on it, in any build or process.
template <class T>
struct HugePageAligned {
  using value_type = T;
  HugePageAligned() = default;
  template <class U>
  HugePageAligned(const HugePageAligned<U>&) {}
  T* allocate(size_t n) {
    constexpr size_t kAlign = 2 << 20;
    const size_t bytes = (n * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    return static_cast<T*>(std::aligned_alloc(kAlign, bytes));
  }
  void deallocate(T* p, size_t) { std::free(p); }
  bool operator==(const HugePageAligned&) const { return true; }
  bool operator!=(const HugePageAligned&) const { return false; }
};

struct Dest {
  ibv_gid gid;
  uint32_t qpn;
  uint64_t table;
  uint32_t rkey;
};

int fail(const char* what) {
  std::fprintf(stderr, "kv_put_get: %s failed\n", what);
  return 1;
}

int wait_one(ibv_cq* cq) {
  ibv_wc wc{};
  for (;;) {
    const int n = ibv_poll_cq(cq, 1, &wc);
    if (n < 0) return -1;
    if (n == 1) return wc.status;
  }
}

// The value a key holds: its number written out, padded with its low byte.
void value_of(uint32_t key, char* out) {
  std::memset(out, int(key & 0xFF), kSlot);
  std::snprintf(out, kSlot, "value of key %u", key);
}

}  // namespace

RNIC_PROGRAM {
  const bool server = argc >= 2 && std::strcmp(argv[1], "server") == 0;
  const uint32_t keys = argc >= 3 ? uint32_t(std::atoi(argv[2])) : 0;
  if (!server && (argc != 3 || keys == 0 || keys > kSlots)) return fail("arguments");
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n < 1) return fail("ibv_get_device_list");
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
  // The table (server) or the client's staging slots.
  std::vector<char, HugePageAligned<char>> mem(kSlots * kSlot);
  ibv_mr* mr =
      ibv_reg_mr(pd, mem.data(), mem.size(),
                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (!ctx || !pd || !cq || !mr) return fail("setup");
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = cq;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.qp_type = IBV_QPT_RC;
  ibv_qp* qp = ibv_create_qp(pd, &ia);
  if (!qp) return fail("ibv_create_qp");

  Dest me{};
  ibv_query_gid(ctx, 1, 0, &me.gid);
  me.qpn = qp->qp_num;
  me.table = reinterpret_cast<uint64_t>(mem.data());
  me.rkey = mr->rkey;
  rnic_oob_put(server ? "kv.server" : "kv.client", &me, sizeof me);
  Dest peer{};
  rnic_oob_get(server ? "kv.client" : "kv.server", &peer, sizeof peer);

  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return fail("INIT");
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTR;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer.gid;
  a.ah_attr.port_num = 1;
  a.dest_qp_num = peer.qpn;
  a.max_dest_rd_atomic = 1;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_MAX_DEST_RD_ATOMIC))
    return fail("RTR");
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTS;
  a.max_rd_atomic = 1;
  a.timeout = 14;
  a.retry_cnt = 7;
  if (ibv_modify_qp(qp, &a,
                    IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT))
    return fail("RTS");

  if (server) {
    // The client's "done" Send lands in the last slot; then every slot it put is checked.
    ibv_sge s{reinterpret_cast<uint64_t>(mem.data()) + (kSlots - 1) * kSlot, 4, mr->lkey};
    ibv_recv_wr r{};
    r.sg_list = &s;
    r.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(qp, &r, &bad)) return fail("ibv_post_recv");
    const char ready = 1;
    rnic_oob_put("kv.server.ready", &ready, 1);
    if (wait_one(cq) != IBV_WC_SUCCESS) return fail("the done message");
    uint32_t put = 0;
    std::memcpy(&put, &mem[(kSlots - 1) * kSlot], 4);
    char want[kSlot];
    for (uint32_t k = 0; k < put; ++k) {
      value_of(k, want);
      if (std::memcmp(&mem[k * kSlot], want, kSlot) != 0) {
        std::fprintf(stderr, "kv_put_get: slot %u does not hold key %u's value\n", k, k);
        return 1;
      }
    }
    std::printf("kv_put_get: server table holds the %u values put\n", put);
    return 0;
  }
  char ready = 0;
  rnic_oob_get("kv.server.ready", &ready, 1);
  ibv_send_wr* bad = nullptr;
  // One RDMA Write (put) or Read (get) between the local slot k and the server's slot k.
  const auto rdma = [&](ibv_wr_opcode op, uint32_t k) {
    ibv_sge s{reinterpret_cast<uint64_t>(&mem[k * kSlot]), kSlot, mr->lkey};
    ibv_send_wr w{};
    w.sg_list = &s;
    w.num_sge = 1;
    w.opcode = op;
    w.send_flags = IBV_SEND_SIGNALED;
    w.wr.rdma.remote_addr = peer.table + k * kSlot;
    w.wr.rdma.rkey = peer.rkey;
    return ibv_post_send(qp, &w, &bad) == 0 && wait_one(cq) == IBV_WC_SUCCESS;
  };
  for (uint32_t k = 0; k < keys; ++k) {  // put: stage the value, RDMA Write it to its slot
    value_of(k, &mem[k * kSlot]);
    if (!rdma(IBV_WR_RDMA_WRITE, k)) return fail("put");
  }
  std::memset(mem.data(), 0, mem.size());
  char want[kSlot];
  for (uint32_t k = 0; k < keys; ++k) {  // get: RDMA Read the slot back, compare
    if (!rdma(IBV_WR_RDMA_READ, k)) return fail("get");
    value_of(k, want);
    if (std::memcmp(&mem[k * kSlot], want, kSlot) != 0) {
      std::fprintf(stderr, "kv_put_get: get of key %u returned another value\n", k);
      return 1;
    }
  }
  std::memcpy(mem.data(), &keys, 4);  // done: how many keys were put
  ibv_sge s{reinterpret_cast<uint64_t>(mem.data()), 4, mr->lkey};
  ibv_send_wr d{};
  d.sg_list = &s;
  d.num_sge = 1;
  d.opcode = IBV_WR_SEND;
  d.send_flags = IBV_SEND_SIGNALED;
  if (ibv_post_send(qp, &d, &bad) || wait_one(cq) != IBV_WC_SUCCESS) return fail("done");
  std::printf("kv_put_get: %u puts and gets in %.2f us\n", keys, rnic_now_ns() / 1000.0);
  return 0;
}
