// The eight perftest-style tests. Bandwidth (client posts, server waits):
//   every QP keeps up to tx_depth WRs outstanding; every cq_mod-th WR (and the last) is
//   signaled, as perftest's default -Q 100; tposted/tcompleted per WR give the peak (bw_peak.h:
//   perftest's windows, each ending when every message up to its end has completed);
//   average = bytes / (last completion - first post); MsgRate = messages / that time.
//   send_bw's server keeps rx_depth receives posted per QP and reposts each one it reaps.
// Latency (one QP, one message in flight):
//   write_lat / send_lat: ping-pong; each sample is half the round trip (perftest's report);
//   write_lat's receiver sees the peer's write by polling its buffer's last byte;
//   read_lat, atomic_lat: each sample is post to completion of one RDMA Read or one atomic.
// atomic_bw and atomic_lat are perftest's ib_atomic_bw / ib_atomic_lat with their default
// FETCH_AND_ADD: 8 bytes each (the size is 8), every WR of a QP adding 1 to the same word.
// Host polling costs cost.cq_poll_ns per look (rnic_wait_cq / rnic_wait_mem: as a busy loop).
#include "sim/traffic/perftest.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "models/host/host_wait.h"
#include "models/host/phys_mem.h"
#include "models/host/verbs/verbs_internal.h"
#include "sim/cluster.h"
#include "sim/exec/exec_process.h"
#include "sim/experiment.h"
#include "sim/link_capture.h"
#include "sim/machine_memory.h"
#include "sim/ranks.h"
#include "sim/run_control.h"
#include "sim/scenario.h"
#include "sim/traffic/bw_peak.h"
#include "sim/traffic/endpoint.h"
#include "sim/traffic/lat_breakdown.h"
#include "sim/traffic/program.h"

