#include "sim/request_trace.h"

#include <algorithm>

#include "models/common/sim_time.h"
#include "models/efe/efe_header.h"
#include "models/eth/ethernet.h"
#include "models/rnic/ddp/ddp_rdmap.h"
#include "models/rnic/engine_msgs.h"
#include "sim/cluster.h"

namespace rnic {

namespace {
uint64_t now() { return now_ps(); }
// A MAC's part of an RX probe's tag (ProbeEvent::rx_tag).
uint64_t mac_tag(const MacAddr& m) { return ProbeEvent::rx_tag(m, 0); }
uint64_t qkey(uint32_t qpn, uint64_t index) { return uint64_t(qpn) << 32 | uint32_t(index); }
}  // namespace

void RequestTrace::attach(Cluster& cl) {
  gather();  // an experiment's earlier system's records, taken before this one's (every rank
             // builds each system)
  recording_ = ranks::parallel();
  nodes_.resize(cl.nodes.size());
  for (size_t n = 0; n < cl.nodes.size(); ++n) {
    host_names.push_back(cl.host_names[n]);
    nodes_[n].mac32 = mac_tag(cl.host_macs[n]);
    node_of_mac_[nodes_[n].mac32] = int(n);
    if (!cl.nodes[n]) continue;  // another rank's
    Node& node = *cl.nodes[n];
    const int i = int(n);
    node.card.core.probe = [this, i](const ProbeEvent& e) {
      if (!recording_) return on_core(i, e);
      log_.put(now()).put(Rec::kCore).put(i).put(e.point).put(e.id).put(e.t_ps).put(e.tag);
      log_.put(e.aux).put(e.addr);
    };
    node.driver.probe = [this, i](host::Driver::Probe p, uint32_t qpn, uint64_t tag, uint64_t aux) {
      if (!recording_) return on_host(i, int(p), qpn, tag, aux, now());
      log_.put(now()).put(Rec::kHost).put(i).put(int(p)).put(qpn).put(tag).put(aux);
    };
    auto prev = node.host.rc.on_write;
    node.host.rc.on_write = [this, i, prev](uint64_t addr, uint32_t len) {
      if (!recording_)
        on_mem(i, addr, len, now());
      else
        log_.put(now()).put(Rec::kMem).put(i).put(addr).put(len);
      if (prev) prev(addr, len);
    };
  }
  for (size_t l = 0; l < cl.links.size(); ++l) {
    link_names.push_back(cl.link_names[l]);
    link_ends.push_back(cl.link_ends[l]);
    if (!cl.links[l]) continue;  // between another rank's hosts and switches
    eth::EthLink& link = *cl.links[l];
    const int li = int(l);
    const uint64_t byte_ps = link.byte_ps(), prop_ps = link.prop_ps();
    // (A link to another rank's host or switch is on both ranks; only the sender's end sends.)
    link.add_wire_tap([this, li, byte_ps, prop_ps](uint64_t t, const eth::EthLink::Frame& f,
                                                   const uint8_t*, int end) {
      FrameSeen fs;
      if (!frame_seen(f, t, byte_ps, prop_ps, &fs)) return;
      if (!recording_) return on_frame_seen(li, end, t, fs);
      log_.put(now()).put(Rec::kFrame).put(li).put(end).put(t).put(fs.tag).put(fs.last);
      log_.put(fs.read_request).put(fs.dst).put(fs.dst_qpn).put(fs.msn);
    });
  }
}

void RequestTrace::gather() {
  if (!recording_) return;
  recording_ = false;
  const std::vector<std::string> all =
      ranks::gather(std::string(reinterpret_cast<const char*>(log_.data()), log_.size()));
  log_ = ranks::Packer();
  if (all.empty()) return;  // not rank 0
  std::vector<ranks::Unpacker> in;
  for (const std::string& a : all)
    in.emplace_back(reinterpret_cast<const uint8_t*>(a.data()), a.size());
  // Each rank's records in its own order; among the ranks, the earliest time first (a tie: the
  // lower rank; a cause on another rank is a link's delay earlier).
  std::vector<uint64_t> at(in.size(), UINT64_MAX);
  for (size_t r = 0; r < in.size(); ++r)
    if (in[r].left()) at[r] = in[r].get<uint64_t>();
  for (;;) {
    const size_t r = size_t(std::min_element(at.begin(), at.end()) - at.begin());
    if (at[r] == UINT64_MAX) break;
    const uint64_t t = at[r];
    ranks::Unpacker& u = in[r];
    const auto kind = u.get<Rec>();
    const int node = u.get<int>();  // the link's index for a frame
    switch (kind) {
      case Rec::kCore: {
        ProbeEvent e;
        e.point = u.get<CoreProbe>();
        e.id = u.get<uint32_t>();
        e.t_ps = u.get<uint64_t>();
        e.tag = u.get<uint64_t>();
        e.aux = u.get<uint64_t>();
        e.addr = u.get<uint64_t>();
        on_core(node, e);
        break;
      }
      case Rec::kHost: {
        const int point = u.get<int>();
        const auto qpn = u.get<uint32_t>();
        const auto tag = u.get<uint64_t>();
        on_host(node, point, qpn, tag, u.get<uint64_t>(), t);
        break;
      }
      case Rec::kMem: {
        const auto addr = u.get<uint64_t>();
        on_mem(node, addr, u.get<uint32_t>(), t);
        break;
      }
      case Rec::kFrame: {
        const int end = u.get<int>();
        const auto first = u.get<uint64_t>();
        FrameSeen fs;
        fs.tag = u.get<uint64_t>();
        fs.last = u.get<uint64_t>();
        fs.read_request = u.get<uint8_t>();
        fs.dst = u.get<uint64_t>();
        fs.dst_qpn = u.get<uint32_t>();
        fs.msn = u.get<uint32_t>();
        on_frame_seen(node, end, first, fs);
        break;
      }
    }
    at[r] = u.left() ? u.get<uint64_t>() : UINT64_MAX;
  }
}

std::vector<uint32_t> RequestTrace::wrs_of(int node, uint32_t qpn) const {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < wrs_.size(); ++i)
    if (wrs_[i].node == node && wrs_[i].qpn == qpn) v.push_back(i);
  std::stable_sort(v.begin(), v.end(),
                   [this](uint32_t a, uint32_t b) { return wrs_[a].post < wrs_[b].post; });
  return v;
}

