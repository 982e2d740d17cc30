// The QP state machine's transition rules for ibv_modify_qp (RC QPs; DESIGN.md §3.3, §5).
//
// Allowed transitions: RESET -> INIT; INIT -> INIT, RTR; RTR -> RTS; RTS -> RTS, SQD;
// SQD -> SQD, RTS; SQE -> RTS; and any state -> RESET or ERR.
// Attributes: each transition allows the attributes of the kernel's RC table (so an InfiniBand
// style program that sets PSNs, timeouts and P_Key still runs); of those, an iWARP RNIC needs:
//   RESET -> INIT  IBV_QP_PORT, IBV_QP_ACCESS_FLAGS
//   INIT  -> RTR   IBV_QP_AV (the peer's GID in ah_attr.grh.dgid), IBV_QP_DEST_QPN
//   RTR   -> RTS   nothing (IBV_QP_MAX_QP_RD_ATOMIC sets ORD; MAX_DEST_RD_ATOMIC at RTR: IRD)
// A mask without IBV_QP_STATE modifies attributes in the current state (allowed attributes of
// cur -> cur). Anything else: EINVAL, and the QP is unchanged (docs/verbs.md).
// Alternate paths (IBV_QP_ALT_PATH, IBV_QP_PATH_MIG_STATE) have no iWARP meaning the card could
// honour: refused in every transition.
#pragma once

#include <string>

#include "models/host/verbs/verbs.h"
#include "models/host/verbs/verbs_enums.h"

namespace rnic {

// 0 if the transition with this attribute mask is legal, EINVAL otherwise (`why`, when given:
// the transition, or the mask bits it lacks or does not take, by name).
int qp_transition_check(ibv_qp_state cur, ibv_qp_state next, int attr_mask,
                        std::string* why = nullptr);

// The values of the attributes `mask` sets, against what the card honours (docs/verbs.md): 0,
// or EINVAL with `why` naming the field and its value.
struct QpAttrLimits {
  int max_rd_atomic = 0;       // the device's max_qp_init_rd_atom (ORD)
  int max_dest_rd_atomic = 0;  // the device's max_qp_rd_atom (IRD)
};
int qp_attr_check(const ibv_qp_attr& a, int mask, const QpAttrLimits& l, std::string* why);

// The requester's Read Response timer the attributes give, in ns: 4.096 us x 2^timeout x
// (retry_cnt + 1), as InfiniBand encodes its timeout; 0 (timeout 0) means none.
uint64_t read_timeout_ns(uint8_t timeout, uint8_t retry_cnt);
// The largest segment payload path_mtu allows, in bytes (256 to 4096).
uint32_t path_mtu_bytes(ibv_mtu m);

}  // namespace rnic
