// The card's codes (models/rnic/abi/codes.h) and rdma-core's, mapped by name in both directions:
// what the driver and the verbs library translate at the card's boundary. A card code with no
// rdma-core counterpart maps to the nearest general one (documented per function).
#pragma once

#include <cstdint>

#include "models/host/verbs/verbs_enums.h"
#include "models/rnic/abi/codes.h"

namespace rnic::host {

ibv_qp_state to_ibv(abi::QpState s);
abi::QpState to_card(ibv_qp_state s);
// Unknown card events map to IBV_EVENT_DEVICE_FATAL.
ibv_event_type to_ibv(abi::AsyncEvent e);
// Unknown card statuses map to IBV_WC_GENERAL_ERR.
ibv_wc_status to_ibv(abi::CqeStatus s);
ibv_wc_opcode to_ibv(abi::CqeOpcode o);
// CQE flags to ibv_wc_flags bits.
unsigned to_ibv_wc_flags(uint8_t card_flags);
// ibv_wr_opcode to the WQE's; false for an opcode the card does not take.
bool to_card(ibv_wr_opcode op, abi::WqeOpcode* out);
// ibv_send_flags bits to WQE flags (the card has no fence or inline).
uint8_t to_card_send_flags(unsigned ibv_flags);
// IBV_ACCESS_* bits to the card's access rights.
uint8_t to_card_access(unsigned ibv_access);

}  // namespace rnic::host