uint32_t RequestTrace::wr_for(int node, uint32_t qpn, uint32_t index) {
  auto [it, fresh] = nodes_[node].wr_at.try_emplace(qkey(qpn, index), uint32_t(wrs_.size()));
  if (fresh) {
    Wr w;
    w.node = node;
    w.qpn = qpn;
    w.index = index;
    wrs_.push_back(w);
  }
  return it->second;
}

RequestTrace::Seg* RequestTrace::seg_by_frame(uint64_t tag) {
  auto it = frame_at_.find(tag);
  return it == frame_at_.end() ? nullptr : &segs_[it->second];
}

void RequestTrace::on_host(int node, int point, uint32_t qpn, uint64_t tag, uint64_t aux,
                           uint64_t t) {
  NodeState& ns = nodes_[node];
  switch (host::Driver::Probe(point)) {
    case host::Driver::Probe::kPost:
      ns.post_first[qpn] = tag;
      ns.post_t[qpn] = t;
      return;
    case host::Driver::Probe::kPosted: {
      const auto first = ns.post_first.find(qpn);
      if (first == ns.post_first.end()) return;
      for (uint64_t i = first->second; i < tag; ++i) {
        const uint32_t id = wr_for(node, qpn, uint32_t(i));
        wrs_[id].post = ns.post_t[qpn];
        wrs_[id].posted = t;
        ns.no_doorbell[qpn].push_back(id);
      }
      ns.post_first.erase(first);
      return;
    }
    case host::Driver::Probe::kPolled: {
      auto& at = aux ? ns.recv_at : ns.wr_at;
      const auto it = at.find(qkey(qpn, tag));
      if (it == at.end()) return;
      Wr& w = wrs_[it->second];
      (aux ? w.rpolled : w.polled) = t;
      if (aux) at.erase(it);
      return;
    }
    case host::Driver::Probe::kMemSeen: {
      const auto it = ns.placed.find(tag);
      if (it == ns.placed.end()) return;
      const Seg& s = segs_[it->second];
      if (s.wr != UINT32_MAX && wrs_[s.wr].seen == kNone) {
        wrs_[s.wr].seen = t;
        wrs_[s.wr].peer = node;
      }
      ns.placed.erase(it);
      return;
    }
  }
}

