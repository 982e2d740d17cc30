#include "models/rnic/firmware/firmware.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "models/common/log.h"
#include "models/rnic/abi/commands.h"

namespace rnic {

Firmware::Firmware(sc_core::sc_module_name n, const FirmwareConfig& cfg, uint32_t cq_count,
                   RnicDmac& dmac, RnicRegs& regs, Ports ports, const ProbeFn& probe,
                   StatRegistry& stats, const std::string& g)
    : sc_core::sc_module(n),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      vector_(reg::cmd_vector(cq_count)),
      dmac_(dmac),
      regs_(regs),
      ports_(ports),
      mark_(probe),
      commands_(stats.group(g).counter("commands", "commands", "commands the firmware completed")),
      errors_(stats.group(g).counter("command_errors", "commands",
                                     "commands completed with an error result")),
      bad_doorbells_(stats.group(g).counter(
          "bad_doorbells", "writes",
          "command producer writes ignored (backwards, or more than the queue's slots)")),
      busy_cycles_(
          stats.group(g).counter("busy_cycles", "cycles", "cycles the firmware's processor ran")) {
  regs_.set_command_listener(this);
}

void Firmware::command_doorbell(uint32_t producer) {
  const uint32_t posted = producer - taken_;
  if (int32_t(posted) < 0 || producer - done_ > reg::kCmdSlots) {
    log::warn("{}: command producer {} (taken {}, completed {}): ignored", name(), producer, taken_,
              done_);
    ++bad_doorbells_;
    return;
  }
  for (; taken_ != producer; ++taken_) {
    const uint8_t* s = regs_.cmd_slot(taken_);
    uint32_t w[16];
    std::memcpy(w, s, sizeof(w));
    Cmd c;
    c.seq = taken_ + 1;
    c.op = w[0] & 0xFF;
    c.flags = w[0] & ~0xFFu;
    std::copy(w + 1, w + 16, c.a.begin());
    mark_(CoreProbe::kCommand, 0, now_ps());
    cmds_.push_back(std::move(c));
  }
  kick();
}

Firmware::Cmd* Firmware::find(uint32_t seq) {
  for (Cmd& c : cmds_)
    if (c.seq == seq) return &c;
  return nullptr;
}

uint64_t Firmware::handler_cycles(uint32_t op) const {
  switch (op) {
    case abi::kCmdCreateCq:
    case abi::kCmdDestroyCq:
      return uint64_t(cfg_.cq_cycles);
    case abi::kCmdCreateQp:
    case abi::kCmdModifyQp:
    case abi::kCmdDestroyQp:
      return uint64_t(cfg_.qp_cycles);
    case abi::kCmdWriteStag:
    case abi::kCmdInvalidateStag:
    case abi::kCmdLoadPbl:
    case abi::kCmdFreeStag:
    case abi::kCmdRegMr:
      return uint64_t(cfg_.mr_cycles);
    default:
      return 0;  // refused at dispatch
  }
}

namespace {
// The list a REG_MR or LOAD_PBL reads: first PBLMT entry, count, host address, extents.
struct ListRead {
  uint32_t first = 0, count = 0;
  uint64_t addr = 0;
  bool extents = false;
};
bool list_read(uint32_t op, const uint32_t* a, ListRead* l) {
  if (op == abi::kCmdLoadPbl) {
    const auto c = abi::LoadPbl::decode(a);
    *l = {c.first, c.count, c.list, c.extents};
    return true;
  }
  if (op == abi::kCmdRegMr) {
    const auto c = abi::RegMr::decode(a);
    *l = {c.stag.pbl_first, c.stag.pbl_count, c.list, c.extents()};
    return true;
  }
  return false;
}
}  // namespace

uint64_t Firmware::entry_cycles(const Cmd& c) const {
  ListRead l;
  list_read(c.op, c.a.data(), &l);
  return uint64_t(l.count) * uint64_t(l.extents ? cfg_.extent_entry_cycles : cfg_.pbl_entry_cycles);
}

// The processor takes its next piece of work: one at a time, the oldest command's; pipelined, a
// command whose list has arrived first, else the oldest command not yet started.
void Firmware::kick() {
  if (busy_ || cmds_.empty()) return;
  Cmd* next = nullptr;
  if (!cfg_.pipelined) {
    if (cmds_.front().stage == Stage::kNew || cmds_.front().stage == Stage::kData)
      next = &cmds_.front();
  } else {
    for (Cmd& c : cmds_)
      if (!next && c.stage == Stage::kData) next = &c;
    for (Cmd& c : cmds_)
      if (!next && c.stage == Stage::kNew) next = &c;
  }
  if (!next) return;
  busy_ = true;
  const uint32_t seq = next->seq;
  const bool handler = next->stage == Stage::kNew;
  const uint64_t cycles =
      handler ? uint64_t(cfg_.dispatch_cycles) + handler_cycles(next->op) : entry_cycles(*next);
  busy_cycles_ += cycles;
  eq_.at(edge(cycles), [this, seq, handler] {
    busy_ = false;
    if (handler)
      handler_done(seq);
    else
      entries_done(seq);
    retire();
    kick();
  });
}

void Firmware::handler_done(uint32_t seq) {
  Cmd& c = *find(seq);
  c.stage = Stage::kReady;
  ListRead l;
  if (!list_read(c.op, c.a.data(), &l)) return;  // no list: its table writes come at completion
  if (l.count == 0 || uint64_t(l.first) + l.count > ports_.xlat.pbl_entries()) {
    c.result = EINVAL;
    return;
  }
  c.stage = Stage::kDma;
  dmac_.read(l.addr, l.count * (l.extents ? 16u : 8u),
             [this, seq](DmacStatus st, std::vector<uint8_t>&& d) {
               Cmd& c = *find(seq);
               if (st != DmacStatus::kOk) {
                 c.result = EIO;
                 c.stage = Stage::kReady;
                 retire();
               } else {
                 c.data = std::move(d);
                 c.stage = Stage::kData;
               }
               kick();
             });
}

void Firmware::entries_done(uint32_t seq) { find(seq)->stage = Stage::kReady; }

// Completes the ready commands at the head of the queue, in order.
void Firmware::retire() {
  while (!cmds_.empty() && cmds_.front().stage == Stage::kReady) {
    Cmd& c = cmds_.front();
    const uint32_t result = c.result ? c.result : apply(c);
    ++commands_;
    if (result) {
      ++errors_;
      log::debug("{}: command {} (op {}) failed: errno {}", name(), c.seq - 1, c.op, result);
    }
    regs_.complete_command(c.seq - 1, reg::cmd_done_word(c.seq, c.op, result, c.value));
    ++done_;
    mark_(CoreProbe::kCommandDone, 0, now_ps());
    if ((c.flags & reg::kCmdFlagInterrupt) && regs_.raise(reg::kIntCommand) && regs_.msi_addr())
      dmac_.msi(regs_.msi_addr(), vector_);
    cmds_.pop_front();
  }
}

namespace {
SmtEntry smt_entry(const abi::WriteStag& w) {
  SmtEntry e;
  e.state = SmtEntry::State::kValid;
  e.key = w.key;
  e.type = SmtEntry::Type(w.type);
  e.access = w.access;
  e.pd = w.pd;
  e.base_to = w.base_to;
  e.length = w.length;
  e.pbl_first = w.pbl_first;
  e.pbl_count = w.pbl_count;
  e.page_shift = w.page_shift;
  e.first_page_offset = w.first_page_offset;
  e.phys_base = w.phys_base;
  return e;
}
std::vector<PblEntry> pbl_entries(const std::vector<uint8_t>& d, uint32_t count, bool extents) {
  const uint32_t stride = extents ? 16 : 8;
  std::vector<PblEntry> e(count);
  for (uint32_t i = 0; i < count; ++i) {
    std::memcpy(&e[i].addr, d.data() + uint64_t(i) * stride, 8);
    if (extents) std::memcpy(&e[i].len, d.data() + uint64_t(i) * stride + 8, 8);
  }
  return e;
}
}  // namespace

// The command's table writes, through the tables' write ports; its result.
uint32_t Firmware::apply(const Cmd& c) {
  const uint32_t* a = c.a.data();
  auto ok = [](bool b) { return b ? 0u : uint32_t(EINVAL); };
  switch (c.op) {
    case abi::kCmdCreateCq: {
      const auto m = abi::CreateCq::decode(a);
      return ok(ports_.cqs.create(m.cqn, m.ring, m.entries));
    }
    case abi::kCmdDestroyCq:
      return ok(ports_.cqs.destroy(abi::DestroyCq::decode(a).cqn));
    case abi::kCmdCreateQp:
      return ok(ports_.qps.create_qp(abi::CreateQp::decode(a)));
    case abi::kCmdModifyQp:
      return ok(ports_.qps.modify_qp(abi::ModifyQp::decode(a)));
    case abi::kCmdDestroyQp:
      return ok(ports_.qps.destroy_qp(abi::DestroyQp::decode(a).qpn));
    case abi::kCmdWriteStag: {
      const auto w = abi::WriteStag::decode(a);
      return ok(ports_.xlat.write_smt(w.index, smt_entry(w)));
    }
    case abi::kCmdInvalidateStag:
      return ok(ports_.xlat.invalidate(abi::InvalidateStag::decode(a).stag));
    case abi::kCmdFreeStag:
      return ok(ports_.xlat.free(abi::FreeStag::decode(a).index));
    case abi::kCmdLoadPbl: {
      const auto l = abi::LoadPbl::decode(a);
      return ok(ports_.xlat.write_pbl(l.first, pbl_entries(c.data, l.count, l.extents)));
    }
    case abi::kCmdRegMr: {
      const auto r = abi::RegMr::decode(a);
      if (!ports_.xlat.write_pbl(r.stag.pbl_first,
                                 pbl_entries(c.data, r.stag.pbl_count, r.extents())))
        return EINVAL;
      return ok(ports_.xlat.write_smt(r.stag.index, smt_entry(r.stag)));
    }
    default:
      return EINVAL;
  }
}

std::string Firmware::dump_state() const {
  std::string s = fmt::format("  {}: {} commands taken, {} completed, processor {}\n", name(),
                              taken_, done_, busy_ ? "busy" : "idle");
  static const char* const kStage[] = {"new", "dma", "data", "ready"};
  for (const Cmd& c : cmds_)
    s += fmt::format("    command {} op {} {}\n", c.seq - 1, c.op, kStage[int(c.stage)]);
  return s;
}

}  // namespace rnic
