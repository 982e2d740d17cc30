#include "models/rnic/xlat/xlat_channel.h"

#include "models/rnic/latency_mutation.h"

namespace rnic {

namespace {
struct SgeWalk {
  XlatChannel* xlat;
  EventQueue* to;
  Wqe w;
  uint64_t off;
  uint32_t len;
  uint8_t access;
  uint32_t pd;
  bool check_only;
  int next = 0;      // the next SGE to look at
  uint64_t pos = 0;  // its first byte within the list
  std::vector<XlatChunk> chunks;
  SgeListDone done;
};

void walk(std::shared_ptr<SgeWalk> s) {
  for (; s->next < s->w.num_sge; ++s->next) {
    const Sge& g = s->w.sge[s->next];
    const uint64_t start = s->pos, end = s->pos + g.length;
    s->pos = end;
    if (s->off >= end || s->off + s->len <= start) continue;
    const uint64_t a = std::max(s->off, start), b = std::min<uint64_t>(s->off + s->len, end);
    ++s->next;
    XlatRequest r{g.lkey, g.addr + (a - start), uint32_t(b - a), s->access, s->pd};
    r.check_only = s->check_only;
    s->xlat->request(r, *s->to, [s, r](XlatResult&& x) {
      if (x.status != XlatStatus::kOk)
        return s->done(x.status, std::move(s->chunks), {r.stag, x.fault_to, r.to + r.len});
      if (s->chunks.empty())
        s->chunks = std::move(x.chunks);  // the first SGE's (most lists have one)
      else
        s->chunks.insert(s->chunks.end(), x.chunks.begin(), x.chunks.end());
      walk(s);
    });
    return;
  }
  s->done(XlatStatus::kOk, std::move(s->chunks), {});
}
}  // namespace

void XlatModelChannel::request(const XlatRequest& r, EventQueue& to, Reply reply) {
  XlatResult x = block_.translate(r);
  if (r.check_only) {
    x.chunks.clear();
    x.cycles = block_.timing().smt_cycles;
  }
  const uint64_t at = now_ps() + (x.cycles + mutation::extra(mutation::kXlat)) * clk_.period_ps;
  to.at(at, [x = std::move(x), reply = std::move(reply)]() mutable { reply(std::move(x)); });
}

void translate_sge_list(XlatChannel& xlat, EventQueue& to, const Wqe& w, uint64_t off, uint32_t len,
                        uint8_t access, uint32_t pd, SgeListDone done, bool check_only) {
  auto s = std::make_shared<SgeWalk>();
  s->xlat = &xlat;
  s->to = &to;
  s->w = w;
  s->off = off;
  s->len = len;
  s->access = access;
  s->pd = pd;
  s->check_only = check_only;
  s->done = std::move(done);
  if (len == 0) return s->done(XlatStatus::kOk, {}, {});
  walk(std::move(s));
}

namespace {
// Not base_to: a verbs program's own memory (plain memory, sim/traffic/program.h) is registered
// at its real virtual addresses, which differ from process to process (ASLR), and the model and
// RTL runs of a test are two processes.
uint64_t entry_digest(const SmtEntry& e) {
  return record_digest({uint64_t(e.state), uint64_t(e.type), e.key, e.pd, e.access, e.length,
                        e.pbl_first, e.pbl_count, e.page_shift, e.first_page_offset, e.phys_base});
}
}  // namespace

XlatChannel::Recorded::Recorded(std::unique_ptr<XlatChannel> in, AnswerLog& log, const BlockArgs& a)
    : in_(std::move(in)),
      log_(log),
      src_(log.source(std::string(dynamic_cast<sc_core::sc_object&>(*in_).name()) + " rnic_xlat",
                      a.clk.period_ps)),
      wr_(log.source(
          std::string(dynamic_cast<sc_core::sc_object&>(*in_).name()) + " rnic_xlat write",
          a.clk.period_ps)) {}

void XlatChannel::Recorded::request(const XlatRequest& r, EventQueue& to, Reply reply) {
  in_->request(r, to, [log = &log_, src = src_, reply = std::move(reply)](XlatResult&& x) {
    std::vector<uint64_t> w{uint64_t(x.status), x.fault_to, x.chunks.size()};
    for (const XlatChunk& c : x.chunks) w.insert(w.end(), {c.pa, c.len, c.cycle});
    log->add(src, now_ps(), record_digest(w), x.cycles);
    reply(std::move(x));
  });
}

bool XlatChannel::Recorded::write_smt(uint32_t index, const SmtEntry& e) {
  return note(index, entry_digest(e), in_->write_smt(index, e));
}

bool XlatChannel::Recorded::invalidate(uint32_t stag, const uint32_t* pd) {
  return note(stag, pd ? *pd : ~0ull, in_->invalidate(stag, pd));
}

bool XlatChannel::Recorded::free(uint32_t index) { return note(index, 1, in_->free(index)); }

bool XlatChannel::Recorded::write_pbl(uint32_t first, const std::vector<PblEntry>& e) {
  std::vector<uint64_t> w;
  for (const PblEntry& p : e) w.insert(w.end(), {p.addr, p.len});
  return note(first, record_digest(w), in_->write_pbl(first, e));
}

bool XlatChannel::Recorded::note(uint64_t a, uint64_t b, bool ok) {
  log_.add(wr_, now_ps(), a, b ^ uint64_t(ok));
  return ok;
}

}  // namespace rnic
