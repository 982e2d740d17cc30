#include "models/host/verbs/qp_state.h"

#include <fmt/format.h>

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
constexpr int kRtsOptional = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER;

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
                kRtrIb | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX};
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

namespace {
const char* state_name(ibv_qp_state s) {
  static const char* const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
  return s >= IBV_QPS_RESET && s <= IBV_QPS_ERR ? names[s] : "an unknown state";
}

// The attribute mask bits of `bits` by name ("bit N" for bits ibv_qp_attr_mask has none for).
std::string mask_names(int bits) {
  static const char* const names[] = {"IBV_QP_STATE",
                                      "IBV_QP_CUR_STATE",
                                      "IBV_QP_EN_SQD_ASYNC_NOTIFY",
                                      "IBV_QP_ACCESS_FLAGS",
                                      "IBV_QP_PKEY_INDEX",
                                      "IBV_QP_PORT",
                                      "IBV_QP_QKEY",
                                      "IBV_QP_AV",
                                      "IBV_QP_PATH_MTU",
                                      "IBV_QP_TIMEOUT",
                                      "IBV_QP_RETRY_CNT",
                                      "IBV_QP_RNR_RETRY",
                                      "IBV_QP_RQ_PSN",
                                      "IBV_QP_MAX_QP_RD_ATOMIC",
                                      "IBV_QP_ALT_PATH",
                                      "IBV_QP_MIN_RNR_TIMER",
                                      "IBV_QP_SQ_PSN",
                                      "IBV_QP_MAX_DEST_RD_ATOMIC",
                                      "IBV_QP_PATH_MIG_STATE",
                                      "IBV_QP_CAP",
                                      "IBV_QP_DEST_QPN"};
  std::string s;
  for (int b = 0; b < 31; ++b) {
    if (!(bits & (1 << b))) continue;
    if (!s.empty()) s += ", ";
    s += b < int(sizeof names / sizeof *names) ? names[b] : fmt::format("bit {}", b);
  }
  return s;
}
}  // namespace

int qp_transition_check(ibv_qp_state cur, ibv_qp_state next, int mask, std::string* why) {
  std::string w;
  const auto refuse = [&](std::string s) {
    if (why) *why = std::move(s);
    return EINVAL;
  };
  if (cur < IBV_QPS_RESET || cur > IBV_QPS_ERR) return refuse("the QP is in an unknown state");
  if (!(mask & IBV_QP_STATE)) next = cur;  // attributes only, in the current state
  if (next < IBV_QPS_RESET || next > IBV_QPS_ERR)
    return refuse(fmt::format("qp_state {}: not a QP state", int(next)));
  const Rule r = rule(cur, next);
  if (!r.valid)
    return refuse(fmt::format("{} -> {}: not a transition", state_name(cur), state_name(next)));
  const int attrs = mask & ~IBV_QP_STATE;
  if ((attrs & r.required) != r.required && (mask & IBV_QP_STATE))
    return refuse(fmt::format("{} -> {} needs {}", state_name(cur), state_name(next),
                              mask_names(r.required & ~attrs)));
  if (attrs & ~(r.required | r.optional))
    return refuse(fmt::format("{} -> {} does not take {}", state_name(cur), state_name(next),
                              mask_names(attrs & ~(r.required | r.optional))));
  return 0;
}

int qp_attr_check(const ibv_qp_attr& a, int mask, const QpAttrLimits& l, std::string* why) {
  const auto refuse = [why](std::string s) {
    *why = std::move(s);
    return EINVAL;
  };
  if ((mask & IBV_QP_PORT) && a.port_num != 1)
    return refuse(fmt::format("port_num {}: the card has one port, 1", a.port_num));
  if ((mask & IBV_QP_PKEY_INDEX) && a.pkey_index != 0)
    return refuse(fmt::format("pkey_index {}: the P_Key table has one entry, 0", a.pkey_index));
  if (mask & IBV_QP_AV) {
    if (!a.ah_attr.is_global)
      return refuse(
          "ah_attr.is_global 0: LID addressing without a GRH; the card reaches its peer by the "
          "GID in ah_attr.grh.dgid (set is_global to 1)");
    if (a.ah_attr.port_num > 1)
      return refuse(
          fmt::format("ah_attr.port_num {}: the card has one port, 1", a.ah_attr.port_num));
  }
  if ((mask & IBV_QP_PATH_MTU) && (a.path_mtu < IBV_MTU_256 || a.path_mtu > IBV_MTU_4096))
    return refuse(
        fmt::format("path_mtu {}: not an ibv_mtu (IBV_MTU_256 to IBV_MTU_4096)", int(a.path_mtu)));
  if ((mask & IBV_QP_TIMEOUT) && a.timeout > 31)
    return refuse(fmt::format("timeout {}: 0 to 31 (4.096 us x 2^timeout)", a.timeout));
  if ((mask & IBV_QP_RETRY_CNT) && a.retry_cnt > 7)
    return refuse(fmt::format("retry_cnt {}: 0 to 7", a.retry_cnt));
  if ((mask & IBV_QP_RNR_RETRY) && a.rnr_retry > 7)
    return refuse(fmt::format("rnr_retry {}: 0 to 7", a.rnr_retry));
  if ((mask & IBV_QP_MIN_RNR_TIMER) && a.min_rnr_timer > 31)
    return refuse(fmt::format("min_rnr_timer {}: 0 to 31", a.min_rnr_timer));
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a.max_rd_atomic > l.max_rd_atomic)
    return refuse(fmt::format("max_rd_atomic {}: the device's max_qp_init_rd_atom is {}",
                              a.max_rd_atomic, l.max_rd_atomic));
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a.max_dest_rd_atomic > l.max_dest_rd_atomic)
    return refuse(fmt::format("max_dest_rd_atomic {}: the device's max_qp_rd_atom is {}",
                              a.max_dest_rd_atomic, l.max_dest_rd_atomic));
  return 0;
}

uint64_t read_timeout_ns(uint8_t timeout, uint8_t retry_cnt) {
  if (timeout == 0) return 0;
  return (uint64_t(4096) << timeout) * (uint64_t(retry_cnt) + 1);
}

uint32_t path_mtu_bytes(ibv_mtu m) { return uint32_t(128) << int(m); }

}  // namespace rnic