namespace rnic::traffic {

namespace {

enum class Op { kWrite, kRead, kSend, kAtomic };

struct Test {
  std::string name;
  Op op;
  bool latency;
};

const std::vector<Test>& tests() {
  static const std::vector<Test> t = {
      {"write_bw", Op::kWrite, false},   {"write_lat", Op::kWrite, true},
      {"read_bw", Op::kRead, false},     {"read_lat", Op::kRead, true},
      {"send_bw", Op::kSend, false},     {"send_lat", Op::kSend, true},
      {"atomic_bw", Op::kAtomic, false}, {"atomic_lat", Op::kAtomic, true}};
  return t;
}

constexpr int kRxDepth = 512;

double now_us() { return rnic_now_ns() / 1000.0; }

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

void check(const ibv_wc& wc) {
  if (wc.status != IBV_WC_SUCCESS)
    fail(fmt::format("completion of wr_id {} on QP {}: {}", wc.wr_id, wc.qp_num,
                     ibv_wc_status_str(wc.status)));
}

// Polls up to n completions, waiting (as a busy loop would) when there is none.
int poll(ibv_cq* cq, ibv_wc* wc, int n) {
  for (;;) {
    const int got = ibv_poll_cq(cq, n, wc);
    if (got) return got;
    // A wait as long as the batch needs (cq_mod WRs of any size): a hang is the watchdog's.
    rnic_wait_cq(cq, RNIC_WAIT_FOREVER);
  }
}

int post(ibv_qp* qp, Op op, uint64_t wr_id, uint64_t laddr, uint32_t lkey, uint32_t len,
         uint64_t raddr, uint32_t rkey, bool signaled) {
  ibv_sge sge{laddr, len, lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op == Op::kWrite    ? IBV_WR_RDMA_WRITE
              : op == Op::kRead   ? IBV_WR_RDMA_READ
              : op == Op::kAtomic ? IBV_WR_ATOMIC_FETCH_AND_ADD
                                  : IBV_WR_SEND;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  if (op == Op::kAtomic) {
    wr.wr.atomic = {raddr, 1, 0, rkey};
  } else {
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
  }
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &wr, &bad);
}

void post_recv(ibv_qp* qp, uint64_t wr_id, uint64_t addr, uint32_t lkey, uint32_t len) {
  ibv_sge sge{addr, len, lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp, &wr, &bad)) fail(fmt::format("ibv_post_recv: errno {}", rc));
}

// send_lat's receives, as ib_send_lat keeps them: min(kRxDepth, iters) posted before the
// size's first message (each the whole buffer, so one left over from a size cut short by its
// duration fits the next), one reposted per message received while that many more are still
// to come. *outstanding counts the endpoint's posted receives across sizes.
uint64_t lat_rx_depth(uint64_t iters) { return std::min<uint64_t>(kRxDepth, iters); }
void post_lat_receives(Endpoint& ep, uint64_t iters, uint64_t max_size, uint64_t* outstanding) {
  for (; *outstanding < lat_rx_depth(iters); ++*outstanding)
    post_recv(ep.qps[0], 0, ep.addr(), ep.mr->lkey, uint32_t(max_size));
}

struct Params {
  uint64_t iters, qps, tx_depth, cq_mod;
  uint64_t max_size;
  bool atomic = false;  // the endpoints grant remote atomics
};

// A size's stopping rule, shared by a workload's two programs: at most `iters` per QP, and with
// duration_ps the client stops once that much simulated time has passed since its first post.
// A bandwidth client then posts one last signalled WR per QP and sets `total` (the send_bw server
// receives that many); a latency client makes the current iteration the last (`last`), which the
// server learns before that iteration reaches it.
// A message's share of a run's work for the progress line: its bytes and about a 2 KiB
// message's worth of fixed cost (the time a message takes grows from that floor).
double work_of(uint64_t size) { return double(size) + 2048.0; }

struct Limit {
  uint64_t duration_ps = 0;
  uint64_t start_ps = 0;
  uint64_t total = 0;          // bandwidth: WRs over all QPs
  uint64_t last = UINT64_MAX;  // latency: iterations
  uint64_t iterations = 0;     // what ran: per QP (bandwidth: the most of any QP)
  // Over several processes, where send_bw's server is another rank's: tells it the client's
  // total when the time is up (1-byte Sends carry no mark of it: send_bw_mark).
  std::function<void(uint64_t total)> tell_total;
  bool over() const { return duration_ps && now_ps() - start_ps >= duration_ps; }
};

struct BwResult {
  double peak_mib_s = 0, avg_mib_s = 0, mpps = 0;
};

struct LatResult {
  double t_min = 0, t_max = 0, t_typical = 0, t_avg = 0, t_stdev = 0, p99 = 0, p999 = 0;
  std::vector<double> samples;
};

// send_bw limited by time: the client's last Send on a QP carries the QP's count of Sends in its
// first min(size, 4) bytes, as 1 + count mod (256^k - 1) (never 0, as every other Send's bytes
// are). The server takes the count from it: the one at least what it has received, and below
// that plus its receives in flight (a 2-byte message tells 65,535 apart). 1-byte ones carry no
// mark: their server reads the client's total (Limit::total), which over several processes the
// client's rank sends the server's when the time is up (Limit::tell_total). It is there at the
// end of the window it was sent in, before the Send the client posts then can reach the server
// (its frame comes through the same exchange or a later one), and the server cannot be done
// sooner: it reads the total as one process does.
std::vector<uint8_t> send_bw_mark(uint64_t count, uint64_t size) {
  const size_t k = size_t(std::min<uint64_t>(size, 4));
  const uint64_t m = 1 + count % ((uint64_t(1) << (8 * k)) - 1);
  std::vector<uint8_t> b(k);
  for (size_t j = 0; j < k; ++j) b[j] = uint8_t(m >> (8 * j));
  return b;
}
// The count a mark m stands for, given `got` Sends received so far (0: no mark).
uint64_t send_bw_count(const uint8_t* b, uint64_t size, uint64_t got) {
  const size_t k = size_t(std::min<uint64_t>(size, 4));
  uint64_t m = 0;
  for (size_t j = 0; j < k; ++j) m |= uint64_t(b[j]) << (8 * j);
  if (m == 0) return 0;
  const uint64_t mod = (uint64_t(1) << (8 * k)) - 1;
  const uint64_t r = m - 1;  // count mod `mod`
  return got + (r + mod - got % mod) % mod;
}

// The client side of a bandwidth test.
BwResult run_bw_client(Endpoint& ep, const PeerInfo& peer, const Params& p, Op op, uint64_t size,
                       Limit& lim) {
  lim.start_ps = now_ps();
  lim.total = p.iters * p.qps;
  std::vector<uint64_t> cap(p.qps, p.iters);  // WRs each QP posts in all
  std::vector<double> tposted, tcompleted;
  std::vector<uint64_t> posted(p.qps), completed(p.qps);
  std::vector<std::vector<uint64_t>> order(p.qps);  // global index of each WR per QP
  std::vector<ibv_wc> wc(64);
  uint64_t k = 0, done = 0;
  bool stopped = false;
  while (done < lim.total) {
    if (!stopped && lim.over()) {  // time is up: one more, signalled, WR per QP
      stopped = true;
      lim.total = 0;
      for (uint64_t q = 0; q < p.qps; ++q) {
        lim.total += cap[q] = std::min(cap[q], posted[q] + 1);
        // A Send's server learns the count from the last one (send_bw_mark).
        if (op == Op::kSend && cap[q] > posted[q] && size >= 2) {
          const std::vector<uint8_t> m = send_bw_mark(cap[q], size);
          rnic_mem_write(reinterpret_cast<void*>(ep.addr() + (p.qps + q) * p.max_size), m.data(),
                         m.size());
        }
      }
      if (op == Op::kSend && size < 2 && lim.tell_total) lim.tell_total(lim.total);
    }
    for (uint64_t q = 0; q < p.qps; ++q)
      while (posted[q] < cap[q] && posted[q] - completed[q] < p.tx_depth) {
        const uint64_t i = posted[q];
        const bool sig = (i + 1) % p.cq_mod == 0 || i + 1 == cap[q];
        tposted.push_back(now_us());
        tcompleted.push_back(-1);
        order[q].push_back(k++);
        const uint64_t off = q * p.max_size;
        // (The last Send of a stopped QP from the half of the buffer that holds its mark.)
        const uint64_t from = stopped && op == Op::kSend && size >= 2 && i + 1 == cap[q]
                                  ? off + p.qps * p.max_size
                                  : off;
        if (int rc = post(ep.qps[q], op, i, ep.addr() + from, ep.mr->lkey, uint32_t(size),
                          peer.addr + off, peer.rkey, sig))
          fail(fmt::format("ibv_post_send: errno {}", rc));
        ++posted[q];
      }
    const int n = poll(ep.cq, wc.data(), int(wc.size()));
    const double t = now_us();
    for (int j = 0; j < n; ++j) {
      check(wc[j]);
      uint64_t q = 0;
      while (q < p.qps && ep.qps[q]->qp_num != wc[j].qp_num) ++q;
      for (uint64_t i = completed[q]; i <= wc[j].wr_id; ++i) tcompleted[order[q][i]] = t;
      done += wc[j].wr_id + 1 - completed[q];
      run_control::add_work(double(wc[j].wr_id + 1 - completed[q]) * work_of(size));
      completed[q] = wc[j].wr_id + 1;
    }
  }
  const uint64_t total = lim.total;
  lim.iterations = *std::max_element(cap.begin(), cap.end());
  BwResult r;
  const double first = tposted.front();
  const double last = *std::max_element(tcompleted.begin(), tcompleted.end());
  const double bytes = double(size) * double(total);
  r.avg_mib_s = bytes / (1 << 20) / ((last - first) / 1e6);
  r.mpps = double(total) / (last - first);
  const double opt = best_time_per_message(tposted, tcompleted);
  r.peak_mib_s = double(size) / (1 << 20) / (opt / 1e6);
  return r;
}

// *rq: the receives each QP has posted and not yet taken, across sizes (a size limited by time
// leaves some for the next, which takes them as its own: each is as long as the largest size).
void run_send_bw_server(Endpoint& ep, const Params& p, uint64_t size, Oob& oob, const Limit& lim,
                        std::vector<uint64_t>* rq) {
  const uint64_t depth = std::min<uint64_t>(kRxDepth, p.iters);
  rq->resize(p.qps);
  std::vector<uint64_t> posted(*rq);  // this size's receives, those left before included
  for (uint64_t q = 0; q < p.qps; ++q)
    for (; posted[q] < depth; ++posted[q], ++(*rq)[q])
      post_recv(ep.qps[q], posted[q], ep.addr() + q * p.max_size, ep.mr->lkey,
                uint32_t(p.max_size));
  oob.put(0, {});  // receives are posted
  std::vector<ibv_wc> wc(64);
  // Every Send the client will post: its iterations, or with a duration, each QP's count from
  // its last Send's mark (a QP that posted all its iterations before the time was up has none).
  // 1-byte Sends carry no mark: their server reads the client's total (Limit::tell_total).
  const bool marks = lim.duration_ps && size >= 2;
  std::vector<uint64_t> got_q(p.qps), count(p.qps);  // count: 0 while not known
  uint64_t got = 0;
  auto done = [&] {
    if (!lim.duration_ps) return got >= p.iters * p.qps;
    if (!marks) return got >= lim.total;
    for (uint64_t q = 0; q < p.qps; ++q)
      if (got_q[q] < (count[q] ? count[q] : p.iters)) return false;
    return true;
  };
  while (got == 0 || !done()) {
    const int n = poll(ep.cq, wc.data(), int(wc.size()));
    for (int j = 0; j < n; ++j) {
      check(wc[j]);
      ++got;
      uint64_t q = 0;
      while (q < p.qps && ep.qps[q]->qp_num != wc[j].qp_num) ++q;
      ++got_q[q];
      --(*rq)[q];
      if (marks && !count[q]) {
        uint8_t b[4] = {};
        rnic_mem_read(reinterpret_cast<const void*>(ep.addr() + q * p.max_size), b,
                      std::min<size_t>(size_t(size), 4));
        count[q] = send_bw_count(b, size, got_q[q]);
      }
      if (posted[q] < p.iters) {
        post_recv(ep.qps[q], posted[q], ep.addr() + q * p.max_size, ep.mr->lkey,
                  uint32_t(p.max_size));
        ++posted[q];
        ++(*rq)[q];
      }
    }
  }
}

LatResult summarize(std::vector<double> s) {
  LatResult r;
  r.samples = s;
  std::sort(s.begin(), s.end());
  const double n = double(s.size());
  r.t_min = s.front();
  r.t_max = s.back();
  r.t_typical = s[s.size() / 2];
  double sum = 0, sq = 0;
  for (double x : s) sum += x;
  r.t_avg = sum / n;
  for (double x : s) sq += (x - r.t_avg) * (x - r.t_avg);
  r.t_stdev = std::sqrt(sq / n);
  auto pct = [&](double q) { return s[size_t(std::max(1.0, std::ceil(q * n))) - 1]; };
  r.p99 = pct(0.99);
  r.p999 = pct(0.999);
  return r;
}

uint8_t tag(uint64_t i) { return uint8_t(i % 254 + 1); }
// A timed latency test's last message carries this in its last byte (no tag is 255).
constexpr uint8_t kLastMark = 255;

// One side of a latency test. client: measures.
// bounds (the client's): each sample's start and end in ps, for --breakdown.
std::vector<double> run_lat(Endpoint& ep, const PeerInfo& peer, const Params& p, Op op,
                            uint64_t size, bool client, Limit& lim, uint64_t* rx_outstanding,
                            std::vector<std::pair<uint64_t, uint64_t>>* bounds = nullptr) {
  if (client) lim.start_ps = now_ps();
  std::vector<double> samples;
  ibv_wc wc[4];
  ibv_qp* qp = ep.qps[0];
  const uint64_t last = ep.addr() + size - 1;
  // The client makes iteration i the last once its time is up; both sides stop after it. Its
  // last message says so in its last byte (kLastMark), which is how the server learns it: in
  // the same process or another (a run over several processes).
  const bool timed = lim.duration_ps != 0;
  bool marked = false;  // the server: the message just taken was the client's last
  auto decide = [&](uint64_t i) {
    if (client && lim.last == UINT64_MAX && lim.over()) lim.last = i + 1;
  };
  auto stop = [&](uint64_t i) {
    if (client) run_control::add_work(work_of(size));
    lim.iterations = i + 1;
    return client ? i + 1 >= lim.last : marked;
  };
  if (op == Op::kRead || op == Op::kAtomic) {
    for (uint64_t i = 0; i < p.iters; ++i) {
      decide(i);
      const double t0 = now_us();
      const uint64_t t0_ps = now_ps();
      if (int rc =
              post(qp, op, i, ep.addr(), ep.mr->lkey, uint32_t(size), peer.addr, peer.rkey, true))
        fail(fmt::format("ibv_post_send: errno {}", rc));
      poll(ep.cq, wc, 1);
      check(wc[0]);
      samples.push_back(now_us() - t0);
      if (bounds) bounds->push_back({t0_ps, now_ps()});
      if (stop(i)) break;
    }
    return samples;
  }
  // write_lat: the write goes from [0, size) of the buffer to [max_size, max_size + size) of
  // the peer's; each side polls the last byte of its own second region.
  const uint64_t poll_at = ep.addr() + p.max_size + size - 1;
  uint64_t sends_out = 0;
  for (uint64_t i = 0; i < p.iters; ++i) {
    decide(i);
    const double t0 = now_us();
    const uint64_t t0_ps = now_ps();
    auto send = [&] {
      const bool final = client && timed && lim.last == i + 1;
      if (op == Op::kWrite) {
        const uint8_t t = final ? kLastMark : tag(i);
        rnic_mem_write(reinterpret_cast<void*>(last), &t, 1);
      } else if (final) {
        rnic_mem_write(reinterpret_cast<void*>(last), &kLastMark, 1);
      }
      if (int rc = post(qp, op, i, ep.addr(), ep.mr->lkey, uint32_t(size), peer.addr + p.max_size,
                        peer.rkey, true))
        fail(fmt::format("ibv_post_send: errno {}", rc));
      ++sends_out;
    };
    auto receive = [&] {
      if (op == Op::kWrite && !(timed && !client)) {
        rnic_wait_mem(reinterpret_cast<void*>(poll_at), tag(i), RNIC_WAIT_FOREVER);
        return;
      }
      if (op == Op::kWrite) {  // the server of a timed run: this iteration's tag, or the mark
        uint8_t b = 0;
        rnic_mem_read(reinterpret_cast<const void*>(poll_at), &b, 1);
        host::wait_mem_change(reinterpret_cast<const void*>(poll_at), &b, 1, RNIC_WAIT_FOREVER);
        rnic_mem_read(reinterpret_cast<const void*>(poll_at), &b, 1);
        if (b != tag(i) && b != kLastMark)
          fail(fmt::format("write_lat: iteration {} found {} where its tag is {}", i, b, tag(i)));
        marked = b == kLastMark;
        return;
      }
      for (;;) {
        const int n = poll(ep.cq, wc, 4);
        bool got = false;
        for (int j = 0; j < n; ++j) {
          check(wc[j]);
          if (wc[j].opcode & IBV_WC_RECV) {
            got = true;
            --*rx_outstanding;
            if (i + 1 + lat_rx_depth(p.iters) <= p.iters) {
              post_recv(qp, i + 1, ep.addr(), ep.mr->lkey, uint32_t(p.max_size));
              ++*rx_outstanding;
            }
          } else {
            --sends_out;
          }
        }
        if (got) {
          if (!client && timed) {  // the client's last Send says so in its last byte
            uint8_t b = 0;
            rnic_mem_read(reinterpret_cast<const void*>(last), &b, 1);
            marked = b == kLastMark;
          }
          return;
        }
      }
    };
    if (client) {
      send();
      receive();
      samples.push_back((now_us() - t0) / 2);
      if (bounds) bounds->push_back({t0_ps, now_ps()});
    } else {
      receive();
      send();
    }
    // Reap our own send completions so the SQ never fills.
    while (sends_out > 0 && op == Op::kWrite) {
      poll(ep.cq, wc, 1);
      check(wc[0]);
      --sends_out;
    }
    if (stop(i)) break;
  }
  return samples;
}

// The endpoints of a test's two sides: buffers for two messages of the largest size per QP, the
// send queue one deeper than tx_depth, the card's limits for receives and CQ entries.
EndpointConfig endpoint_config(const Params& p, const SystemConfig& c) {
  EndpointConfig ec;
  ec.buf_bytes = 2 * p.max_size * p.qps;
  ec.qps = int(p.qps);
  ec.send_depth = uint32_t(p.tx_depth + 1);
  ec.recv_depth = uint32_t(std::min<uint64_t>(kRxDepth, c.core.max_qp_wr));
  ec.cqe = int(std::min<int64_t>(c.core.max_cqe, 8192));
  if (p.atomic) {
    ec.access |= IBV_ACCESS_REMOTE_ATOMIC;
    ec.qp_access |= IBV_ACCESS_REMOTE_ATOMIC;
  }
  return ec;
}

// One size of a test, client side, its endpoint connected: the exchange with the server a Send
// test needs before it starts (client_run then runs it).
void client_ready(Endpoint& ep, const Params& p, const Test& t, uint64_t* rx_outstanding,
                  Oob& oob) {
  if (t.op == Op::kSend && !t.latency) oob.get(0);  // the server's receives are up
  if (t.op == Op::kSend && t.latency) {
    post_lat_receives(ep, p.iters, p.max_size, rx_outstanding);
    oob.put(1, {});  // the server may send
    oob.get(0);      // the server's receive is posted
  }
}

// The test itself: a latency test's samples go to *samples, a bandwidth test's result to *bw.
void client_run(Endpoint& ep, const PeerInfo& peer, const Params& p, const Test& t, uint64_t size,
                Limit& lim, uint64_t* rx_outstanding, std::vector<double>* samples, BwResult* bw,
                std::vector<std::pair<uint64_t, uint64_t>>* bounds = nullptr) {
  if (t.latency)
    *samples = run_lat(ep, peer, p, t.op, size, true, lim, rx_outstanding, bounds);
  else
    *bw = run_bw_client(ep, peer, p, t.op, size, lim);
}

// One size of a test, server side, its endpoint connected. false: the server has nothing to do
// in this test (the card alone answers Reads and takes Writes), for any size.
// The server of Reads, atomics and write_bw takes no part once connected.
bool passive_server(const Test& t) {
  return t.op == Op::kRead || t.op == Op::kAtomic || (!t.latency && t.op == Op::kWrite);
}

bool server_size(Endpoint& ep, const PeerInfo& peer, const Params& p, const Test& t, uint64_t size,
                 Limit& lim, uint64_t* rx_outstanding, std::vector<uint64_t>* server_rq, Oob& oob) {
  if (passive_server(t)) return false;
  if (t.op == Op::kSend && !t.latency) {
    run_send_bw_server(ep, p, size, oob, lim, server_rq);
    return true;
  }
  if (t.op == Op::kSend) {
    oob.get(1);
    post_lat_receives(ep, p.iters, p.max_size, rx_outstanding);
    oob.put(0, {});
  }
  run_lat(ep, peer, p, t.op, size, false, lim, rx_outstanding);
  return true;
}

std::string bw_table(const nlohmann::ordered_json& rows) {
  std::string s(87, '-');
  s += "\n #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n";
  for (const auto& r : rows)
    s += fmt::format(" {:<10} {:<10}       {:<8.2f}            {:<8.2f}              {:.6f}\n",
                     r["bytes"].get<uint64_t>(), r["iterations"].get<uint64_t>(),
                     r["bw_peak_mib_s"].get<double>(), r["bw_avg_mib_s"].get<double>(),
                     r["msg_rate_mpps"].get<double>());
  s += std::string(87, '-');
  return s;
}

std::string lat_table(const nlohmann::ordered_json& rows) {
  std::string s(87, '-');
  s += "\n #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
       "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
  for (const auto& r : rows)
    s += fmt::format(
        " {:<6} {:<10}      {:<8.2f}       {:<8.2f}     {:<8.2f}           {:<8.2f}       "
        "{:<8.2f}        {:<8.2f}               {:<8.2f}\n",
        r["bytes"].get<uint64_t>(), r["iterations"].get<uint64_t>(), r["t_min_us"].get<double>(),
        r["t_max_us"].get<double>(), r["t_typical_us"].get<double>(), r["t_avg_us"].get<double>(),
        r["t_stdev_us"].get<double>(), r["p99_us"].get<double>(), r["p999_us"].get<double>());
  s += std::string(87, '-');
  return s;
}

// The figures a test's rows are drawn along (against "bytes").
std::vector<std::string> y_axes(const Test& t) {
  if (t.latency) return {"t_typical_us", "t_avg_us", "p99_us"};
  return {"bw_peak_mib_s", "bw_avg_mib_s"};
}

const Test& test_of(const std::string& name) {
  for (const Test& t : tests())
    if (t.name == name) return t;
  throw std::logic_error("unknown test " + name);
}

// One workload: its test, its two hosts, its endpoints and the rows it measured.
struct Job {
  const WorkloadSpec* spec;
  const Test* t;
  int client_node, server_node;
  Params p;
  std::vector<uint64_t> sizes;
  Oob oob;
  Endpoint client, server;
  PeerInfo to_server, to_client;
  uint64_t client_rx = 0, server_rx = 0;  // send_lat: receives each has posted
  std::vector<uint64_t> server_rq;        // send_bw: the server's receives not taken, per QP
  struct Point {
    uint64_t start_ps = 0, end_ps = 0;  // the client's first post; both sides done
    double wall_s = 0;                  // the client's wall time for it
    BwResult bw;
    std::vector<double> samples;
    std::vector<std::pair<uint64_t, uint64_t>> bounds;  // each sample's start and end (ps)
    bool done = false;
  };
  std::vector<Point> points;  // one per size
  std::vector<Limit> limits;  // one per size
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::string error;      // the first failure of either side's program
  uint64_t error_ps = 0;  // ... and when
  // Each side's first QP (the breakdown's; over several processes gather_jobs tells every rank
  // the other side's). UINT32_MAX: none made.
  uint32_t client_qp0 = UINT32_MAX, server_qp0 = UINT32_MAX;
};
using Point = Job::Point;

// Wraps a program so a failure ends it and is kept as the job's error.
std::function<void()> guarded(Job& j, std::function<void()> fn) {
  return [&j, fn = std::move(fn)] {
    try {
      fn();
    } catch (const std::runtime_error& e) {
      if (j.error.empty()) {
        j.error = e.what();
        j.error_ps = now_ps();
      }
    }
  };
}

// The memory checks of a scenario's workloads, before anything runs (validate makes them too).
//
// Host memory: each job's client and server hold a buffer of 2 x the largest size x QPs, and
// the driver a page list of 8 B per page of it. Scattered pages leave gaps that later pages
// fill (docs/memory.md, "Physical memory"), so the buffers and lists must fit in the host's
// memory, hole aside, less the kernel's reserve for the OS, page tables and rings.
//
// This machine's memory: the simulated pages a run writes live in real memory, and the buffers
// bound them (each endpoint's 2 x the largest size x QPs, written as data arrives); the
// simulator itself takes kSimulatorBaseBytes more.
void check_workload_memory(const Scenario& s, const Topology& topo) {
  constexpr double kReservedMib = double(host::kKernelReserveMib);
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < topo.hosts.size(); ++i) index.emplace(topo.hosts[i].name, i);
  std::vector<double> need_mib(topo.hosts.size());
  uint64_t real_need = kSimulatorBaseBytes;
  for (const WorkloadSpec& w : s.workloads) {
    if (!w.program.empty()) continue;
    const Test& t = test_of(w.test);
    std::vector<uint64_t> sizes;
    if (workload_int(w, "all"))
      sizes.push_back(8u << 20);
    else if (w.nodes.count("sizes"))
      for (int64_t sz : workload_ints(w, "sizes")) sizes.push_back(uint64_t(sz));
    else
      sizes.push_back(uint64_t(workload_int(w, "size")));
    if (t.op == Op::kAtomic &&
        std::any_of(sizes.begin(), sizes.end(), [](uint64_t s) { return s != 8; }))
      throw InputError(w.where, workload_int(w, "all") ? "all" : "size",
                       fmt::format("{} moves 8 bytes per operation (perftest's ib_{}): the size "
                                   "is 8, there is no sweep",
                                   w.test, w.test));
    const uint64_t max_size = std::max<uint64_t>(*std::max_element(sizes.begin(), sizes.end()), 64);
    const uint64_t qps = t.latency ? 1 : uint64_t(workload_int(w, "qps"));
    const double buf = 2.0 * double(max_size) * double(qps) / double(1 << 20);
    for (size_t n :
         {w.from.empty() ? size_t(0) : index.at(w.from), w.to.empty() ? size_t(1) : index.at(w.to)})
      need_mib[n] += buf * (1 + 8.0 / double(host::kPageSize));
    real_need += 2 * (2 * max_size * qps);
  }
  for (size_t n = 0; n < topo.hosts.size(); ++n) {
    if (need_mib[n] == 0) continue;
    const HostConfig& h = topo.hosts[n].cfg.host;
    const double have = double(h.mem_mib - h.hole_mib) - kReservedMib;
    if (have <= 0)
      throw InputError(
          s.workloads.front().where, "host.mem_mib",
          fmt::format("host {} has {} MiB of memory{}, and the OS, page tables and rings take "
                      "{:.0f} MiB before any buffer: raise host.mem_mib",
                      topo.hosts[n].name, h.mem_mib,
                      h.hole_mib ? fmt::format(" with a {} MiB hole", h.hole_mib) : "",
                      kReservedMib));
    if (need_mib[n] > have)
      throw InputError(
          s.workloads.front().where, "host.mem_mib",
          fmt::format("host {}'s buffers and their page lists take {:.0f} MiB of physical "
                      "memory, more than the {:.0f} MiB its {} MiB leave: raise host.mem_mib or "
                      "lower the size or QPs",
                      topo.hosts[n].name, need_mib[n], have, h.mem_mib));
  }
  const MachineMemory mm = machine_memory();
  if (real_need > mm.bytes)
    throw InputError(
        s.workloads.front().where, "size",
        fmt::format("the run needs about {} MiB of this machine's memory (each endpoint's buffer "
                    "of 2 x size x QPs, and {} MiB for the simulator's own growth), more than "
                    "the {} MiB available ({}): lower the size (-s) or the QPs (-q)",
                    real_need >> 20, kSimulatorBaseBytes >> 20, mm.bytes >> 20, mm.bound));
}

