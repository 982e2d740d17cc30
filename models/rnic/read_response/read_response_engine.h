// The read-response engine (DESIGN.md §3.3): per QP, the inbound Read Requests the RX engine
// accepted (ReadResponseLogic, read_response.h, IRD entries), cut into Read Response segments
// of at most the path's payload and offered to the SQ engine's arbiter one at a time per QP
// (the SQ engine sends them in its issue slots, taking turns with the QP's SQ); an Atomic
// Request among them is offered as its Atomic Response (the SQ engine's atomic unit carries the
// operation out).
//
// Channels (engine_msgs.h): takes ReadReqMsg (RX engine), RespTakenMsg (SQ engine) and
// QpUpdate (host interface); gives RespOfferMsg (SQ engine) and IrdFreeMsg (RX engine).
// Timing: 0 cycles: a request's first segment is offered on the edge it arrives, the next one
// on the edge its predecessor is taken. Depths: IRD requests per QP (core.ird), one offer per
// QP in flight.
#pragma once

#include <systemc>
#include <vector>

#include "models/common/channel.h"
#include "models/common/event_queue.h"
#include "models/rnic/engine_msgs.h"
#include "models/rnic/read_response/read_response.h"
#include "models/rnic/rnic_params.h"

namespace rnic {

class ReadResponseEngine : public sc_core::sc_module {
 public:
  ReadResponseEngine(sc_core::sc_module_name n, const CoreConfig& cfg, uint32_t max_payload);

  struct In {
    Channel<ReadReqMsg> request;
    Channel<RespTakenMsg> taken;
    Channel<QpUpdate> update;
  } in;
  struct Out {
    Channel<RespOfferMsg>* offer = nullptr;
    Channel<IrdFreeMsg>* ird_free = nullptr;
  } out;

  size_t depth(uint32_t qpn) const { return logic_.depth(qpn); }

 private:
  void offer(uint32_t qpn);

  EventQueue eq_{"eq"};
  ClockDomain clk_;
  ReadResponseLogic logic_;
  uint32_t max_payload_;
  std::vector<QpCtx> ctx_;
  std::vector<uint8_t> offered_;       // a segment of the QP is offered and not yet taken
  std::vector<uint8_t> last_offered_;  // ... and it is its request's last
};

}  // namespace rnic
