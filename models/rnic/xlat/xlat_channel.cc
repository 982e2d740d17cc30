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

}  // namespace rnic