// Over several processes: what each rank's side of every job measured goes to every rank
// (sim/ranks.h); a job's points from its client's rank, each point's end the latest of either
// side's, its error the earliest of the two sides' (at the same time, the lower rank's), each
// side's first QP its own rank's.
void gather_jobs(const Cluster& cl, std::vector<std::unique_ptr<Job>>& jobs) {
  ranks::Packer m;
  for (const auto& jp : jobs) {
    const Job& j = *jp;
    m.put(j.error_ps).put(uint32_t(j.error.size())).put_bytes(j.error.data(), j.error.size());
    m.put(j.client_qp0).put(j.server_qp0);
    for (size_t si = 0; si < j.points.size(); ++si) {
      const Point& pt = j.points[si];
      m.put(pt.end_ps);
      if (!cl.local(j.client_node)) continue;
      m.put(uint8_t(pt.done))
          .put(pt.start_ps)
          .put(pt.wall_s)
          .put(pt.bw)
          .put(j.limits[si].iterations);
      m.put(uint64_t(pt.samples.size()))
          .put_bytes(pt.samples.data(), pt.samples.size() * sizeof(double));
      m.put(uint64_t(pt.bounds.size()));
      for (const auto& b : pt.bounds) m.put(b.first).put(b.second);
    }
  }
  const std::vector<std::string> all =
      ranks::all_gather(std::string(reinterpret_cast<const char*>(m.data()), m.size()));
  std::vector<std::string> error(jobs.size());
  std::vector<uint64_t> error_ps(jobs.size(), 0);
  for (size_t r = 0; r < all.size(); ++r) {
    ranks::Unpacker u(reinterpret_cast<const uint8_t*>(all[r].data()), all[r].size());
    for (size_t k = 0; k < jobs.size(); ++k) {
      Job& j = *jobs[k];
      const auto at = u.get<uint64_t>();
      const auto n = u.get<uint32_t>();
      const auto* e = reinterpret_cast<const char*>(u.take(n));
      if (n > 0 && (error[k].empty() || at < error_ps[k])) {  // the earliest; a tie: rank order
        error[k].assign(e, n);
        error_ps[k] = at;
      }
      for (uint32_t* qp : {&j.client_qp0, &j.server_qp0})
        if (const auto q = u.get<uint32_t>(); q != UINT32_MAX) *qp = q;
      const bool client_here = cl.part.host_rank[size_t(j.client_node)] == int(r);
      for (size_t si = 0; si < j.points.size(); ++si) {
        Point& pt = j.points[si];
        pt.end_ps = std::max(pt.end_ps, u.get<uint64_t>());
        if (!client_here) continue;
        pt.done = u.get<uint8_t>() != 0;
        pt.start_ps = u.get<uint64_t>();
        pt.wall_s = u.get<double>();
        pt.bw = u.get<BwResult>();
        j.limits[si].iterations = u.get<uint64_t>();
        pt.samples.resize(u.get<uint64_t>());
        std::memcpy(pt.samples.data(), u.take(pt.samples.size() * sizeof(double)),
                    pt.samples.size() * sizeof(double));
        pt.bounds.resize(u.get<uint64_t>());
        for (auto& b : pt.bounds) {
          b.first = u.get<uint64_t>();
          b.second = u.get<uint64_t>();
        }
      }
    }
  }
  for (size_t k = 0; k < jobs.size(); ++k) jobs[k]->error = error[k];
}

