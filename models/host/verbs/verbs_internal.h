// What the verbs library keeps behind rdma-core's structs (models/host/verbs/verbs.cc), for the
// simulator's and the tests' eyes only: a program sees rdma-core's public fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/host/verbs/verbs.h"

namespace sc_core {
class sc_event;
}

namespace rnic::host {
class Driver;
class Process;
// The driver of the card a context was opened on, and the process that opened it.
Driver& context_driver(const ibv_context* context);
Process& context_process(const ibv_context* context);
// The host and process the calling simulated thread is bound to (bind_current_process).
ProcessContext current_process();
// Whether a completion channel has an event for ibv_get_cq_event to take, and the event
// notified when one is added: what a poll of the channel's descriptor waits on.
bool channel_has_event(ibv_comp_channel* channel);
const sc_core::sc_event& channel_event(ibv_comp_channel* channel);
// The same of a context's async events (ibv_get_async_event; its async_fd).
bool async_has_event(ibv_context* context);
const sc_core::sc_event& async_event_of(ibv_context* context);
// The management network's send (host.mgmt_latency_ns, host.mgmt_gbps): `bytes` sent now by the
// calling process's host, behind what it sent before, reach the peer at the time returned (ps).
// The out-of-band board and traffic::Oob share each host's sending side.
uint64_t mgmt_send(size_t bytes);
// The out-of-band board over several processes of one run: every put is handed to `forward`
// (the simulator sends it to the other processes), and what another process put arrives through
// oob_arrived. A put is known by the time it is seen (`at_ps`), then its host's MAC (`host`) and
// that host's count of puts (`seq`): a get at t sees the last put by that order with at_ps <= t,
// wherever it was made, so the order of processes never decides what a get sees.
struct OobPut {
  std::string key;
  std::vector<uint8_t> bytes;
  uint64_t at_ps = 0, host = 0, seq = 0;
};
void oob_set_forward(std::function<void(const OobPut&)> forward);
void oob_arrived(OobPut put);
// The PBL entries an MR's registration took (one per page of each extent).
uint32_t mr_pbl_count(const ibv_mr* mr);
// ibv_modify_qp without its state-transition and attribute checks: the connection manager's
// own moves of a QP (as the kernel's iWARP connection manager makes them), for example RTR to
// RTS with the peer's QP number learnt from its reply; role: the QP's side of its connection
// (abi::ConnRole: the initiator is active, the acceptor passive); local_port, remote_port: the
// connection's ports (rdma_cm's source and destination: MPA/TCP's TCP ports; 0: the card's rule).
int cm_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask, uint8_t role = 0, uint16_t local_port = 0,
                 uint16_t remote_port = 0);
// The calling program's busy wait until the len (1..8, within one page) bytes at addr differ
// from old, as rnic_wait_mem (cost.cq_poll_ns per look): 1 once they do, 0 after timeout_ns.
int wait_mem_change(const void* addr, const uint8_t* old, size_t len, uint64_t timeout_ns);
}  // namespace rnic::host
