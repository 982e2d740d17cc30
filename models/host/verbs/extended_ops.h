// rdma-core's extended CQ (ibv_cq_ex: ibv_start_poll / ibv_next_poll / ibv_end_poll and the
// ibv_wc_read_* readers) and extended post-send (ibv_qp_ex: ibv_wr_start, ibv_wr_send, ...,
// ibv_wr_complete) over a provider's plain poll and post operations, as a provider fills them.
// One header for the verbs library (models/host/verbs/verbs.cc) and the executables' preload
// library (sim/exec/exec_preload.cc), each of which gives its own poll and post.
//
// The extended CQ takes one completion per start_poll / next_poll; the readers read it. The
// extended QP builds a list of ibv_send_wr between wr_start and wr_complete, which posts it in
// one call (the first refused WR and those after it are not posted, and wr_complete returns its
// error); an operation the card does not do (UD, TSO, memory windows, atomic write)
// makes wr_complete return EOPNOTSUPP and posts nothing. Inline data is copied when it is set.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <vector>

namespace rnic::host {

// A send WR's remote address and rkey: an atomic's (wr.atomic) or an RDMA operation's (wr.rdma).
inline bool is_atomic_wr(ibv_wr_opcode op) {
  return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}
inline void remote_of(const ibv_send_wr& w, uint64_t* addr, uint32_t* rkey) {
  *addr = is_atomic_wr(w.opcode) ? w.wr.atomic.remote_addr : w.wr.rdma.remote_addr;
  *rkey = is_atomic_wr(w.opcode) ? w.wr.atomic.rkey : w.wr.rdma.rkey;
}

// The completion fields the card's CQs report (ibv_cq_init_attr_ex.wc_flags): the standard ones;
// no timestamps, VLANs, flow tags or tag matching.
constexpr uint64_t kCqExWcFlags =
    IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS;
// The operations of the extended post-send (ibv_qp_init_attr_ex.send_ops_flags).
constexpr uint64_t kQpExSendOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
                                  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV |
                                  IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
                                  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_IMM;

// Whether an extended CQ's attributes ask only for what the card reports (the standard fields;
// creation flags: single-threaded use only).
inline bool cq_ex_attr_ok(const ibv_cq_init_attr_ex* a) {
  return a && !(a->comp_mask & ~uint32_t(IBV_CQ_INIT_ATTR_MASK_FLAGS)) &&
         (!(a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
          !(a->flags & ~uint32_t(IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) &&
         !(a->wc_flags & ~kCqExWcFlags);
}
// Whether an extended QP's attributes name a PD and ask only for operations the card does.
inline bool qp_ex_attr_ok(const ibv_qp_init_attr_ex* a) {
  constexpr uint32_t kMask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  return a && (a->comp_mask & IBV_QP_INIT_ATTR_PD) && !(a->comp_mask & ~kMask) &&
         (!(a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
          !(a->send_ops_flags & ~kQpExSendOps));
}
// The plain QP attributes of an extended QP's.
inline ibv_qp_init_attr qp_init_attr_of(const ibv_qp_init_attr_ex& a) {
  ibv_qp_init_attr b{};
  b.qp_context = a.qp_context;
  b.send_cq = a.send_cq;
  b.recv_cq = a.recv_cq;
  b.srq = a.srq;
  b.cap = a.cap;
  b.qp_type = a.qp_type;
  b.sq_sig_all = a.sq_sig_all;
  return b;
}

namespace detail {
inline std::map<const ibv_cq_ex*, ibv_wc>& cq_ex_current() {
  static std::map<const ibv_cq_ex*, ibv_wc> m;
  return m;
}
struct WrBatch {
  std::deque<ibv_send_wr> wrs;  // a deque: the WRs stay where they are as more come
  std::deque<std::vector<ibv_sge>> sges;
  std::deque<std::vector<uint8_t>> inl;
  int err = 0;
};
inline std::map<const ibv_qp_ex*, WrBatch>& qp_ex_batches() {
  static std::map<const ibv_qp_ex*, WrBatch> m;
  return m;
}
inline WrBatch& batch(ibv_qp_ex* q) { return qp_ex_batches()[q]; }
inline void add(ibv_qp_ex* q, ibv_wr_opcode op) {
  WrBatch& b = batch(q);
  ibv_send_wr w{};
  w.wr_id = q->wr_id;
  w.send_flags = q->wr_flags;
  w.opcode = op;
  b.wrs.push_back(w);
  b.sges.emplace_back();
  b.inl.emplace_back();
}
inline ibv_send_wr* last(ibv_qp_ex* q) {
  WrBatch& b = batch(q);
  if (b.wrs.empty()) {
    b.err = EINVAL;  // an attribute before any operation
    return nullptr;
  }
  return &b.wrs.back();
}
inline void refuse(ibv_qp_ex* q) { batch(q).err = EOPNOTSUPP; }
// The CQ's next completion becomes its current one: 0, or ENOENT when there is none.
template <int (*Poll)(ibv_cq*, int, ibv_wc*)>
int take(ibv_cq_ex* c) {
  ibv_wc& w = cq_ex_current()[c];
  const int n = Poll(ibv_cq_ex_to_cq(c), 1, &w);
  if (n == 0) return ENOENT;
  if (n < 0) return -n;
  c->status = w.status;
  c->wr_id = w.wr_id;
  return 0;
}
}  // namespace detail

// A CQ's extended operations, polling with Poll (a provider's poll_cq).
template <int (*Poll)(ibv_cq*, int, ibv_wc*)>
void fill_cq_ex(ibv_cq_ex* cq) {
  using detail::cq_ex_current;
  cq->start_poll = [](ibv_cq_ex* c, ibv_poll_cq_attr* attr) -> int {
    if (attr && attr->comp_mask) return EINVAL;
    return detail::take<Poll>(c);
  };
  cq->next_poll = [](ibv_cq_ex* c) -> int { return detail::take<Poll>(c); };
  cq->end_poll = [](ibv_cq_ex*) {};
  cq->read_opcode = [](ibv_cq_ex* c) { return cq_ex_current()[c].opcode; };
  cq->read_vendor_err = [](ibv_cq_ex* c) { return cq_ex_current()[c].vendor_err; };
  cq->read_byte_len = [](ibv_cq_ex* c) { return cq_ex_current()[c].byte_len; };
  cq->read_imm_data = [](ibv_cq_ex* c) { return cq_ex_current()[c].imm_data; };
  cq->read_qp_num = [](ibv_cq_ex* c) { return cq_ex_current()[c].qp_num; };
  cq->read_src_qp = [](ibv_cq_ex* c) { return cq_ex_current()[c].src_qp; };
  cq->read_wc_flags = [](ibv_cq_ex* c) { return unsigned(cq_ex_current()[c].wc_flags); };
  cq->read_slid = [](ibv_cq_ex* c) { return uint32_t(cq_ex_current()[c].slid); };
  cq->read_sl = [](ibv_cq_ex* c) { return cq_ex_current()[c].sl; };
  cq->read_dlid_path_bits = [](ibv_cq_ex* c) { return cq_ex_current()[c].dlid_path_bits; };
}
inline void forget_cq_ex(const ibv_cq_ex* cq) { detail::cq_ex_current().erase(cq); }

// A QP's extended post-send, posting with Post (a provider's post_send).
template <int (*Post)(ibv_qp*, ibv_send_wr*, ibv_send_wr**)>
void fill_qp_ex(ibv_qp_ex* q) {
  using detail::add;
  using detail::batch;
  using detail::last;
  using detail::refuse;
  q->wr_start = [](ibv_qp_ex* x) { detail::qp_ex_batches()[x] = detail::WrBatch{}; };
  q->wr_abort = [](ibv_qp_ex* x) { detail::qp_ex_batches().erase(x); };
  q->wr_complete = [](ibv_qp_ex* x) -> int {
    detail::WrBatch b = std::move(batch(x));
    detail::qp_ex_batches().erase(x);
    if (b.err) return b.err;
    if (b.wrs.empty()) return 0;
    for (size_t i = 0; i < b.wrs.size(); ++i) {
      b.wrs[i].sg_list = b.sges[i].empty() ? nullptr : b.sges[i].data();
      b.wrs[i].num_sge = int(b.sges[i].size());
      b.wrs[i].next = i + 1 < b.wrs.size() ? &b.wrs[i + 1] : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    return Post(&x->qp_base, &b.wrs[0], &bad);
  };
  q->wr_send = [](ibv_qp_ex* x) { add(x, IBV_WR_SEND); };
  q->wr_send_inv = [](ibv_qp_ex* x, uint32_t rkey) {
    add(x, IBV_WR_SEND_WITH_INV);
    last(x)->invalidate_rkey = rkey;
  };
  q->wr_rdma_write = [](ibv_qp_ex* x, uint32_t rkey, uint64_t addr) {
    add(x, IBV_WR_RDMA_WRITE);
    last(x)->wr.rdma = {addr, rkey};
  };
  q->wr_rdma_read = [](ibv_qp_ex* x, uint32_t rkey, uint64_t addr) {
    add(x, IBV_WR_RDMA_READ);
    last(x)->wr.rdma = {addr, rkey};
  };
  q->wr_atomic_cmp_swp = [](ibv_qp_ex* x, uint32_t rkey, uint64_t addr, uint64_t compare,
                            uint64_t swap) {
    add(x, IBV_WR_ATOMIC_CMP_AND_SWP);
    last(x)->wr.atomic = {addr, compare, swap, rkey};
  };
  q->wr_atomic_fetch_add = [](ibv_qp_ex* x, uint32_t rkey, uint64_t addr, uint64_t add_value) {
    add(x, IBV_WR_ATOMIC_FETCH_AND_ADD);
    last(x)->wr.atomic = {addr, add_value, 0, rkey};
  };
  q->wr_rdma_write_imm = [](ibv_qp_ex* x, uint32_t rkey, uint64_t addr, __be32 imm) {
    add(x, IBV_WR_RDMA_WRITE_WITH_IMM);
    last(x)->wr.rdma = {addr, rkey};
    last(x)->imm_data = imm;
  };
  q->wr_send_imm = [](ibv_qp_ex* x, __be32 imm) {
    add(x, IBV_WR_SEND_WITH_IMM);
    last(x)->imm_data = imm;
  };
  q->wr_local_inv = [](ibv_qp_ex* x, uint32_t rkey) {
    add(x, IBV_WR_LOCAL_INV);
    last(x)->invalidate_rkey = rkey;
  };
  q->wr_set_sge = [](ibv_qp_ex* x, uint32_t lkey, uint64_t addr, uint32_t len) {
    if (!last(x)) return;
    batch(x).sges.back() = {{addr, len, lkey}};
  };
  q->wr_set_sge_list = [](ibv_qp_ex* x, size_t n, const ibv_sge* l) {
    if (!last(x)) return;
    batch(x).sges.back().assign(l, l + n);
  };
  q->wr_set_inline_data = [](ibv_qp_ex* x, void* addr, size_t len) {
    ibv_data_buf d{addr, len};
    x->wr_set_inline_data_list(x, 1, &d);
  };
  q->wr_set_inline_data_list = [](ibv_qp_ex* x, size_t n, const ibv_data_buf* l) {
    ibv_send_wr* w = last(x);
    if (!w) return;
    std::vector<uint8_t>& bytes = batch(x).inl.back();
    bytes.clear();
    for (size_t i = 0; i < n; ++i) {
      const auto* p = static_cast<const uint8_t*>(l[i].addr);
      bytes.insert(bytes.end(), p, p + l[i].length);
    }
    w->send_flags |= IBV_SEND_INLINE;
    batch(x).sges.back() = {{reinterpret_cast<uint64_t>(bytes.data()), uint32_t(bytes.size()), 0}};
  };
  // What the card does not do: wr_complete says so.
  q->wr_bind_mw = [](ibv_qp_ex* x, ibv_mw*, uint32_t, const ibv_mw_bind_info*) { refuse(x); };
  q->wr_send_tso = [](ibv_qp_ex* x, void*, uint16_t, uint16_t) { refuse(x); };
  q->wr_set_ud_addr = [](ibv_qp_ex* x, ibv_ah*, uint32_t, uint32_t) { refuse(x); };
  q->wr_set_xrc_srqn = [](ibv_qp_ex* x, uint32_t) { refuse(x); };
  q->wr_atomic_write = [](ibv_qp_ex* x, uint32_t, uint64_t, const void*) { refuse(x); };
}
inline void forget_qp_ex(const ibv_qp_ex* q) { detail::qp_ex_batches().erase(q); }

// A provider's create_cq_ex and create_qp_ex operations over its ibv_create_cq and
// ibv_create_qp, whose objects (CqT, QpT) hold the extended struct as their member `ex`: the
// attributes checked (a refusal through Refuse::say), the object made, its extended operations
// filled. A QP made without send_ops_flags has none (qp_ex_of).
template <class CqT, int (*Poll)(ibv_cq*, int, ibv_wc*), class Refuse>
ibv_cq_ex* create_cq_ex(ibv_context* c, ibv_cq_init_attr_ex* a) {
  if (!cq_ex_attr_ok(a))
    return Refuse::template say<ibv_cq_ex*>(
        "ibv_create_cq_ex with a field the card does not report", nullptr);
  ibv_cq* cq = ibv_create_cq(c, int(a->cqe), a->cq_context, a->channel, int(a->comp_vector));
  if (!cq) return nullptr;
  ibv_cq_ex* ex = &reinterpret_cast<CqT*>(cq)->ex;
  fill_cq_ex<Poll>(ex);
  return ex;
}
template <class QpT, int (*Post)(ibv_qp*, ibv_send_wr*, ibv_send_wr**), class Refuse>
ibv_qp* create_qp_ex(ibv_context*, ibv_qp_init_attr_ex* a) {
  if (!qp_ex_attr_ok(a))
    return Refuse::template say<ibv_qp*>("ibv_create_qp_ex with what the card does not do",
                                         nullptr);
  ibv_qp_init_attr b = qp_init_attr_of(*a);
  ibv_qp* qp = ibv_create_qp(a->pd, &b);
  if (!qp) return nullptr;
  a->cap = b.cap;
  if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
    fill_qp_ex<Post>(&reinterpret_cast<QpT*>(qp)->ex);
  return qp;
}
// ibv_qp_to_qp_ex's answer: the QP's extended struct if it has the extended post-send.
inline ibv_qp_ex* qp_ex_of(ibv_qp_ex* ex) { return ex && ex->wr_start ? ex : nullptr; }

}  // namespace rnic::host