// Host k's IPv4 address (its `ip:`, else its index's default).
uint32_t host_ip(const Topology& topo, size_t k) {
  return topo.hosts[k].ip ? topo.hosts[k].ip : default_ip(int(k));
}

// A workload's program of the user's on each of its hosts: how it ended, and where it waits if
// it did not.
struct ProgramRun {
  const WorkloadSpec* spec;
  std::vector<ProgramEnd> end;
  std::vector<const sc_core::sc_object*> thread;  // each host's thread, once started
  std::vector<std::string> blocked;               // where an unfinished one waits at the end
};

// Over several processes each rank runs the programs of its own hosts: every rank learns how
// the others' ended (a collective call), so that every rank reports the run as one process does.
void share_program_ends(const Cluster& cl, std::vector<ProgramRun>& user) {
  // Every program, in the order of the workloads and then of their hosts.
  std::vector<std::pair<ProgramRun*, size_t>> all;
  for (ProgramRun& u : user)
    for (size_t i = 0; i < u.spec->hosts.size(); ++i) all.push_back({&u, i});
  ranks::Packer m;
  for (uint32_t k = 0; k < all.size(); ++k) {
    const auto [u, i] = all[k];
    if (cl.part.host_rank[size_t(cl.find(u->spec->hosts[i]))] != ranks::rank()) continue;
    const ProgramEnd& e = u->end[i];
    m.put(k).put(int32_t(e.kind)).put(int32_t(e.code)).put(uint8_t(e.at_load));
    m.put_sized(e.what).put_sized(e.last_stderr).put_sized(u->blocked[i]);
  }
  const std::vector<std::string> ends =
      ranks::all_gather(std::string(reinterpret_cast<const char*>(m.data()), m.size()));
  for (size_t r = 0; r < ends.size(); ++r) {
    if (int(r) == ranks::rank()) continue;
    ranks::Unpacker u(reinterpret_cast<const uint8_t*>(ends[r].data()), ends[r].size());
    while (u.left() > 0) {
      const auto [run, i] = all.at(u.get<uint32_t>());
      ProgramEnd& e = run->end[i];
      e.kind = ProgramEnd::Kind(u.get<int32_t>());
      e.code = u.get<int32_t>();
      e.at_load = u.get<uint8_t>() != 0;
      e.what = u.get_sized<std::string>();
      e.last_stderr = u.get_sized<std::string>();
      run->blocked[i] = u.get_sized<std::string>();
    }
  }
}

