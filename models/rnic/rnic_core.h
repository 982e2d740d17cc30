// The RNIC Core (DESIGN.md §3.3) as the assembly of its engines: the host interface
// (host_if.h), the SQ engine (sq_engine.h), the RX engine (rx_engine.h), the read-response
// engine (read_response_engine.h) and the completion engine (completion_engine.h), over
// rnic_xlat (xlat_channel.h) and ddp_rx_parse (ddp_rx_parse_channel.h) and the DMAC (dmac.h).
// Segments go out and come in through the card's transport (models/common/transport.h).
//
// Each engine is its own module with its own state and event queue; they reach each other only
// through the channels wired here (engine_msgs.h says what each carries), each crossing in 0
// cycles. Each engine's header gives its latencies in cycles and its queue depths; the core adds
// none of its own. The channels, sender -> receiver:
//
//   host interface  -> SQ, RX, read-response   QpUpdate (every change of a QP's context)
//   host interface  -> SQ                      SQ WQEs          -> RX  RQ WQEs
//   SQ, RX          -> host interface          QpErrorMsg       completion -> host  CQ overflow
//   RX              -> SQ                      AckMsg, ReadDoneMsg, PeerTermMsg, TermReqMsg
//   SQ              -> RX                      ReadIssuedMsg, TermSentMsg
//   RX              -> read-response           ReadReqMsg       read-response -> RX  IrdFreeMsg
//   read-response   -> SQ                      RespOfferMsg     SQ -> read-response  RespTakenMsg
#pragma once

#include <memory>
#include <string>
#include <systemc>

#include "models/common/channel.h"
#include "models/common/stats.h"
#include "models/common/transport.h"
#include "models/rnic/completion/completion_engine.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/engine_msgs.h"
#include "models/rnic/firmware/firmware.h"
#include "models/rnic/host_if/host_if.h"
#include "models/rnic/host_if/rnic_regs.h"
#include "models/rnic/read_response/read_response_engine.h"
#include "models/rnic/rx/rx_engine.h"
#include "models/rnic/rx_parse/ddp_rx_parse_channel.h"
#include "models/rnic/sq/sq_engine.h"
#include "models/rnic/xlat/xlat_channel.h"

namespace rnic {

class RnicCore : public sc_core::sc_module {
 public:
  static constexpr uint64_t kHeaderCycles = SqEngine::kHeaderCycles;
  static constexpr uint64_t kRingFetchCycles = HostInterface::kRingFetchCycles;
  static constexpr uint32_t kAsyncVector = HostInterface::kAsyncVector;
  using Probe = CoreProbe;

  RnicCore(sc_core::sc_module_name n, const CoreConfig& cfg, const FirmwareConfig& fw,
           RnicDmac& dmac, RnicRegs& regs, Transport& transport, StatRegistry& stats,
           const RxParseFactory& rx_parse = rx_parse_model_factory(),
           const XlatFactory& xlat = xlat_model_factory());

  // Timing probe (latency tests and breakdowns): when set, every engine calls it at the points
  // of CoreProbe (engine_msgs.h).
  ProbeFn probe;

  std::string dump_state() const;

  // Waveform: every engine's input channels (occupancy and messages), and the state of QPs
  // 0 .. kTracedQps - 1 (abi::QpState) with their SQ and RQ doorbell counts.
  static constexpr uint32_t kTracedQps = 8;
  void trace(TraceSink& t) const;

 private:
  std::unique_ptr<XlatChannel> xlat_;
  CompletionEngine completion_;
  HostInterface host_;
  Firmware firmware_;
  SqEngine sq_;
  RxEngine rx_;
  ReadResponseEngine responses_;
};

}  // namespace rnic
