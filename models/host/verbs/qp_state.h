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
#pragma once

#include "models/host/verbs/verbs_enums.h"

namespace rnic {

// 0 if the transition with this attribute mask is legal, EINVAL otherwise.
int qp_transition_check(ibv_qp_state cur, ibv_qp_state next, int attr_mask);

}  // namespace rnic