int run_workloads(ExperimentContext& ctx) {
  const Topology topo = build_topology(ctx.scenario);
  Cluster cl(topo, ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);  // waveform and captures

  std::vector<std::unique_ptr<Job>> jobs;
  for (const WorkloadSpec& w : ctx.scenario.workloads) {
    if (!w.program.empty()) continue;  // a program of the user's: below
    auto j = std::make_unique<Job>();
    j->spec = &w;
    j->t = &test_of(w.test);
    j->client_node = w.from.empty() ? 0 : cl.find(w.from);
    j->server_node = w.to.empty() ? 1 : cl.find(w.to);
    const SystemConfig& ccfg = topo.hosts[size_t(j->client_node)].cfg;
    Params& p = j->p;
    p.iters = uint64_t(workload_int(w, "iters"));
    p.qps = j->t->latency ? 1 : uint64_t(workload_int(w, "qps"));
    p.tx_depth = j->t->latency ? 1 : uint64_t(workload_int(w, "tx_depth"));
    p.cq_mod =
        j->t->latency ? 1 : std::min<uint64_t>(uint64_t(workload_int(w, "cq_mod")), p.tx_depth);
    if (workload_int(w, "all"))
      for (uint64_t sz = 2; sz <= (8u << 20); sz *= 2) j->sizes.push_back(sz);
    else if (w.nodes.count("sizes"))
      for (int64_t sz : workload_ints(w, "sizes")) j->sizes.push_back(uint64_t(sz));
    else
      j->sizes.push_back(uint64_t(workload_int(w, "size")));
    p.max_size = std::max<uint64_t>(*std::max_element(j->sizes.begin(), j->sizes.end()), 64);
    p.atomic = j->t->op == Op::kAtomic;
    if ((j->t->op == Op::kRead || p.atomic) && p.tx_depth > uint64_t(ccfg.core.max_qp_wr))
      p.tx_depth = uint64_t(ccfg.core.max_qp_wr);
    jobs.push_back(std::move(j));
  }

  // Again now that the system is built: this machine's memory less what it took
  // (kSimulatorBaseBytes is counted from here).
  check_workload_memory(ctx.scenario, topo);

  // Each job is two programs, its client on `from` and its server on `to`, that set up their
  // endpoints (connecting through the job's own out-of-band channel) and then run every size
  // in turn; jobs do not wait for each other, so jobs that share no host or link run exactly as
  // each would alone.
  std::vector<Cluster::Program> programs;
  // Over several processes, send_bw's totals from a client's rank to its server's (job, size,
  // total): Limit::tell_total.
  struct Totals {
    uint32_t ch = UINT32_MAX;
    ~Totals() {
      if (ch != UINT32_MAX) ranks::drop_channel(ch);
    }
  } totals;
  if (ranks::parallel())
    totals.ch = ranks::channel([&jobs](int, const uint8_t* d, size_t n) {
      ranks::Unpacker u(d, n);
      const auto k = u.get<uint64_t>(), si = u.get<uint64_t>();
      jobs.at(size_t(k))->limits.at(size_t(si)).total = u.get<uint64_t>();
    });
  for (size_t k = 0; k < jobs.size(); ++k) {
    Job& j = *jobs[k];
    const EndpointConfig ec = endpoint_config(j.p, topo.hosts[size_t(j.client_node)].cfg);
    j.points.resize(j.sizes.size());
    j.limits.assign(j.sizes.size(), Limit{});
    const bool split = cl.local(j.client_node) != cl.local(j.server_node);
    for (size_t si = 0; si < j.limits.size(); ++si) {
      Limit& l = j.limits[si];
      l.duration_ps = uint64_t(workload_int(*j.spec, "duration_us")) * 1000000;
      if (!split || !l.duration_ps) continue;
      if (cl.local(j.server_node)) {
        l.total = j.p.iters * j.p.qps;  // what the client starts from (run_bw_client)
        continue;
      }
      // (Sent as the programs' out-of-band board sends: valid a management latency later.)
      const int to = cl.part.host_rank[size_t(j.server_node)];
      const uint64_t after = uint64_t(cl.cfg.host.mgmt_latency_ns) * 1000;
      l.tell_total = [ch = totals.ch, to, k, si, after](uint64_t total) {
        ranks::Packer m;
        m.put(uint64_t(k)).put(uint64_t(si)).put(total);
        ranks::send(to, ch, m.data(), m.size(), now_ps() + after);
      };
    }
    const uint64_t start_ps = uint64_t(j.spec->start_us * 1e6);
    programs.push_back(
        {j.client_node, guarded(j, [&j, ec, start_ps] {
           j.client.open(ec);
           j.client_qp0 = j.client.qps[0]->qp_num;
           j.oob.put(1, j.client.info());
           j.to_server = j.oob.get(0);
           j.client.connect(j.to_server);
           if (now_ps() < start_ps)
             sc_core::wait(sc_core::sc_time::from_value(start_ps - now_ps()));
           for (size_t si = 0; si < j.sizes.size(); ++si) {
             Point& pt = j.points[si];
             client_ready(j.client, j.p, *j.t, &j.client_rx, j.oob);
             pt.start_ps = now_ps();
             const auto wall0 = std::chrono::steady_clock::now();
             client_run(j.client, j.to_server, j.p, *j.t, j.sizes[si], j.limits[si], &j.client_rx,
                        &pt.samples, &pt.bw, &pt.bounds);
             pt.end_ps = std::max(pt.end_ps, now_ps());
             pt.wall_s =
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
             pt.done = true;
           }
         })});
    programs.push_back({j.server_node, guarded(j, [&j, ec] {
                          j.server.open(ec);
                          j.server_qp0 = j.server.qps[0]->qp_num;
                          j.oob.put(0, j.server.info());
                          j.to_client = j.oob.get(1);
                          j.server.connect(j.to_client);
                          for (size_t si = 0; si < j.sizes.size(); ++si) {
                            if (!server_size(j.server, j.to_client, j.p, *j.t, j.sizes[si],
                                             j.limits[si], &j.server_rx, &j.server_rq, j.oob))
                              break;
                            j.points[si].end_ps = std::max(j.points[si].end_ps, now_ps());
                          }
                        })});
  }
  // Programs of the user's: a private copy of the shared object per host, loaded and run on the
  // host's thread with that host's arguments; how each ended is the workload's result. One that
  // ends abnormally (a fault signal, an exception) stops the run at once: rnicsim does not go on
  // trusting a process a program has faulted in (sim/traffic/program.h).
  std::vector<ProgramRun> user;
  std::unique_ptr<exec::MgmtNet> mgmt;  // executables' sockets, made with the first one
  std::unique_ptr<exec::CmNet> cm;      // and their librdmacm connections
  for (const WorkloadSpec& w : ctx.scenario.workloads)
    if (!w.program.empty())
      user.push_back({&w, std::vector<ProgramEnd>(w.hosts.size()),
                      std::vector<const sc_core::sc_object*>(w.hosts.size()),
                      std::vector<std::string>(w.hosts.size())});
  for (ProgramRun& u : user)
    for (size_t i = 0; i < u.spec->hosts.size(); ++i) {
      const std::vector<std::string> args = u.spec->args.empty()
                                                ? std::vector<std::string>{}
                                                : u.spec->args[u.spec->args.size() == 1 ? 0 : i];
      if (u.spec->exec) {
        // An executable: an OS process of its own, with a simulated process of its own on
        // the host (its addresses are its own), its outputs in OUT/<host>/.
        exec::ExecRun r;
        r.argv = {u.spec->program};
        r.argv.insert(r.argv.end(), u.spec->exec_args.begin(), u.spec->exec_args.end());
        r.argv.insert(r.argv.end(), args.begin(), args.end());
        const std::filesystem::path dir =
            std::filesystem::path(ctx.out_dir.empty() ? "." : ctx.out_dir) / u.spec->hosts[i];
        std::filesystem::create_directories(dir);
        r.out_file = (dir / (u.spec->name + ".out")).string();
        r.err_file = (dir / (u.spec->name + ".err")).string();
        r.cpu_limit_s = ctx.cfg.sim.spin_guard_s;
        // Over several processes the two ends of a socket or of an rdma_cm connection may be on
        // different ranks (each host's address tells which).
        auto rank_of_ip = [&cl, &topo](uint32_t ip) {
          for (size_t k = 0; k < topo.hosts.size(); ++k)
            if (host_ip(topo, k) == ip) return cl.part.host_rank[k];
          return ranks::rank();  // no such host: nothing listens there
        };
        if (!mgmt) {
          mgmt = std::make_unique<exec::MgmtNet>(
              exec::MgmtParams{double(ctx.cfg.host.mgmt_latency_ns), ctx.cfg.host.mgmt_gbps,
                               double(ctx.cfg.host.mgmt_connect_wait_us)});
          if (ranks::parallel()) mgmt->span_ranks(rank_of_ip);
        }
        r.net = mgmt.get();
        if (!cm) {
          cm = std::make_unique<exec::CmNet>(
              exec::MgmtParams{double(ctx.cfg.host.mgmt_latency_ns), ctx.cfg.host.mgmt_gbps,
                               double(ctx.cfg.host.mgmt_connect_wait_us)});
          if (ranks::parallel()) cm->span_ranks(rank_of_ip);
        }
        r.cm = cm.get();
        const size_t at_host = size_t(cl.find(u.spec->hosts[i]));  // (maybe another rank's)
        r.mac = topo.hosts[at_host].mac;
        r.mac_of_ip = [&topo](uint32_t ip, MacAddr* mac) {
          for (size_t k = 0; k < topo.hosts.size(); ++k)
            if (host_ip(topo, k) == ip) {
              *mac = topo.hosts[k].mac;
              return true;
            }
          return false;
        };
        r.ip = host_ip(topo, at_host);
        r.host = u.spec->hosts[i];
        r.vpid = int(4000 + programs.size());
        r.clock_read_ns = ctx.cfg.cost.clock_read_ns;
        r.quantum_ns = ctx.cfg.sim.exec_quantum_ns;
        r.cpu_mhz = ctx.cfg.host.cpu_mhz;
        StatGroup& g = ctx.stats.group("exec");
        ctx.owner["exec"] = -1;  // (over several processes: every rank's counts, summed)
        r.calls = &g.counter("calls", "calls", "calls of executables served by the simulator");
        r.slept_us = &g.counter("slept_us", "us", "simulated time executables slept");
        r.clock_us = &g.counter(
            "clock_us", "us", "simulated time executables spent reading their clock between calls");
        r.start_wait_us = &g.counter("start_wait_us", "us",
                                     "simulated time executables waited for their start_us");
        r.spins = &g.counter("spins", "spins",
                             "spins on registered memory executables were seen in (each a wait "
                             "until the bytes change)");
        r.looks = &no_progress(g.counter("looks", "calls",
                                         "looks at descriptors of executables' kernels in waits "
                                         "with no timeout (not progress)"));
        r.looked_us = &no_progress(
            g.counter("looked_us", "us", "simulated time those looks slept (not progress)"));
        r.sleep_slice_ns = uint64_t(ctx.cfg.sim.watchdog_us) * 1000 / 4;
        r.host_ip = [&cl, &topo](const std::string& name) {
          const int k = cl.find(name);
          return k < 0 ? 0u : host_ip(topo, size_t(k));
        };
        r.host_name = [&cl, &topo](uint32_t ip) {
          for (size_t k = 0; k < topo.hosts.size(); ++k)
            if (host_ip(topo, k) == ip) return cl.host_names[k];
          return std::string();
        };
        Cluster::Program p{
            cl.find(u.spec->hosts[i]), [&u, i, r] {
              u.thread[i] = sc_core::sc_get_current_process_handle().get_process_object();
              // Started at its start time (start_us), not before; the wait
              // counted as it passes (the watchdog sees it move).
              const uint64_t at = uint64_t(u.spec->start_us * 1e6);
              while (now_ps() < at) {
                const uint64_t step = std::min(at - now_ps(), r.sleep_slice_ns * 1000);
                sc_core::wait(sc_core::sc_time::from_value(step));
                *r.start_wait_us += step / 1000000;
              }
              u.end[i] = exec::run_exec(r);
              if (u.end[i].abnormal()) throw RunFailed(u.end[i].describe());
            }};
        p.process = int(1000 + programs.size());
        programs.push_back(p);
        continue;
      }
      programs.push_back({cl.find(u.spec->hosts[i]), [&u, i, args] {
                            u.thread[i] =
                                sc_core::sc_get_current_process_handle().get_process_object();
                            u.end[i] = run_program(u.spec->program, args);
                            if (u.end[i].abnormal()) throw RunFailed(u.end[i].describe());
                          }});
    }
  // One line for a program that did not end well: workload, program, host and what happened.
  auto program_line = [](const ProgramRun& u, size_t i, const std::string& what) {
    return fmt::format("workload {} (program {}) on {}: {}", u.spec->name, u.spec->program,
                       u.spec->hosts[i], what);
  };
  auto program_results = [&] {
    for (const ProgramRun& u : user) {
      nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
      for (size_t i = 0; i < u.spec->hosts.size(); ++i) {
        const ProgramEnd& e = u.end[i];
        nlohmann::ordered_json h = {{"host", u.spec->hosts[i]}};
        h["exit"] = e.kind == ProgramEnd::kReturned || e.kind == ProgramEnd::kExited ? e.code : -1;
        if (e.kind == ProgramEnd::kExited) h["exit_call"] = true;
        if (e.kind == ProgramEnd::kSignal) h["signal"] = e.code;
        if (e.kind == ProgramEnd::kException) h["exception"] = e.what;
        if (e.kind == ProgramEnd::kSignal && !e.what.empty()) h["stopped"] = e.what;
        if (!e.last_stderr.empty()) h["stderr_last"] = e.last_stderr;
        if (e.kind == ProgramEnd::kNotRun) {
          h["unfinished"] = true;
          if (!u.blocked[i].empty()) h["blocked_in"] = u.blocked[i];
        }
        if (e.at_load) h["at_load"] = true;
        if (e.kind != ProgramEnd::kNotRun) h["status"] = e.describe();
        if (e.failed()) h["failed"] = true;
        hosts.push_back(h);
      }
      nlohmann::ordered_json w = {{"name", u.spec->name}, {"program", u.spec->program}};
      if (u.spec->exec) {
        nlohmann::ordered_json argv = nlohmann::ordered_json::array({u.spec->program});
        for (const std::string& a : u.spec->exec_args) argv.push_back(a);
        w["exec"] = argv;
      }
      w["hosts"] = hosts;
      ctx.workloads.push_back(w);
    }
  };

  run_control::set_point(0, 1);
  double work = 0;
  for (const auto& j : jobs)
    for (uint64_t size : j->sizes)
      work += double(j->p.iters) * double(j->t->latency ? 1 : j->p.qps) * work_of(size);
  run_control::set_work_total(work);
  // How each program ended and where an unfinished one waits; over several processes every
  // rank learns the others' (each runs the programs of its own hosts), so that every rank
  // reports the run as one process would. Every rank leaves cl.run at the same agreement.
  std::exception_ptr ran;
  try {
    cl.run(programs);
  } catch (...) {
    ran = std::current_exception();
  }
  for (ProgramRun& u : user)
    for (size_t i = 0; i < u.spec->hosts.size(); ++i)
      if (u.end[i].kind == ProgramEnd::kNotRun) u.blocked[i] = host::blocked_in(u.thread[i]);
  if (ranks::parallel() && !user.empty()) share_program_ends(cl, user);
  try {
    if (ran) std::rethrow_exception(ran);
  } catch (const RunFailed& f) {
    // A program that faulted or threw: that is what to report, with every program's state.
    for (const ProgramRun& u : user)
      for (size_t i = 0; i < u.spec->hosts.size(); ++i)
        if (u.end[i].abnormal()) {
          program_results();
          throw RunFailed(program_line(u, i, u.end[i].describe()));
        }
    throw;
  } catch (const HungError& h) {
    // A program that failed leaves its peer waiting for it: the failure is the cause to report.
    bool failed = false;
    for (auto& j : jobs) failed |= !j->error.empty();
    failed = ranks::max_all(failed ? 1 : 0) != 0;  // (every rank stopped here: they agree)
    std::string cause;
    for (const ProgramRun& u : user)
      for (size_t i = 0; i < u.spec->hosts.size() && cause.empty(); ++i)
        if (u.end[i].kind != ProgramEnd::kNotRun && u.end[i].failed())
          cause = program_line(u, i, u.end[i].describe());
    // Else a program still waiting when nothing can happen any more (or nothing moves) is the
    // cause: named with where it waits; the blocks' state goes into stats.json.
    for (const ProgramRun& u : user)
      for (size_t i = 0; i < u.spec->hosts.size() && cause.empty(); ++i)
        if (u.end[i].kind == ProgramEnd::kNotRun) {
          const std::string& b = u.blocked[i];
          cause = program_line(
              u, i,
              fmt::format("still waiting at {:.3f} us{} and nothing is left that could end it",
                          double(now_ps()) / 1e6, b.empty() ? "" : " in " + b));
        }
    if (!cause.empty()) {
      program_results();
      RunFailed f(cause);
      f.detail = h.what();
      throw f;
    }
    if (!failed) throw;
  }

  // Over several processes each job's measurements are its client's rank's, the end of each
  // point the later of its two sides', its error the first either side had: every rank then
  // makes the same rows.
  if (ranks::parallel()) gather_jobs(cl, jobs);
  // ... and rank 0 takes every rank's probe records for the breakdown.
  if (ctx.requests) ctx.requests->gather();
  // A failed channel (retry budget spent) names the links that lost frames: its cause.
  std::string lossy = cl.lossy_links_everywhere();
  while (!lossy.empty() && lossy.back() == '\n') lossy.pop_back();
  for (size_t at; (at = lossy.find('\n')) != std::string::npos;) lossy.replace(at, 1, "; ");
  int rc = 0;
  for (auto& jp : jobs) {
    Job& j = *jp;
    if (!j.error.empty()) {
      const bool channel = j.error.find("retry counter exceeded") != std::string::npos;
      if (ranks::rank() == 0)  // (every rank knows it: gather_jobs)
        fmt::print(stderr, "rnicsim: workload {} ({}): {}{}\n", j.spec->name, j.t->name, j.error,
                   channel && !lossy.empty() ? " (" + lossy + ")" : "");
      rc = 1;
    }
    for (size_t si = 0; si < j.sizes.size(); ++si) {
      const Point& pt = j.points[si];
      if (!pt.done) break;
      const uint64_t size = j.sizes[si];
      nlohmann::ordered_json row = {{"bytes", size}, {"iterations", j.limits[si].iterations}};
      if (j.t->latency) {
        const LatResult l = summarize(pt.samples);
        row["t_min_us"] = l.t_min;
        row["t_max_us"] = l.t_max;
        row["t_typical_us"] = l.t_typical;
        row["t_avg_us"] = l.t_avg;
        row["t_stdev_us"] = l.t_stdev;
        row["p99_us"] = l.p99;
        row["p999_us"] = l.p999;
        Histogram& h =
            ctx.stats.group("perf." + j.spec->name)
                .histogram(fmt::format("latency_{}B", size), "us", "per-iteration latency samples",
                           {0.5, 1,  1.5, 2,  2.5, 3,   4,   5,   6,    8,
                            10,  15, 20,  30, 50,  100, 200, 500, 1000, 10000});
        for (double x : l.samples) h.sample(x);
      } else {
        row["bw_peak_mib_s"] = pt.bw.peak_mib_s;
        row["bw_avg_mib_s"] = pt.bw.avg_mib_s;
        row["msg_rate_mpps"] = pt.bw.mpps;
      }
      row["sim_time_ns"] = double(pt.end_ps - pt.start_ps) / 1000.0;
      row["wall_s"] = pt.wall_s;
      j.rows.push_back(row);
      row["workload"] = j.spec->name;
      ctx.rows.push_back(row);
    }
  }
  program_results();
  for (const ProgramRun& u : user)
    for (size_t i = 0; i < u.spec->hosts.size(); ++i)
      if (u.end[i].failed()) {
        fmt::print(stderr, "rnicsim: {}\n", program_line(u, i, u.end[i].describe()));
        rc = 1;
      }
  if (jobs.empty()) return rc;
  ctx.x = "bytes";
  ctx.y = y_axes(*jobs.front()->t);
  for (auto& j : jobs) {
    ctx.workloads.push_back({{"name", j->spec->name},
                             {"test", j->t->name},
                             {"from", cl.host_names[size_t(j->client_node)]},
                             {"to", cl.host_names[size_t(j->server_node)]},
                             {"start_us", j->spec->start_us},
                             {"x", "bytes"},
                             {"y", y_axes(*j->t)}});
    if (!j->error.empty()) {
      ctx.workloads.back()["failed"] = true;
      ctx.workloads.back()["error"] = j->error;
    }
    std::string table = j->t->latency ? lat_table(j->rows) : bw_table(j->rows);
    // A latency measured while other workloads ran on its hosts includes their queueing: said
    // under its table and in results.json ("competing": their names).
    if (j->t->latency) {
      auto span = [](const Job& x) {
        uint64_t a = UINT64_MAX, b = 0;
        for (const auto& pt : x.points)
          if (pt.done) {
            a = std::min(a, pt.start_ps);
            b = std::max(b, pt.end_ps);
          }
        return std::pair<uint64_t, uint64_t>{a, b};
      };
      const auto [a0, a1] = span(*j);
      std::vector<std::string> others;
      for (const auto& o : jobs) {
        if (o.get() == j.get()) continue;
        const bool shares = o->client_node == j->client_node || o->client_node == j->server_node ||
                            o->server_node == j->client_node || o->server_node == j->server_node;
        const auto [b0, b1] = span(*o);
        if (shares && b0 < a1 && a0 < b1) others.push_back(o->spec->name);
      }
      if (!others.empty()) {
        nlohmann::ordered_json names = nlohmann::ordered_json::array();
        std::string list;
        for (const auto& n : others) {
          names.push_back(n);
          list += (list.empty() ? "" : ", ") + n;
        }
        ctx.workloads.back()["competing"] = names;
        if (!table.empty() && table.back() != '\n') table += '\n';
        table += fmt::format(
            " measured under competing traffic: {} ran on its hosts at the same time (their "
            "frames and DMA queue with its own)",
            list);
      }
    }
    if (j->t->latency && ctx.requests && ctx.scenario.outputs.breakdown && ranks::rank() == 0 &&
        j->client_qp0 != UINT32_MAX && j->server_qp0 != UINT32_MAX) {
      BreakdownJob b;
      b.workload = j->spec->name;
      b.test = j->t->name;
      b.client = cl.host_names[size_t(j->client_node)];
      b.server = cl.host_names[size_t(j->server_node)];
      b.client_node = j->client_node;
      b.server_node = j->server_node;
      b.client_qp = j->client_qp0;
      b.server_qp = j->server_qp0;
      b.ping_pong = j->t->op != Op::kRead;
      for (size_t si = 0; si < j->rows.size(); ++si) {
        const auto& r = j->rows[si];
        b.points.push_back(
            {r["bytes"].get<uint64_t>(), r["t_avg_us"].get<double>(), j->points[si].bounds});
      }
      if (ctx.breakdown.is_null()) ctx.breakdown = {{"workloads", nlohmann::ordered_json::array()}};
      ctx.breakdown["workloads"].push_back(lat_breakdown(*ctx.requests, b, &table));
    }
    if (jobs.size() == 1) {
      ctx.summary = table;
    } else {
      ctx.summary +=
          fmt::format("{}workload {}: {} from {} to {}\n{}", ctx.summary.empty() ? "" : "\n",
                      j->spec->name, j->t->name, cl.host_names[size_t(j->client_node)],
                      cl.host_names[size_t(j->server_node)], table);
    }
  }
  return rc;
}

}  // namespace