void RequestTrace::on_core(int node, const ProbeEvent& e) {
  NodeState& ns = nodes_[node];
  const bool rq = e.tag & ProbeEvent::kRq;
  auto seg = [&]() -> Seg* {
    auto it = ns.seg_at.find(e.tag);
    return it == ns.seg_at.end() ? nullptr : &segs_[it->second];
  };
  switch (e.point) {
    case CoreProbe::kDoorbell:
      if (rq) return;
      {
        // Every WR of the QP before the producer index that had no doorbell yet.
        std::vector<uint32_t>& v = ns.no_doorbell[e.id];
        const auto before = [&](uint32_t id) {
          return uint32_t(e.tag) - wrs_[id].index - 1 < (1u << 31);
        };
        for (uint32_t id : v)
          if (before(id)) wrs_[id].doorbell = e.t_ps;
        v.erase(std::remove_if(v.begin(), v.end(), before), v.end());
        return;
      }
    case CoreProbe::kWqeQueued:
      if (!rq) wrs_[wr_for(node, e.id, uint32_t(e.tag))].queued = e.t_ps;
      return;
    case CoreProbe::kSegIssue: {
      Seg s;
      s.node = node;
      s.qpn = e.id;
      s.issue = e.t_ps;
      s.response = e.aux & ProbeEvent::kResponse;
      if (s.response) {
        const auto it = ns.read_at.find(qkey(e.id, uint32_t(e.aux)));
        if (it != ns.read_at.end()) s.wr = it->second;
      } else {
        s.wr = wr_for(node, e.id, uint32_t(e.aux));
      }
      ns.seg_at[e.tag] = uint32_t(segs_.size());
      if (s.wr != UINT32_MAX) wrs_[s.wr].segs.push_back(uint32_t(segs_.size()));
      segs_.push_back(std::move(s));
      return;
    }
    case CoreProbe::kSegFetch:
      if (Seg* s = seg()) s->fetch = e.t_ps;
      return;
    case CoreProbe::kSegDma:
      if (Seg* s = seg()) s->dma = e.t_ps;
      return;
    case CoreProbe::kSegData:
      if (Seg* s = seg()) s->data = e.t_ps;
      return;
    case CoreProbe::kSegReady:
      if (Seg* s = seg()) s->ready = e.t_ps;
      return;
    case CoreProbe::kSegSent:
      if (Seg* s = seg()) {
        s->sent = e.t_ps;
        frame_at_[uint32_t(e.aux) | ns.mac32] = ns.seg_at[e.tag];
        ns.seg_at.erase(e.tag);
      }
      return;
    case CoreProbe::kRxStart:
    case CoreProbe::kRxChecked:
    case CoreProbe::kRxPlace: {
      Seg* s = seg_by_frame(e.tag);
      if (!s) return;
      s->rx_node = node;
      if (e.point == CoreProbe::kRxStart) {
        s->rx_start = e.t_ps;  // a segment refused and given again starts again
      } else if (e.point == CoreProbe::kRxChecked) {
        s->rx_checked = e.t_ps;
        s->rx_qpn = e.id;
        ns.last_checked[e.id] = frame_at_[e.tag];
      } else {
        s->rx_place = e.t_ps;
        s->place_addr = e.addr;
        ns.place_pending[e.addr] = frame_at_[e.tag];
      }
      return;
    }
    case CoreProbe::kCqe: {
      const uint32_t qpn = uint32_t(e.tag >> 32), index = uint32_t(e.tag);
      uint32_t w = UINT32_MAX;
      if (e.aux) {
        // A receive's CQE: the Send whose last segment this QP checked last.
        const auto it = ns.last_checked.find(qpn);
        if (it != ns.last_checked.end()) w = segs_[it->second].wr;
        if (w == UINT32_MAX) return;
        wrs_[w].rcqe = e.t_ps;
        wrs_[w].peer = node;
        ns.recv_at[qkey(qpn, index)] = w;
      } else {
        const auto it = ns.wr_at.find(qkey(qpn, index));
        if (it == ns.wr_at.end()) return;
        w = it->second;
        wrs_[w].cqe = e.t_ps;
      }
      ns.cqe_pending[e.addr] = {w, e.aux != 0};
      return;
    }
    default:
      return;
  }
}

bool RequestTrace::frame_seen(const std::vector<uint8_t>& f, uint64_t t, uint64_t byte_ps,
                              uint64_t prop_ps, FrameSeen* out) {
  eth::Header eh;
  if (!eth::parse_header(f.data(), f.size(), &eh) || eh.ethertype != eth::kEtherTypeEfe)
    return false;
  efe::Header h;
  const uint8_t* p = f.data() + eth::kHeaderBytes;
  if (efe::decode(p, f.size() - eth::kHeaderBytes, &h) != efe::ParseError::kOk ||
      h.type != efe::Type::kData)
    return false;
  out->tag = uint64_t(h.seq) | mac_tag(eh.src);
  const size_t len = std::max(f.size(), eth::kMinFrameBytes);
  out->last = t + (eth::kPreambleBytes + len + eth::kFcsBytes) * byte_ps + prop_ps;
  rdmap::Segment d;
  if (rdmap::decode(p + efe::kHeaderBytes, h.length, &d) && !d.tagged &&
      d.opcode == uint8_t(rdmap::Opcode::kReadRequest)) {
    out->read_request = 1;
    out->dst = mac_tag(eh.dst);
    out->dst_qpn = h.dst_qpn;
    out->msn = d.msn;
  }
  return true;
}

