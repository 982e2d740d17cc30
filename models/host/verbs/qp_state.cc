#include "models/host/verbs/qp_state.h"

#include <cerrno>

namespace rnic {

namespace {

struct Rule {
  bool valid = false;
  int required = 0;
  int optional = 0;
};

constexpr int kRtrIb =
    IBV_QP_PATH_MTU | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRtsIb =
    IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
constexpr int kRtsOptional = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
                             IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE;

Rule rule(ibv_qp_state cur, ibv_qp_state next) {
  if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) return {true, 0, 0};
  switch (cur) {
    case IBV_QPS_RESET:
      if (next == IBV_QPS_INIT) return {true, IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX};
      break;
    case IBV_QPS_INIT:
      if (next == IBV_QPS_INIT)
        return {true, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS};
      if (next == IBV_QPS_RTR)
        return {true, IBV_QP_AV | IBV_QP_DEST_QPN,
                kRtrIb | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX};
      break;
    case IBV_QPS_RTR:
      if (next == IBV_QPS_RTS) return {true, 0, kRtsIb | kRtsOptional};
      break;
    case IBV_QPS_RTS:
      if (next == IBV_QPS_RTS) return {true, 0, kRtsOptional};
      if (next == IBV_QPS_SQD) return {true, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY};
      break;
    case IBV_QPS_SQD:
      if (next == IBV_QPS_RTS || next == IBV_QPS_SQD)
        return {true, 0,
                kRtsOptional | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
                    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_AV |
                    IBV_QP_PATH_MTU | IBV_QP_PORT};
      break;
    case IBV_QPS_SQE:
      if (next == IBV_QPS_RTS) return {true, 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS};
      break;
    default:
      break;
  }
  return {};
}

}  // namespace

int qp_transition_check(ibv_qp_state cur, ibv_qp_state next, int mask) {
  if (cur < IBV_QPS_RESET || cur > IBV_QPS_ERR) return EINVAL;
  if (!(mask & IBV_QP_STATE)) next = cur;  // attributes only, in the current state
  if (next < IBV_QPS_RESET || next > IBV_QPS_ERR) return EINVAL;
  const Rule r = rule(cur, next);
  if (!r.valid) return EINVAL;
  const int attrs = mask & ~IBV_QP_STATE;
  if ((attrs & r.required) != r.required && (mask & IBV_QP_STATE)) return EINVAL;
  if (attrs & ~(r.required | r.optional)) return EINVAL;
  return 0;
}

}  // namespace rnic
