#include "models/rnic/rnic_core.h"

namespace rnic {

RnicCore::RnicCore(sc_core::sc_module_name n, const CoreConfig& cfg, const FirmwareConfig& fw,
                   RnicDmac& dmac, RnicRegs& regs, Transport& transport, StatRegistry& stats,
                   const RxParseFactory& rx_parse, const XlatFactory& xlat)
    : sc_core::sc_module(n),
      xlat_(xlat({"xlat", ClockDomain::mhz(cfg.clk_mhz)},
                 {size_t(cfg.stags), size_t(cfg.pbl_entries)})),
      completion_("completion", cfg, dmac, regs, stats, name()),
      host_("host_if", cfg, dmac, regs, completion_, probe, stats, name()),
      firmware_("firmware", fw, uint32_t(cfg.cqs), dmac, regs, {*xlat_, completion_.table(), host_},
                probe, stats, std::string(name()) + ".firmware"),
      sq_("sq", cfg, dmac, firmware_.engine_xlat(), transport, completion_, probe, stats, name()),
      rx_("rx", cfg, dmac, firmware_.engine_xlat(), transport, completion_, rx_parse, probe, stats,
          name()),
      responses_("read_response", cfg, sq_.max_payload(true)) {
  completion_.on_overflow = [this](uint32_t cqn) { host_.in.cq_overflow.send(cqn); };
  completion_.on_cqe = [this](uint32_t cqn, const Cqe& c, uint64_t addr) {
    if (probe)
      probe(ProbeEvent{CoreProbe::kCqe, cqn, now_ps(), c.wqe_index | uint64_t(c.qp_num) << 32,
                       c.opcode == abi::kCqeRecv ? 1u : 0u, addr});
  };
  sq_.local_ops = &firmware_;
  sq_.faults = &firmware_;
  rx_.faults = &firmware_;
  transport.can_take = [this](const MacAddr&, uint32_t qpn) { return rx_.can_take(qpn); };
  transport.accepts = [this](const MacAddr& peer, uint32_t remote_qpn, uint32_t qpn) {
    return rx_.accepts(peer, remote_qpn, qpn);
  };
  host_.out.update = {&sq_.in.update, &rx_.in.update, &responses_.in.update};
  host_.out.sq_wqe = &sq_.in.wqe;
  host_.out.rq_wqe = &rx_.in.wqe;
  host_.out.close = &sq_.in.close;
  sq_.out.error = &host_.in.error;
  sq_.out.read_issued = &rx_.in.read_issued;
  sq_.out.term_sent = &rx_.in.term_sent;
  sq_.out.taken = &responses_.in.taken;
  rx_.out.error = &host_.in.error;
  rx_.out.ack = &sq_.in.ack;
  rx_.out.read_done = &sq_.in.read_done;
  rx_.out.peer_term = &sq_.in.peer_term;
  rx_.out.term_req = &sq_.in.term_req;
  rx_.out.reset = &sq_.in.reset;
  rx_.out.read_req = &responses_.in.request;
  responses_.out.offer = &sq_.in.offer;
  responses_.out.ird_free = &rx_.in.ird_free;
}

void RnicCore::trace(TraceSink& t) const {
  trace_channel(t, host_.in.error);
  trace_channel(t, host_.in.cq_overflow);
  for (auto* c : {&sq_.in.wqe, &rx_.in.wqe}) trace_channel(t, *c);
  for (auto* c : {&sq_.in.update, &rx_.in.update, &responses_.in.update}) trace_channel(t, *c);
  trace_channel(t, sq_.in.ack);
  trace_channel(t, sq_.in.read_done);
  trace_channel(t, sq_.in.peer_term);
  trace_channel(t, sq_.in.term_req);
  trace_channel(t, sq_.in.offer);
  trace_channel(t, sq_.in.close);
  trace_channel(t, sq_.in.reset);
  trace_channel(t, rx_.in.read_issued);
  trace_channel(t, rx_.in.term_sent);
  trace_channel(t, rx_.in.ird_free);
  trace_channel(t, responses_.in.request);
  trace_channel(t, responses_.in.taken);
  trace_channel(t, completion_.in);
  rx_.trace(t);
  const std::string scope = std::string(name()) + ".qp";
  for (uint32_t q = 0; q < kTracedQps; ++q)
    t.add_value(scope, "qp" + std::to_string(q) + "_state", 3,
                [this, q] { return host_.qp_state(q); });
}

std::string RnicCore::dump_state() const {
  return firmware_.dump_state() + host_.dump_state() + sq_.dump_state() + rx_.dump_state();
}

}  // namespace rnic
