#include "sim/traffic/endpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/common/sim_time.h"
#include "models/host/driver.h"
#include "models/host/verbs/verbs_internal.h"
#include "sim/ranks.h"

namespace rnic::traffic {

namespace {
[[noreturn]] void fail(const char* what, int err) {
  throw std::runtime_error(fmt::format("{} failed: errno {}", what, err));
}
}  // namespace

void Endpoint::open(const EndpointConfig& c) {
  cfg = c;
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (n < 1) fail("ibv_get_device_list", ENODEV);
  ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  if (!ctx) fail("ibv_open_device", errno);
  if (!(pd = ibv_alloc_pd(ctx))) fail("ibv_alloc_pd", errno);
  if (c.comp_channel && !(channel = ibv_create_comp_channel(ctx)))
    fail("ibv_create_comp_channel", errno);
  if (!(cq = ibv_create_cq(ctx, c.cqe, nullptr, channel, 0))) fail("ibv_create_cq", errno);
  buf = c.lazy ? rnic_malloc_lazy(c.buf_bytes) : rnic_malloc(c.buf_bytes);
  if (!(mr = ibv_reg_mr(pd, buf, c.buf_bytes, c.access))) fail("ibv_reg_mr", errno);
  if (c.srq_depth) {
    ibv_srq_init_attr sa{};
    sa.attr.max_wr = c.srq_depth;
    sa.attr.max_sge = c.sge;
    if (!(srq = ibv_create_srq(pd, &sa))) fail("ibv_create_srq", errno);
  }
  for (int i = 0; i < c.qps; ++i) {
    ibv_qp_init_attr a{};
    a.srq = srq;
    a.send_cq = cq;
    a.recv_cq = cq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = c.send_depth;
    a.cap.max_recv_wr = c.recv_depth;
    a.cap.max_send_sge = c.sge;
    a.cap.max_inline_data = c.max_inline;
    a.cap.max_recv_sge = c.sge;
    ibv_qp* qp = ibv_create_qp(pd, &a);
    if (!qp) fail("ibv_create_qp", errno);
    qps.push_back(qp);
  }
}

PeerInfo Endpoint::info() const {
  PeerInfo p;
  ibv_query_gid(ctx, 1, 0, &p.gid);
  for (ibv_qp* qp : qps) p.qpns.push_back(qp->qp_num);
  p.addr = addr();
  p.rkey = mr->rkey;
  p.len = mr->length;
  ibv_device_attr da{};
  if (ibv_query_device(ctx, &da) == 0) p.ird = uint32_t(da.max_qp_rd_atom);
  return p;
}

void Endpoint::connect(const PeerInfo& peer) {
  for (size_t i = 0; i < qps.size(); ++i) connect_qp(qps[i], peer, i, cfg);
}

void connect_qp(ibv_qp* qp, const PeerInfo& peer, size_t i, const EndpointConfig& cfg,
                ibv_qp_state upto) {
  // IRD: as many inbound Reads as the card takes; ORD: as many as the peer takes, at most
  // (without that exchange a peer with a smaller IRD fails the QP on the Read beyond it).
  ibv_device_attr da{};
  if (int rc = ibv_query_device(qp->context, &da)) fail("ibv_query_device", rc);
  const int ird = da.max_qp_rd_atom;
  const int ord =
      peer.ird ? std::min(da.max_qp_init_rd_atom, int(peer.ird)) : da.max_qp_init_rd_atom;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = unsigned(cfg.qp_access);
  if (int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    fail("ibv_modify_qp INIT", rc);
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTR;
  a.ah_attr.grh.dgid = peer.gid;
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = 1;
  a.dest_qp_num = peer.qpns.at(i);
  a.max_dest_rd_atomic = uint8_t(ird);
  a.path_mtu = cfg.path_mtu;
  if (int rc = ibv_modify_qp(qp, &a,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN |
                                 IBV_QP_MAX_DEST_RD_ATOMIC | (cfg.path_mtu ? IBV_QP_PATH_MTU : 0)))
    fail("ibv_modify_qp RTR", rc);
  if (upto == IBV_QPS_RTR) return;
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTS;
  a.max_rd_atomic = uint8_t(ord);
  a.timeout = cfg.timeout;
  a.retry_cnt = cfg.retry_cnt;
  if (int rc = ibv_modify_qp(
          qp, &a, IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT))
    fail("ibv_modify_qp RTS", rc);
}

void Endpoint::close() {
  for (ibv_qp* qp : qps) ibv_destroy_qp(qp);
  qps.clear();
  if (srq) ibv_destroy_srq(srq);
  srq = nullptr;
  if (mr) ibv_dereg_mr(mr);
  if (cq) ibv_destroy_cq(cq);
  if (channel) ibv_destroy_comp_channel(channel);
  channel = nullptr;
  if (pd) ibv_dealloc_pd(pd);
  if (ctx) ibv_close_device(ctx);
  mr = nullptr;
  cq = nullptr;
  pd = nullptr;
  ctx = nullptr;
}

Oob::Oob() {
  if (!ranks::parallel()) return;
  channel_ = ranks::channel([this](int, const uint8_t* p, size_t n) {
    ranks::Unpacker u(p, n);
    const auto to = u.get<int64_t>();
    Entry e;
    e.at_ps = u.get<uint64_t>();
    e.from = u.get<MacAddr>();
    e.info.gid = u.get<ibv_gid>();
    e.info.qpns.resize(u.get<uint32_t>());
    for (uint32_t& q : e.info.qpns) q = u.get<uint32_t>();
    e.info.addr = u.get<uint64_t>();
    e.info.rkey = u.get<uint32_t>();
    e.info.len = u.get<uint64_t>();
    e.info.ird = u.get<uint32_t>();
    insert(to, std::move(e));
  });
}

Oob::~Oob() {
  if (channel_ != UINT32_MAX) ranks::drop_channel(channel_);
}

void Oob::insert(int64_t to, Entry e) {
  Box& b = box_[to];
  auto it = std::upper_bound(b.q.begin(), b.q.end(), std::make_pair(e.at_ps, e.from),
                             [](const std::pair<uint64_t, MacAddr>& k, const Entry& x) {
                               return k < std::make_pair(x.at_ps, x.from);
                             });
  b.q.insert(it, std::move(e));
  notify_now(b.ev);
}

void Oob::put(int64_t to, PeerInfo info) {
  const uint64_t at = host::mgmt_send(wire_bytes(info));
  const MacAddr from = host::current_process().drv->mac();
  if (channel_ != UINT32_MAX) {
    ranks::Packer m;
    m.put(to).put(at).put(from).put(info.gid).put(uint32_t(info.qpns.size()));
    for (uint32_t q : info.qpns) m.put(q);
    m.put(info.addr).put(info.rkey).put(info.len).put(info.ird);
    ranks::broadcast(channel_, m.data(), m.size(), at);
  }
  insert(to, Entry{at, from, std::move(info)});
}

PeerInfo Oob::get(int64_t me) {
  Box& b = box_[me];
  for (;;) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (!b.q.empty() && b.q.front().at_ps <= now) break;
    if (b.q.empty())
      sc_core::wait(b.ev);
    else
      sc_core::wait(sc_core::sc_time::from_value(b.q.front().at_ps - now), b.ev);
  }
  PeerInfo i = std::move(b.q.front().info);
  b.q.pop_front();
  return i;
}

int post_rdma(ibv_qp* qp, ibv_wr_opcode op, uint64_t id, uint64_t addr, uint32_t len, uint32_t lkey,
              uint64_t raddr, uint32_t rkey) {
  ibv_sge s{addr, len, lkey};
  ibv_send_wr w{};
  w.wr_id = id;
  w.sg_list = &s;
  w.num_sge = 1;
  w.opcode = op;
  w.send_flags = IBV_SEND_SIGNALED;
  w.wr.rdma.remote_addr = raddr;
  w.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &w, &bad);
}

bool warm_up(Endpoint& e, const PeerInfo& peer, uint32_t bytes) {
  for (int i = 0; i < kWarmUpReads; ++i) {
    if (post_rdma(e.qps[0], IBV_WR_RDMA_READ, 0, e.addr(), bytes, e.mr->lkey, peer.addr, peer.rkey))
      return false;
    ibv_wc wc{};
    while (ibv_poll_cq(e.cq, 1, &wc) == 0) rnic_wait_cq(e.cq, RNIC_WAIT_FOREVER);
    if (wc.status != IBV_WC_SUCCESS) return false;
  }
  return true;
}

PeerInfo open_connected(Endpoint& e, int me, const EndpointConfig& c, Oob& oob, int peer) {
  e.open(c);
  oob.put(peer < 0 ? 1 - me : peer, e.info());
  const PeerInfo p = oob.get(me);
  e.connect(p);
  return p;
}

}  // namespace rnic::traffic
