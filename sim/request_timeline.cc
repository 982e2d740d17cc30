// RequestTrace's Chrome trace-event JSON (`--timeline FILE`): a process per host (its verbs
// calls on a track per QP, each card block on a track of its own) and per link (a track per
// direction); a complete event ("X") per stage of every WR, flow events ("s", "t", "f") joining
// one WR's stages in time order across hosts and links, and counters ("C") of the SQ engine's
// segments waiting to leave and of placements on their way to memory. Spans that overlap on one
// track go on lanes of it ("sq", "sq #2", ...), as Perfetto draws only nested spans on one track.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>

#include "sim/request_trace.h"

namespace rnic {

namespace {

struct Span {
  uint64_t t0, t1;
  int pid;
  std::string track;
  const char* name;
  uint32_t wr;
  int tid = 0;
};

std::string us(uint64_t ps) { return fmt::format("{}.{:06}", ps / 1000000, ps % 1000000); }

}  // namespace

std::string RequestTrace::write_timeline(const std::string& path, uint64_t t0_ps,
                                         uint64_t t1_ps) const {
  const int hosts = int(host_names.size());
  auto link_pid = [hosts](int link) { return hosts + 1 + link; };
  std::vector<Span> spans;
  auto add = [&](uint64_t a, uint64_t b, int pid, std::string track, const char* name,
                 uint32_t wr) {
    if (a == kNone || b == kNone || b < a || b < t0_ps || a > t1_ps) return;
    spans.push_back({a, b, pid, std::move(track), name, wr});
  };
  // The WRs host by host, each host's in the order its probes made them: that order is the same
  // in one process and over several (RequestTrace::gather), the interleaving of the hosts' is
  // not. A WR's flow is numbered by its place in it.
  std::vector<uint32_t> order(wrs_.size()), flow(wrs_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [this](uint32_t a, uint32_t b) { return wrs_[a].node < wrs_[b].node; });
  for (uint32_t k = 0; k < order.size(); ++k) flow[order[k]] = k;
  for (uint32_t i : order) {
    const Wr& w = wrs_[i];
    const int h = w.node + 1;
    const std::string qp = fmt::format("QP {}", w.qpn);
    add(w.post, w.posted, h, qp, "post", i);
    add(w.posted, w.doorbell, h, "pcie", "doorbell", i);
    add(w.doorbell, w.queued, h, "host_if", "WQE fetch", i);
    uint64_t placed = kNone;
    int rx_node = -1;
    uint32_t rx_qpn = 0;
    for (uint32_t si : w.segs) {
      const Seg& s = segs_[si];
      const int sh = s.node + 1;
      add(s.issue, s.fetch, sh, "sq", "SQ issue", i);
      if (s.dma != kNone) {
        add(s.fetch, s.dma, sh, "xlat", "translation", i);
        add(s.dma, s.data, sh, "dmac", "payload DMA", i);
        add(s.data, s.sent, sh, "sq", "to EFE", i);
      } else {
        add(s.fetch, s.sent, sh, "sq", s.response ? "to EFE" : "request header", i);
      }
      if (!s.frames.empty()) add(s.sent, s.frames.front().first, sh, "efe", "EFE + MAC tx", i);
      const Frame* taken = nullptr;
      for (const Frame& f : s.frames) {
        const int l = f.link;
        add(f.first, f.last, link_pid(l),
            fmt::format("{} → {}", link_ends[size_t(l)][size_t(f.dir)],
                        link_ends[size_t(l)][size_t(1 - f.dir)]),
            &f == &s.frames.front() ? "frame" : "frame (resent)", i);
        if (s.rx_start != kNone && f.last <= s.rx_start) taken = &f;
      }
      if (s.rx_node < 0) continue;
      const int rh = s.rx_node + 1;
      if (taken) add(taken->last, s.rx_start, rh, "efe", "MAC + EFE rx", i);
      add(s.rx_start, s.rx_checked, rh, "rx", "RX checks", i);
      add(s.rx_checked, s.rx_place, rh, "rx", "placement xlat", i);
      add(s.rx_place, s.in_mem, rh, "dmac", "placement DMA", i);
      if (s.in_mem != kNone) placed = s.in_mem;
      rx_node = s.rx_node;
      rx_qpn = s.rx_qpn;
    }
    add(w.cqe, w.cqe_mem, h, "dmac", "CQE write", i);
    add(w.cqe_mem, w.polled, h, qp, "poll", i);
    if (w.peer >= 0) {
      const int ph = w.peer + 1;
      const std::string pqp = fmt::format("QP {}", w.peer == rx_node ? rx_qpn : 0);
      add(w.rcqe, w.rcqe_mem, ph, "dmac", "CQE write", i);
      add(w.rcqe_mem, w.rpolled, ph, pqp, "poll", i);
      add(placed, w.seen, ph, pqp, "poll", i);
    }
  }

  // Lanes: per track, each span on the first lane free at its start.
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.t0 != b.t0 ? a.t0 < b.t0 : a.t1 > b.t1; });
  std::map<std::pair<int, std::string>, std::vector<uint64_t>> lane_end;
  std::map<std::pair<int, std::string>, int> tid_of;  // (pid, track #lane) -> tid
  std::map<int, int> tids;                            // pid -> tids given
  for (Span& s : spans) {
    std::vector<uint64_t>& ends = lane_end[{s.pid, s.track}];
    size_t l = 0;
    while (l < ends.size() && ends[l] > s.t0) ++l;
    if (l == ends.size()) ends.push_back(0);
    ends[l] = std::max(ends[l], s.t1);
    const std::string name = l ? fmt::format("{} #{}", s.track, l + 1) : s.track;
    auto [it, fresh] = tid_of.try_emplace({s.pid, name}, 0);
    if (fresh) it->second = ++tids[s.pid];
    s.tid = it->second;
  }

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), std::fclose);
  if (!f) return fmt::format("cannot write {}", path);
  std::FILE* o = f.get();
  fmt::print(o, "{{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
  bool first = true;
  auto event = [&](const std::string& e) {
    fmt::print(o, "{}{}", first ? "" : ",\n", e);
    first = false;
  };
  for (int n = 0; n < hosts; ++n)
    event(
        fmt::format(R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": "{}"}}}})",
                    n + 1, host_names[size_t(n)]));
  for (size_t l = 0; l < link_names.size(); ++l)
    event(fmt::format(
        R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": "link {}"}}}})",
        link_pid(int(l)), link_names[l]));
  for (const auto& [key, tid] : tid_of)
    event(fmt::format(
        R"({{"ph": "M", "name": "thread_name", "pid": {}, "tid": {}, "args": {{"name": "{}"}}}})",
        key.first, tid, key.second));
  for (const Span& s : spans) {
    const Wr& w = wrs_[s.wr];
    event(fmt::format(
        R"({{"ph": "X", "name": "{}", "cat": "wr", "pid": {}, "tid": {}, "ts": {}, "dur": {}, )"
        R"("args": {{"host": "{}", "qp": {}, "wqe": {}}}}})",
        s.name, s.pid, s.tid, us(s.t0), us(s.t1 - s.t0), host_names[size_t(w.node)], w.qpn,
        w.index));
  }
  // Flows: each WR's spans in time order (the sort above), first to last.
  std::vector<std::vector<const Span*>> by_wr(wrs_.size());
  for (const Span& s : spans) by_wr[flow[s.wr]].push_back(&s);
  for (uint32_t i = 0; i < by_wr.size(); ++i) {
    const auto& v = by_wr[i];
    if (v.size() < 2) continue;
    for (size_t k = 0; k < v.size(); ++k) {
      const char* ph = k == 0 ? "s" : k + 1 == v.size() ? "f" : "t";
      event(fmt::format(R"({{"ph": "{}", "name": "wr", "cat": "wr", "id": {}, "pid": {}, )"
                        R"("tid": {}, "ts": {}{}}})",
                        ph, i + 1, v[k]->pid, v[k]->tid, us(v[k]->t0),
                        k == 0 ? "" : R"(, "bp": "e")"));
    }
  }
  // Counters: segments in the SQ engine (issued, not yet handed to the EFE) and placements on
  // their way to host memory, per host.
  std::vector<std::map<uint64_t, int>> queued(static_cast<size_t>(hosts));
  std::vector<std::map<uint64_t, int>> placing(static_cast<size_t>(hosts));
  for (const Seg& s : segs_) {
    if (s.issue != kNone && s.sent != kNone) {
      ++queued[size_t(s.node)][s.issue];
      --queued[size_t(s.node)][s.sent];
    }
    if (s.rx_node >= 0 && s.rx_place != kNone && s.in_mem != kNone) {
      ++placing[size_t(s.rx_node)][s.rx_place];
      --placing[size_t(s.rx_node)][s.in_mem];
    }
  }
  auto counter = [&](const std::vector<std::map<uint64_t, int>>& c, const char* name) {
    for (int n = 0; n < hosts; ++n) {
      int v = 0;
      for (const auto& [t, d] : c[size_t(n)]) {
        v += d;
        if (t < t0_ps || t > t1_ps) continue;
        event(fmt::format(
            R"({{"ph": "C", "name": "{}", "pid": {}, "ts": {}, "args": {{"depth": {}}}}})", name,
            n + 1, us(t), v));
      }
    }
  };
  counter(queued, "SQ engine: segments waiting to leave");
  counter(placing, "RX: placements on their way to memory");
  fmt::print(o, "\n]}}\n");
  if (std::ferror(o)) return fmt::format("cannot write {}", path);
  return "";
}

}  // namespace rnic
