// The operations of rdma-core's contexts for what the card does not do: each refuses, as
// rdma-core answers for a provider without the verb (EOPNOTSUPP, as the return value or as errno
// with NULL), through Refuse::say(verb, value), which names the verb once (a log line in the
// simulator, a line on stderr in an executable's preload library: sim/exec/exec_preload.cc).
// Both fill a context with these first, then their own operations over them.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace rnic::host {

template <class Refuse>
void fill_unsupported_ops(verbs_context& v) {
  ibv_context_ops& o = v.context.ops;
  o.alloc_mw = [](ibv_pd*, ibv_mw_type) {
    return Refuse::template say<ibv_mw*>("ibv_alloc_mw", nullptr);
  };
  o.dealloc_mw = [](ibv_mw*) { return Refuse::say("ibv_dealloc_mw", EOPNOTSUPP); };
  o.bind_mw = [](ibv_qp*, ibv_mw*, ibv_mw_bind*) { return Refuse::say("ibv_bind_mw", EOPNOTSUPP); };
  o.post_srq_recv = [](ibv_srq*, ibv_recv_wr*, ibv_recv_wr**) {
    return Refuse::say("ibv_post_srq_recv", EOPNOTSUPP);
  };
  v.create_cq_ex = [](ibv_context*, ibv_cq_init_attr_ex*) {
    return Refuse::template say<ibv_cq_ex*>("ibv_create_cq_ex", nullptr);
  };
  v.create_qp_ex = [](ibv_context*, ibv_qp_init_attr_ex*) {
    return Refuse::template say<ibv_qp*>("ibv_create_qp_ex", nullptr);
  };
  v.create_srq_ex = [](ibv_context*, ibv_srq_init_attr_ex*) {
    return Refuse::template say<ibv_srq*>("ibv_create_srq_ex", nullptr);
  };
  v.get_srq_num = [](ibv_srq*, uint32_t*) { return Refuse::say("ibv_get_srq_num", EOPNOTSUPP); };
  v.open_qp = [](ibv_context*, ibv_qp_open_attr*) {
    return Refuse::template say<ibv_qp*>("ibv_open_qp", nullptr);
  };
  v.open_xrcd = [](ibv_context*, ibv_xrcd_init_attr*) {
    return Refuse::template say<ibv_xrcd*>("ibv_open_xrcd", nullptr);
  };
  v.close_xrcd = [](ibv_xrcd*) { return Refuse::say("ibv_close_xrcd", EOPNOTSUPP); };
  v.query_rt_values = [](ibv_context*, ibv_values_ex*) {
    return Refuse::say("ibv_query_rt_values_ex", EOPNOTSUPP);
  };
  v.alloc_dm = [](ibv_context*, ibv_alloc_dm_attr*) {
    return Refuse::template say<ibv_dm*>("ibv_alloc_dm", nullptr);
  };
  v.free_dm = [](ibv_dm*) { return Refuse::say("ibv_free_dm", EOPNOTSUPP); };
  v.reg_dm_mr = [](ibv_pd*, ibv_dm*, uint64_t, size_t, unsigned int) {
    return Refuse::template say<ibv_mr*>("ibv_reg_dm_mr", nullptr);
  };
  v.alloc_null_mr = [](ibv_pd*) {
    return Refuse::template say<ibv_mr*>("ibv_alloc_null_mr", nullptr);
  };
  v.alloc_td = [](ibv_context*, ibv_td_init_attr*) {
    return Refuse::template say<ibv_td*>("ibv_alloc_td", nullptr);
  };
  v.dealloc_td = [](ibv_td*) { return Refuse::say("ibv_dealloc_td", EOPNOTSUPP); };
  v.alloc_parent_domain = [](ibv_context*, ibv_parent_domain_init_attr*) {
    return Refuse::template say<ibv_pd*>("ibv_alloc_parent_domain", nullptr);
  };
  v.modify_cq = [](ibv_cq*, ibv_modify_cq_attr*) {
    return Refuse::say("ibv_modify_cq", EOPNOTSUPP);
  };
  v.modify_qp_rate_limit = [](ibv_qp*, ibv_qp_rate_limit_attr*) {
    return Refuse::say("ibv_modify_qp_rate_limit", EOPNOTSUPP);
  };
  v.create_wq = [](ibv_context*, ibv_wq_init_attr*) {
    return Refuse::template say<ibv_wq*>("ibv_create_wq", nullptr);
  };
  v.create_rwq_ind_table = [](ibv_context*, ibv_rwq_ind_table_init_attr*) {
    return Refuse::template say<ibv_rwq_ind_table*>("ibv_create_rwq_ind_table", nullptr);
  };
  v.ibv_create_flow = [](ibv_qp*, ibv_flow_attr*) {
    return Refuse::template say<ibv_flow*>("ibv_create_flow", nullptr);
  };
  v.create_counters = [](ibv_context*, ibv_counters_init_attr*) {
    return Refuse::template say<ibv_counters*>("ibv_create_counters", nullptr);
  };
  v.create_flow_action_esp = [](ibv_context*, ibv_flow_action_esp_attr*) {
    return Refuse::template say<ibv_flow_action*>("ibv_create_flow_action_esp", nullptr);
  };
}

}  // namespace rnic::host
