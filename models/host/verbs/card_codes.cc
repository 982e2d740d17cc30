#include "models/host/verbs/card_codes.h"

namespace rnic::host {

ibv_qp_state to_ibv(abi::QpState s) {
  switch (s) {
    case abi::kQpReset:
      return IBV_QPS_RESET;
    case abi::kQpInit:
      return IBV_QPS_INIT;
    case abi::kQpRtr:
      return IBV_QPS_RTR;
    case abi::kQpRts:
      return IBV_QPS_RTS;
    case abi::kQpSqd:
      return IBV_QPS_SQD;
    case abi::kQpSqe:
      return IBV_QPS_SQE;
    case abi::kQpError:
      return IBV_QPS_ERR;
  }
  return IBV_QPS_UNKNOWN;
}

abi::QpState to_card(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET:
      return abi::kQpReset;
    case IBV_QPS_INIT:
      return abi::kQpInit;
    case IBV_QPS_RTR:
      return abi::kQpRtr;
    case IBV_QPS_RTS:
      return abi::kQpRts;
    case IBV_QPS_SQD:
      return abi::kQpSqd;
    case IBV_QPS_SQE:
      return abi::kQpSqe;
    default:
      return abi::kQpError;
  }
}

ibv_event_type to_ibv(abi::AsyncEvent e) {
  switch (e) {
    case abi::kEvCqError:
      return IBV_EVENT_CQ_ERR;
    case abi::kEvQpFatal:
      return IBV_EVENT_QP_FATAL;
    case abi::kEvQpReqError:
      return IBV_EVENT_QP_REQ_ERR;
    case abi::kEvQpAccessError:
      return IBV_EVENT_QP_ACCESS_ERR;
    case abi::kEvSrqError:
      return IBV_EVENT_SRQ_ERR;
  }
  return IBV_EVENT_DEVICE_FATAL;
}

ibv_wc_status to_ibv(abi::CqeStatus s) {
  switch (s) {
    case abi::kCqeSuccess:
      return IBV_WC_SUCCESS;
    case abi::kCqeLocLenError:
      return IBV_WC_LOC_LEN_ERR;
    case abi::kCqeLocQpOpError:
      return IBV_WC_LOC_QP_OP_ERR;
    case abi::kCqeLocProtError:
      return IBV_WC_LOC_PROT_ERR;
    case abi::kCqeFlushed:
      return IBV_WC_WR_FLUSH_ERR;
    case abi::kCqeRemInvReqError:
      return IBV_WC_REM_INV_REQ_ERR;
    case abi::kCqeRemAccessError:
      return IBV_WC_REM_ACCESS_ERR;
    case abi::kCqeRemOpError:
      return IBV_WC_REM_OP_ERR;
    case abi::kCqeRetryExceeded:
      return IBV_WC_RETRY_EXC_ERR;
  }
  return IBV_WC_GENERAL_ERR;
}

ibv_wc_opcode to_ibv(abi::CqeOpcode o) {
  switch (o) {
    case abi::kCqeSend:
      return IBV_WC_SEND;
    case abi::kCqeRdmaWrite:
      return IBV_WC_RDMA_WRITE;
    case abi::kCqeRdmaRead:
      return IBV_WC_RDMA_READ;
    case abi::kCqeCompSwap:
      return IBV_WC_COMP_SWAP;
    case abi::kCqeFetchAdd:
      return IBV_WC_FETCH_ADD;
    case abi::kCqeRecv:
      return IBV_WC_RECV;
    case abi::kCqeRecvRdmaWithImm:
      return IBV_WC_RECV_RDMA_WITH_IMM;
    case abi::kCqeLocalInv:
      return IBV_WC_LOCAL_INV;
    case abi::kCqeFastRegMr:
      return RNIC_WC_FAST_REG_MR;
  }
  return IBV_WC_SEND;
}

unsigned to_ibv_wc_flags(uint8_t card_flags) {
  return ((card_flags & abi::kCqeWithInv) ? unsigned(IBV_WC_WITH_INV) : 0u) |
         ((card_flags & abi::kCqeWithImm) ? unsigned(IBV_WC_WITH_IMM) : 0u);
}

bool to_card(ibv_wr_opcode op, abi::WqeOpcode* out) {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
      *out = abi::kOpRdmaWrite;
      return true;
    case IBV_WR_SEND:
      *out = abi::kOpSend;
      return true;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      *out = abi::kOpRdmaWriteWithImm;
      return true;
    case IBV_WR_SEND_WITH_IMM:
      *out = abi::kOpSendWithImm;
      return true;
    case IBV_WR_RDMA_READ:
      *out = abi::kOpRdmaRead;
      return true;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      *out = abi::kOpAtomicCmpSwp;
      return true;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      *out = abi::kOpAtomicFetchAdd;
      return true;
    case IBV_WR_SEND_WITH_INV:
      *out = abi::kOpSendWithInv;
      return true;
    case IBV_WR_LOCAL_INV:
      *out = abi::kOpLocalInv;
      return true;
    case RNIC_WR_FAST_REG_MR:
      *out = abi::kOpFastRegMr;
      return true;
    default:
      return false;
  }
}

uint8_t to_card_send_flags(unsigned f) {
  return uint8_t(((f & IBV_SEND_SIGNALED) ? abi::kWqeSignaled : 0) |
                 ((f & IBV_SEND_SOLICITED) ? abi::kWqeSolicited : 0));
}

uint8_t to_card_access(unsigned a) {
  return uint8_t(((a & IBV_ACCESS_LOCAL_WRITE) ? abi::access::kLocalWrite : 0) |
                 ((a & IBV_ACCESS_REMOTE_WRITE) ? abi::access::kRemoteWrite : 0) |
                 ((a & IBV_ACCESS_REMOTE_READ) ? abi::access::kRemoteRead : 0) |
                 ((a & IBV_ACCESS_REMOTE_ATOMIC) ? abi::access::kRemoteAtomic : 0));
}

}  // namespace rnic::host