double perf_pair(Cluster& cl, int client, int server, const std::string& test, uint64_t size,
                 uint64_t iters) {
  const Test& t = test_of(test);
  // The client's card's limits (over several processes from the rank that builds it; the server
  // may be on another).
  const Node* cn = cl.nodes[size_t(client)].get();
  SystemConfig c = cn ? cn->cfg : cl.cfg;
  c.core.max_qp_wr = int64_t(ranks::max_all(cn ? uint64_t(cn->cfg.core.max_qp_wr) : 0));
  c.core.max_cqe = int64_t(ranks::max_all(cn ? uint64_t(cn->cfg.core.max_cqe) : 0));
  Params p;
  p.iters = iters;
  p.qps = 1;
  p.tx_depth = t.latency ? 1 : 128;
  if (t.op == Op::kRead || t.op == Op::kAtomic)
    p.tx_depth = std::min<uint64_t>(p.tx_depth, uint64_t(c.core.max_qp_wr));
  p.atomic = t.op == Op::kAtomic;
  p.cq_mod = t.latency ? 1 : std::min<uint64_t>(100, p.tx_depth);
  p.max_size = std::max<uint64_t>(size, 64);
  const EndpointConfig ec = endpoint_config(p, c);
  Endpoint a, b;
  Oob oob;
  Limit lim;
  uint64_t a_rx = 0, b_rx = 0;
  std::vector<double> samples;
  BwResult bw;
  cl.run({{client,
           [&] {
             a.open(ec);
             oob.put(1, a.info());
             const PeerInfo peer = oob.get(0);
             a.connect(peer);
             client_ready(a, p, t, &a_rx, oob);
             client_run(a, peer, p, t, size, lim, &a_rx, &samples, &bw);
           }},
          {server, [&] {
             b.open(ec);
             oob.put(0, b.info());
             const PeerInfo peer = oob.get(1);
             b.connect(peer);
             std::vector<uint64_t> b_rq;
             server_size(b, peer, p, t, size, lim, &b_rx, &b_rq, oob);
           }}});
  const bool here = cn != nullptr;  // (the client's measurements are its rank's)
  return ranks::from_the_one(!here       ? 0
                             : t.latency ? summarize(samples).t_typical
                                         : bw.avg_mib_s,
                             here);
}

