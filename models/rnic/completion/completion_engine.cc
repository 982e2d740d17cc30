#include "models/rnic/completion/completion_engine.h"

#include "models/rnic/latency_mutation.h"

namespace rnic {

bool CompletionLogic::create(uint32_t cqn, uint64_t base, uint32_t entries) {
  if (cqn >= cqs_.size() || cqs_[cqn].valid || entries == 0 || entries > max_cqe_) return false;
  cqs_[cqn] = CqContext{};
  cqs_[cqn].valid = true;
  cqs_[cqn].base = base;
  cqs_[cqn].entries = entries;
  return true;
}

bool CompletionLogic::destroy(uint32_t cqn) {
  if (!valid(cqn)) return false;
  cqs_[cqn] = CqContext{};
  return true;
}

void CompletionLogic::doorbell(uint32_t cqn, uint32_t ci, bool arm, bool solicited_only) {
  if (cqn >= cqs_.size()) return;
  CqContext& c = cqs_[cqn];
  const uint64_t wide = (c.pi & ~0xFFFFFFFFull) | ci;
  c.ci = wide > c.pi ? wide - (1ull << 32) : wide;
  if (arm) {
    c.armed = true;
    c.solicited_only = solicited_only;
  }
}

CompletionLogic::Post CompletionLogic::post(uint32_t cqn, uint64_t* addr, uint8_t* owner) {
  if (cqn >= cqs_.size()) return Post::kDropped;
  CqContext& c = cqs_[cqn];
  if (!c.valid || c.error) return Post::kDropped;
  if (c.pi - c.ci >= c.entries) {
    c.error = true;
    return Post::kOverflow;
  }
  *addr = c.base + (c.pi % c.entries) * kCqeBytes;
  *owner = ((c.pi / c.entries) & 1) ? 0 : 1;
  ++c.pi;
  return Post::kWrite;
}

bool CompletionLogic::notify(uint32_t cqn, bool solicited, bool error) {
  CqContext& c = cqs_[cqn];
  if (!c.valid || !c.armed || (c.solicited_only && !solicited && !error)) return false;
  c.armed = false;
  return true;
}

CompletionEngine::CompletionEngine(sc_core::sc_module_name n, const CoreConfig& cfg, RnicDmac& dmac,
                                   RnicRegs& regs, StatRegistry& stats,
                                   const std::string& stat_group)
    : sc_core::sc_module(n),
      in(std::string(name()) + ".in", 4 * size_t(cfg.qps) * size_t(cfg.max_qp_wr)),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      dmac_(dmac),
      regs_(regs),
      logic_(size_t(cfg.cqs), uint32_t(cfg.max_cqe)),
      cqes_(stats.group(stat_group).counter("cqes", "CQEs", "CQEs written")),
      overflows_(stats.group(stat_group).counter("cq_overflows", "CQs", "CQ overflows")) {
  in.bind(eq_, [this](Request&& r) { post(r.cqn, r.cqe); });
}

void CompletionEngine::post(uint32_t cqn, Cqe c) {
  uint64_t addr = 0;
  switch (logic_.post(cqn, &addr, &c.owner)) {
    case CompletionLogic::Post::kDropped:
      return;
    case CompletionLogic::Post::kOverflow:
      ++overflows_;
      if (on_overflow) on_overflow(cqn);
      return;
    case CompletionLogic::Post::kWrite:
      break;
  }
  const uint64_t step = uint64_t(cfg_.cqe_cycles) + mutation::extra(mutation::kCompletion);
  const uint64_t t = std::max(clk_.edge_after(now_ps(), step), next_ps_ + step * clk_.period_ps);
  next_ps_ = t;
  eq_.at(t, [this, cqn, addr, c] {
    if (!logic_.valid(cqn)) return;  // destroyed meanwhile
    if (on_cqe) on_cqe(cqn, c, addr);
    std::vector<uint8_t> d(kCqeBytes);
    encode(c, d.data());
    dmac_.write(addr, std::move(d));
    ++cqes_;
    if (logic_.notify(cqn, c.solicited, c.status != abi::kCqeSuccess) &&
        regs_.raise(reg::kIntCompletion) && regs_.msi_addr())
      dmac_.msi(regs_.msi_addr(), kFirstCqVector + cqn);
  });
}

}  // namespace rnic
