#include "models/rnic/read_response/read_response_engine.h"

#include <algorithm>

#include "models/rnic/latency_mutation.h"

namespace rnic {

namespace {
// Cycles from a request's arrival (or the previous segment's taking) to the next offer.
constexpr uint64_t kOfferCycles = 0 + mutation::extra(mutation::kReadResponse);
}  // namespace

ReadResponseEngine::ReadResponseEngine(sc_core::sc_module_name n, const CoreConfig& cfg,
                                       uint32_t max_payload)
    : sc_core::sc_module(n),
      in{{std::string(name()) + ".request", size_t(cfg.qps) * size_t(cfg.ird)},
         {std::string(name()) + ".taken", size_t(cfg.qps)},
         {std::string(name()) + ".update", 4 * size_t(cfg.qps)}},
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      logic_(size_t(cfg.qps)),
      max_payload_(max_payload),
      ctx_(size_t(cfg.qps)),
      offered_(size_t(cfg.qps)),
      last_offered_(size_t(cfg.qps)) {
  in.request.bind(eq_, [this](ReadReqMsg&& m) {
    if (m.epoch != ctx_[m.qpn].epoch || !ctx_[m.qpn].receives()) return;
    if (m.atomic)
      logic_.accept_atomic(m.qpn, m.ar, m.msn);
    else
      logic_.accept(m.qpn, m.rr, m.msn);
    if (!offered_[m.qpn]) offer(m.qpn);
  });
  in.taken.bind(eq_, [this](RespTakenMsg&& m) {
    if (!offered_[m.qpn]) return;  // cleared meanwhile
    offered_[m.qpn] = 0;
    if (last_offered_[m.qpn]) out.ird_free->send({m.qpn});
    if (logic_.pending(m.qpn)) offer(m.qpn);
  });
  in.update.bind(eq_, [this](QpUpdate&& u) {
    ctx_[u.qpn] = u.ctx;
    if (u.reset || u.flush) {
      logic_.clear(u.qpn);
      offered_[u.qpn] = 0;
    }
  });
}

void ReadResponseEngine::offer(uint32_t qpn) {
  RespOfferMsg m;
  m.qpn = qpn;
  m.epoch = ctx_[qpn].epoch;
  const uint32_t mtu = ctx_[qpn].mtu;  // the QP's path MTU, below the link's
  m.seg = logic_.next(qpn, mtu ? std::min(mtu, max_payload_) : max_payload_);
  m.more = logic_.pending(qpn);
  offered_[qpn] = 1;
  last_offered_[qpn] = m.seg.last;
  out.offer->send(std::move(m), now_ps() + kOfferCycles * clk_.period_ps);
}

}  // namespace rnic