void register_perftests() {
  for (const Test& t : tests()) {
    ExperimentKind k;
    k.kind = t.name;
    k.has_links = true;
    k.desc = fmt::format("perftest's ib_{}: verbs between two hosts, {}", t.name,
                         t.latency ? "latency per message size" : "bandwidth per message size");
    k.keys = {
        {"size",
         ExpKey::kInt,
         t.op == Op::kAtomic ? "8" : "65536",
         1,
         double(1u << 30),
         {},
         "B",
         "message size (-s)"},
        {"sizes",
         ExpKey::kIntList,
         t.op == Op::kAtomic ? "[8]" : "[65536]",
         1,
         double(1u << 30),
         {},
         "B",
         "message sizes, one sweep point each (instead of size)"},
        {"all", ExpKey::kInt, "0", 0, 1, {}, "", "1: sweep 2 B to 8 MiB (-a)"},
        {"iters",
         ExpKey::kInt,
         t.latency ? "1000" : "5000",
         1,
         1e9,
         {},
         "",
         "iterations (-n); with duration_us, the most"},
        {"duration_us",
         ExpKey::kInt,
         "0",
         0,
         1e9,
         {},
         "us",
         "run each size this long (then one last WR per QP), at most iters; 0: iters"},
    };
    if (!t.latency) {
      k.keys.push_back({"qps", ExpKey::kInt, "1", 1, 256, {}, "QPs", "QPs (-q)"});
      k.keys.push_back(
          {"tx_depth", ExpKey::kInt, "128", 1, 511, {}, "WRs", "WRs in flight per QP (-t)"});
      k.keys.push_back(
          {"cq_mod", ExpKey::kInt, "100", 1, 1024, {}, "WRs", "signal every Nth WR (-Q)"});
    }
    add_workload_kind(std::move(k));
  }
  set_workload_runner(run_workloads);
  set_workload_checker(check_workload_memory);
}

}  // namespace rnic::traffic