void RequestTrace::on_frame_seen(int link, int end, uint64_t t, const FrameSeen& fs) {
  Seg* s = seg_by_frame(fs.tag);
  if (!s) return;
  s->frames.push_back({link, end, t, fs.last});
  // A Read Request: the responder's Read Response segments answer its MSN.
  if (s->frames.size() == 1 && !s->response && s->wr != UINT32_MAX && fs.read_request) {
    const auto to = node_of_mac_.find(fs.dst);
    if (to != node_of_mac_.end()) nodes_[to->second].read_at[qkey(fs.dst_qpn, fs.msn)] = s->wr;
  }
}

void RequestTrace::on_mem(int node, uint64_t addr, uint32_t len, uint64_t t) {
  NodeState& ns = nodes_[node];
  for (auto it = ns.place_pending.lower_bound(addr);
       it != ns.place_pending.end() && it->first < addr + len;) {
    Seg& s = segs_[it->second];
    s.in_mem = t;
    ns.placed[it->first] = it->second;
    it = ns.place_pending.erase(it);
  }
  const auto c = ns.cqe_pending.find(addr);
  if (c != ns.cqe_pending.end()) {
    Wr& w = wrs_[c->second.first];
    (c->second.second ? w.rcqe_mem : w.cqe_mem) = t;
    ns.cqe_pending.erase(c);
  }
}

uint64_t RequestTrace::end_of(uint32_t wr) const {
  const Wr& w = wrs_[wr];
  if (w.seen != kNone) return w.seen;
  if (w.rpolled != kNone) return w.rpolled;
  const bool read = !w.segs.empty() && segs_[w.segs.back()].response;
  return read ? w.polled : kNone;
}

std::vector<RequestTrace::Stage> RequestTrace::stages(uint32_t wr) const {
  const Wr& w = wrs_[wr];
  const uint64_t end = end_of(wr);
  if (end == kNone || w.segs.empty()) return {};
  std::vector<uint64_t> at;  // the points, in time order
  std::vector<Stage> v;
  uint64_t t = w.post;
  bool gap = false;
  auto to = [&](const char* name, uint64_t next) {
    if (next == kNone || t == kNone || next < t) gap = true;
    if (gap) return;
    v.push_back({name, next - t});
    t = next;
  };
  to("host: post (WQE build, MMIO writes)", w.posted);
  to("doorbell: MMIO to the card", w.doorbell);
  to("host_if: WQE into the on-chip SQ", w.queued);
  // A segment from its issue to its placement; `from` names its host.
  auto segment = [&](const Seg& s, const char* sq) {
    to(sq, s.fetch);
    if (s.dma != kNone) {
      to("xlat of the source", s.dma);
      to("DMA read of the payload (PCIe round trip)", s.data);
      to("segment header, to the EFE", s.sent);
    } else {
      to("request header, to the EFE", s.sent);
    }
    const Frame* taken = nullptr;
    for (const Frame& f : s.frames)
      if (f.last <= s.rx_start) taken = &f;
    if (!taken) {
      gap = true;
      return;
    }
    to("EFE + MAC transmit to first bit", taken->first);
    to("wire: preamble, frame, FCS, propagation", taken->last);
    to("MAC FCS check + EFE receive", s.rx_start);
    to("RX engine: header checks", s.rx_checked);
  };
  const Seg& last = segs_[w.segs.back()];
  if (last.response) {
    // A Read: its request (the WR's first segment) to the responder's checks, the Read
    // Response's last segment back.
    segment(segs_[w.segs.front()], "SQ engine: issue (and segments before it), SGE check");
    to("responder: Read Response issued", last.issue);
    segment(last, "responder: SQ engine issues the segment");
    to("RX engine: xlat of the sink", last.rx_place);
    to("completion: CQE write issued", w.cqe);
    to("CQE in host memory (PCIe)", w.cqe_mem);
    to("host: polling sees the CQE", w.polled);
  } else {
    segment(last, "SQ engine: issue (and segments before it), SGE check");
    to("RX engine: xlat of the sink", last.rx_place);
    if (w.seen != kNone) {
      to("DMA write to host memory (PCIe)", last.in_mem);
      to("host: polling sees the byte", w.seen);
    } else {
      to("completion: receive CQE write issued", w.rcqe);
      to("CQE in host memory (PCIe)", w.rcqe_mem);
      to("host: polling sees the CQE", w.rpolled);
    }
  }
  if (gap || t != end) return {};
  return v;
}

}  // namespace rnic
