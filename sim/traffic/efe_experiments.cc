#include "sim/traffic/efe_experiments.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include "models/host/verbs/verbs.h"
#include "sim/cluster.h"
#include "sim/experiment.h"
#include "sim/ranks.h"
#include "sim/traffic/endpoint.h"
#include "sim/traffic/perftest.h"

namespace rnic::traffic {

namespace {

uint64_t counter_sum(StatRegistry& s, const std::vector<std::string>& groups, const char* name) {
  uint64_t v = 0;
  for (const std::string& g : groups) v += s.group(g).counter(name, "", "").value;
  return v;
}

// Every loss point of loss_goodput between hosts a (the writer) and b over link `link`: rows
// (with "transport" when it is given) and their table lines. The link keeps the last loss.
void loss_points(ExperimentContext& ctx, Cluster& cl, int a_host, int b_host, size_t link,
                 const std::vector<int64_t>& loss_ppm, uint64_t size, uint64_t iters,
                 uint64_t depth, const std::string& transport, std::string* table,
                 const std::string& resend = "") {
  // Over several processes each rank counts its own hosts' retransmissions, and the writer's
  // rank times the Writes.
  std::vector<std::string> groups;
  for (int h : {a_host, b_host})
    if (cl.nodes[size_t(h)]) groups.push_back(cl.nodes[size_t(h)]->card.transport_group());
  EndpointConfig ec;
  ec.buf_bytes = size_t(size);
  ec.send_depth = uint32_t(depth);
  Endpoint a, b;
  Oob oob;
  PeerInfo peer;  // b's buffer, as a learned it
  bool connected = false;
  for (int64_t ppm : loss_ppm) {
    const double loss = double(ppm) / 1e6;
    if (cl.links[link]) cl.link(link).set_loss(loss);
    const uint64_t retx0 = counter_sum(ctx.stats, groups, "retransmissions");
    double t0 = 0, t1 = 0;
    uint64_t errors = 0;
    cl.run({{a_host,
             [&] {
               if (!connected) {
                 a.open(ec);
                 oob.put(1, a.info());
                 peer = oob.get(0);
                 a.connect(peer);
                 oob.get(0);
               }
               ibv_sge sge{a.addr(), uint32_t(size), a.mr->lkey};
               uint64_t posted = 0, done = 0;
               t0 = rnic_now_ns();
               while (done < iters) {
                 while (posted < iters && posted - done < depth) {
                   if (post_rdma(a.qps[0], IBV_WR_RDMA_WRITE, posted, sge.addr, sge.length,
                                 sge.lkey, peer.addr, peer.rkey))
                     throw std::runtime_error("ibv_post_send");
                   ++posted;
                 }
                 ibv_wc wc[16];
                 const int n = ibv_poll_cq(a.cq, 16, wc);
                 for (int i = 0; i < n; ++i) errors += wc[i].status != IBV_WC_SUCCESS;
                 done += uint64_t(std::max(n, 0));
                 if (n == 0 && !rnic_wait_cq(a.cq, 100'000'000))
                   throw std::runtime_error("no completion for 100 ms");
               }
               t1 = rnic_now_ns();
             }},
            {b_host, [&] {
               if (connected) return;
               b.open(ec);
               const PeerInfo p = oob.get(1);
               oob.put(0, b.info());
               b.connect(p);
               oob.put(0, {});
             }}});
    connected = true;
    const uint64_t retx = ranks::sum_all(counter_sum(ctx.stats, groups, "retransmissions") - retx0);
    errors = ranks::sum_all(errors);
    const bool writer = cl.nodes[size_t(a_host)] != nullptr;
    t0 = ranks::from_the_one(t0, writer);
    t1 = ranks::from_the_one(t1, writer);
    const double gbps = double(size * iters) * 8 / (t1 - t0);
    nlohmann::ordered_json row;
    if (!transport.empty()) row["transport"] = transport;
    if (!resend.empty()) row["resend"] = resend;
    row["loss"] = loss;
    row["goodput_gbps"] = gbps;
    row["retransmissions"] = retx;
    row["completion_errors"] = errors;
    ctx.rows.push_back(row);
    *table += fmt::format("{:>10} {:>10} {:>14.3f} {:>16} {:>18}\n", resend.empty() ? "-" : resend,
                          loss, gbps, retx, errors);
  }
}

// loss_goodput: node0 writes to node1 over one 10 GbE link whose frame loss steps through
// loss_ppm; per point, the goodput of `iters` RDMA Writes of `size` (first post to last
// completion), the transport's retransmissions (the EFE's or TCP's) and the completions that
// were not successes. On EFE cards every point runs once per resend mode (selective, then
// go-back-N by default), on one connection.
int run_loss_goodput(ExperimentContext& ctx) {
  Cluster cl(two_hosts(ctx.cfg), ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  ctx.x = "loss";
  ctx.y = {"goodput_gbps", "retransmissions", "completion_errors"};
  std::string table = fmt::format("{:>10} {:>10} {:>14} {:>16} {:>18}\n", "resend", "loss",
                                  "goodput_gbps", "retransmissions", "completion_errors");
  std::vector<std::string> modes = {""};
  if (ranks::max_all(cl.nodes[0] ? cl.nodes[0]->card.efe != nullptr
                                 : cl.nodes[1]->card.efe != nullptr))
    modes = ctx.get_strings("resend");
  for (const std::string& mode : modes) {
    for (const auto& n : cl.nodes)
      if (n && n->card.efe && !mode.empty()) n->card.efe->set_resend(mode == "selective");
    loss_points(ctx, cl, 0, 1, 0, ctx.get_ints("loss_ppm"), uint64_t(ctx.get_int("size")),
                uint64_t(ctx.get_int("iters")), uint64_t(ctx.get_int("tx_depth")), "", &table,
                mode);
  }
  ctx.summary = table;
  return 0;
}

// incast: `senders` hosts write to one receiver through one switch (one port each, all links
// at the preset's rate), for each number of senders and each mode. A point lasts warmup_us +
// measure_us from a common start; a quarter of the senders (the last ones) join at join_us and
// leave at leave_us, the others run throughout. Each sender keeps `depth` Writes of `size` in
// flight on its own QP while it is active and counts the bytes of the Writes that complete in
// each window_us window; Jain's fairness index is taken over the senders active for the whole of
// each measured window. Rows: senders, mode, receiver_goodput_gbps (bytes completed in the
// measured time), jain_mean, jain_min, drops (the switch's tail drops), retransmissions (every
// card's transport). The modes are the transport's: efe_cc, efe_dcqcn, efe_dcqcn_pause,
// efe_hpcc, efe_hpcc_pause, efe_no_cc and pause on EFE cards; tcp (RFC 3168's reaction to ECN),
// dctcp, tcp_pause and dctcp_pause on MPA/TCP cards.
struct IncastParams {
  std::vector<int64_t> counts;
  uint64_t size, depth, warmup, measure, join, leave, window;  // B, WRs, ps
};

IncastParams incast_params(ExperimentContext& ctx) {
  const uint64_t us = 1000000;  // ps
  IncastParams p;
  p.counts = ctx.get_ints("senders");
  p.size = uint64_t(ctx.get_int("size"));
  p.depth = uint64_t(ctx.get_int("depth"));
  p.warmup = uint64_t(ctx.get_int("warmup_us")) * us;
  p.measure = uint64_t(ctx.get_int("measure_us")) * us;
  p.join = uint64_t(ctx.get_int("join_us")) * us;
  p.leave = uint64_t(ctx.get_int("leave_us")) * us;
  p.window = uint64_t(ctx.get_int("window_us")) * us;
  if (p.join >= p.leave || p.leave > p.warmup + p.measure || p.window == 0 || p.measure % p.window)
    throw std::runtime_error(
        "incast: join_us < leave_us <= warmup_us + measure_us, and window_us divides measure_us");
  return p;
}

// The modes a transport's cards run (incast's `modes`): refused before the run otherwise.
void check_incast_modes(const std::vector<std::string>& modes, const std::string& transport) {
  for (const std::string& mode : modes) {
    const bool tcp_mode =
        mode == "tcp" || mode == "dctcp" || mode == "tcp_pause" || mode == "dctcp_pause";
    if (tcp_mode != (transport == "mpa_tcp"))
      throw std::runtime_error(
          fmt::format("incast: mode {} is for {} cards, and card.transport is {}", mode,
                      tcp_mode ? "mpa_tcp" : "efe", transport));
  }
}

// Where an incast runs: hosts[0] the receiver, hosts[1..] the senders, all on switch `sw`, whose
// port to the receiver is port_group.
struct IncastSite {
  std::vector<int> hosts;
  std::vector<MacAddr> macs;  // each host's (its node may be another rank's)
  size_t sw = 0;
  std::string port_group;
};

// Every point (number of senders x mode) of an incast at a site: rows (with "transport" when it
// is given) and their table lines.
void incast_points(ExperimentContext& ctx, Cluster& cl, const IncastSite& site,
                   const IncastParams& ip, const std::vector<std::string>& modes,
                   const std::string& transport, std::string* table) {
  const uint64_t size = ip.size, depth = ip.depth, warmup = ip.warmup, measure = ip.measure,
                 join = ip.join, leave = ip.leave, window = ip.window;
  const uint64_t us = 1000000;  // ps
  // Over several processes another rank's hosts and switch are not built here: what each rank
  // measures of its own is summed over the ranks after each point.
  auto node = [&](int i) -> Node& { return *cl.nodes[size_t(site.hosts[size_t(i)])]; };
  eth::EthSwitch* sw = cl.switches[site.sw].get();
  EndpointConfig ec;
  ec.buf_bytes = size_t(size);
  ec.send_depth = uint32_t(depth);
  Oob oob;
  int point = 0;
  std::vector<std::string> efes;
  for (int h : site.hosts)
    if (cl.nodes[size_t(h)]) efes.push_back(cl.nodes[size_t(h)]->card.transport_group());
  std::vector<std::string> ports;
  if (sw) ports.push_back(site.port_group);
  // efe_hpcc needs utilisation stamps: the scenario's window, or 10 us where it sets none.
  const int64_t int_window = int64_t(ranks::max_all(sw ? uint64_t(sw->int_window_ns()) : 0));
  for (int64_t n : ip.counts)
    for (const std::string& mode : modes) {
      for (int h : site.hosts) {
        if (!cl.nodes[size_t(h)]) continue;
        Card& card = cl.nodes[size_t(h)]->card;
        if (card.efe)
          card.efe->set_cc(mode == "efe_cc"                                   ? "efe"
                           : mode == "efe_dcqcn" || mode == "efe_dcqcn_pause" ? "dcqcn"
                           : mode == "efe_hpcc" || mode == "efe_hpcc_pause"   ? "hpcc"
                                                                              : "off");
        if (card.toe) card.toe->set_dctcp(mode == "dctcp" || mode == "dctcp_pause");
      }
      const bool pause = mode == "pause" || mode == "efe_dcqcn_pause" || mode == "efe_hpcc_pause" ||
                         mode == "tcp_pause" || mode == "dctcp_pause";
      const bool hpcc = mode == "efe_hpcc" || mode == "efe_hpcc_pause";
      if (sw) {
        sw->set_pause(pause);
        sw->set_int_window(hpcc && int_window == 0 ? 10000 : int_window);
      }
      // Each point its own QP pairs (a QP a channel failure errored is not reused).
      std::vector<Endpoint> tx(size_t(n) + 1), rx(size_t(n) + 1);  // [i]: sender i's pair
      std::vector<PeerInfo> peer(size_t(n) + 1);
      std::vector<uint64_t> errors(size_t(n) + 1);
      const int key = 100000 * ++point;
      const uint64_t drops0 = counter_sum(ctx.stats, ports, "tail_drops");
      const uint64_t retx0 = counter_sum(ctx.stats, efes, "retransmissions");
      const size_t windows = size_t(measure / window);
      // bytes[i][w]: the bytes the receiver's transport delivered in order from sender i in
      // measured window w (completions, 64 KiB apart, are too coarse: at 32 senders one completes
      // less than one message per window).
      std::vector<uint64_t> bytes((size_t(n) + 1) * windows);  // [i * windows + w]
      // completed: the Writes completed in the measured time (the receiver's goodput).
      uint64_t completed = 0;
      const int late_from = int(n) - int(n) / 4 + 1;  // senders late_from..n join late
      uint64_t start = 0;
      std::vector<Cluster::Program> progs;
      progs.push_back(
          {site.hosts[0], [&] {
             for (int i = 1; i <= n; ++i) {
               rx[size_t(i)].open(ec);
               const PeerInfo p = oob.get(key + 2000 + i);
               oob.put(key + i, rx[size_t(i)].info());
               rx[size_t(i)].connect(p);
             }
             // Everyone starts together, a little after now (the senders learn when from the
             // message that lets them go).
             start = uint64_t(rnic_now_ns()) * 1000 + 10 * us;
             PeerInfo go;
             go.addr = start;
             for (int i = 1; i <= n; ++i) oob.put(key + 1000 + i, go);
             // Sample what each sender's channel delivered at every window's edge.
             std::vector<std::string> from_peer(size_t(n) + 1);
             for (int i = 1; i <= n; ++i)
               from_peer[size_t(i)] = node(0).card.peer_group(site.macs[size_t(i)]);
             std::vector<uint64_t> last(size_t(n) + 1);
             for (size_t w = 0; w <= windows; ++w) {
               const uint64_t edge = start + warmup + w * window;
               rnic_spend_ns((edge - uint64_t(rnic_now_ns()) * 1000) / 1000);
               for (int i = 1; i <= n; ++i) {
                 const uint64_t v =
                     ctx.stats.group(from_peer[size_t(i)]).counter("rx_bytes", "", "").value;
                 if (w > 0) bytes[size_t(i) * windows + w - 1] = v - last[size_t(i)];
                 last[size_t(i)] = v;
               }
             }
           }});
      for (int i = 1; i <= n; ++i)
        progs.push_back({site.hosts[size_t(i)], [&, i] {
                           Endpoint& e = tx[size_t(i)];
                           e.open(ec);
                           oob.put(key + 2000 + i, e.info());
                           peer[size_t(i)] = oob.get(key + i);
                           e.connect(peer[size_t(i)]);
                           const uint64_t start = oob.get(key + 1000 + i).addr;
                           const bool late = i >= late_from;
                           const uint64_t from = start + (late ? join : 0);
                           const uint64_t until = start + (late ? leave : warmup + measure);
                           rnic_spend_ns((from - uint64_t(rnic_now_ns()) * 1000) / 1000);
                           ibv_sge sge{e.addr(), uint32_t(size), e.mr->lkey};
                           uint64_t posted = 0, done = 0;
                           while (true) {
                             const uint64_t now = uint64_t(rnic_now_ns()) * 1000;
                             while (now < until && !errors[size_t(i)] && posted - done < depth) {
                               ibv_send_wr wr{};
                               wr.wr_id = posted++;
                               wr.sg_list = &sge;
                               wr.num_sge = 1;
                               wr.opcode = IBV_WR_RDMA_WRITE;
                               wr.send_flags = IBV_SEND_SIGNALED;
                               wr.wr.rdma.remote_addr = peer[size_t(i)].addr;
                               wr.wr.rdma.rkey = peer[size_t(i)].rkey;
                               ibv_send_wr* bad = nullptr;
                               if (ibv_post_send(e.qps[0], &wr, &bad))
                                 throw std::runtime_error("ibv_post_send");
                             }
                             if (done == posted && (now >= until || errors[size_t(i)])) break;
                             ibv_wc wc[16];
                             const int k = ibv_poll_cq(e.cq, 16, wc);
                             const uint64_t t_ps = uint64_t(rnic_now_ns()) * 1000;
                             for (int j = 0; j < k; ++j) {
                               if (wc[j].status != IBV_WC_SUCCESS) {
                                 ++errors[size_t(i)];  // this sender stops
                                 continue;
                               }
                               if (t_ps >= start + warmup && t_ps < start + warmup + measure)
                                 completed += size;
                             }
                             done += uint64_t(std::max(k, 0));
                             if (k == 0) rnic_wait_cq(e.cq, 100 * us / 1000);
                           }
                         }});
      cl.run(progs);
      ranks::sum_all(bytes);
      ranks::sum_all(errors);
      completed = ranks::sum_all(completed);
      uint64_t errs = 0;
      for (uint64_t e : errors) errs += e;
      double jsum = 0, jmin = 1;
      for (size_t w = 0; w < windows; ++w) {
        const uint64_t w0 = warmup + w * window, w1 = w0 + window;
        double s = 0, s2 = 0;
        int active = 0;
        for (int i = 1; i <= n; ++i) {
          const bool late = i >= late_from;
          if (late && (w0 < join || w1 > leave)) continue;  // not active for the whole window
          const double b = double(bytes[size_t(i) * windows + w]);
          s += b;
          s2 += b * b;
          ++active;
        }
        const double j = s2 > 0 ? s * s / (active * s2) : 0;
        jsum += j;
        jmin = std::min(jmin, j);
      }
      const double gbps = double(completed) * 8 / (double(measure) / 1000);
      const uint64_t drops = ranks::sum_all(counter_sum(ctx.stats, ports, "tail_drops") - drops0);
      const uint64_t retx = ranks::sum_all(counter_sum(ctx.stats, efes, "retransmissions") - retx0);
      const double jmean = jsum / double(windows);
      nlohmann::ordered_json row;
      if (!transport.empty()) row["transport"] = transport;
      ctx.rows.push_back(row);
      ctx.rows.back().update(nlohmann::ordered_json{{"senders", n},
                                                    {"mode", mode},
                                                    {"receiver_goodput_gbps", gbps},
                                                    {"jain_mean", jmean},
                                                    {"jain_min", jmin},
                                                    {"drops", drops},
                                                    {"retransmissions", retx},
                                                    {"completion_errors", errs}});
      *table += fmt::format("{:>8} {:>10} {:>22.3f} {:>10.3f} {:>9.3f} {:>8} {:>16} {:>18}\n", n,
                            mode, gbps, jmean, jmin, drops, retx, errs);
    }
}

int run_incast(ExperimentContext& ctx) {
  const IncastParams ip = incast_params(ctx);
  const std::vector<std::string> modes = ctx.get_strings("modes");
  check_incast_modes(modes, ctx.cfg.transport);
  const int most = int(*std::max_element(ip.counts.begin(), ip.counts.end()));
  const Topology t = leaf_spine(ctx.cfg, most + 1, most + 1, 1);  // one switch, leaf0
  Cluster cl(t, ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  IncastSite site;
  for (int i = 0; i <= most; ++i) {
    site.hosts.push_back(i);
    site.macs.push_back(t.hosts[size_t(i)].mac);
  }
  site.port_group = "leaf0.p0";
  ctx.x = "senders";
  ctx.y = {"receiver_goodput_gbps", "jain_mean",        "jain_min", "drops",
           "retransmissions",       "completion_errors"};
  std::string table = fmt::format("{:>8} {:>10} {:>22} {:>10} {:>9} {:>8} {:>16} {:>18}\n",
                                  "senders", "mode", "receiver_goodput_gbps", "jain_mean",
                                  "jain_min", "drops", "retransmissions", "completion_errors");
  incast_points(ctx, cl, site, ip, modes, "", &table);
  ctx.summary = table;
  return 0;
}

// efe_vs_tcp: the same card with each transport, side by side in one run. Each transport has
// an island of its own (nothing shared): a pair, <t>_a writing to <t>_b over link <t>_l (with
// `hops` switches <t>_h1.. between them: <t>_l to the first, then one link each on to <t>_b;
// the loss points are <t>_l's), and an
// incast switch <t>_sw with the receiver <t>_r and senders <t>_s1..; <t> is efe or tcp. On the
// pair, in turn: write_lat and read_lat of 2 B and write_bw of `size` (as `rnicsim perf` runs
// them), the goodput at each of loss_ppm; on the switch, incast at each number of senders in
// the transport's modes. Rows: transport, measure, value and unit, and the measure's own fields.
int run_efe_vs_tcp(ExperimentContext& ctx) {
  const std::vector<std::string> transports = ctx.get_strings("transports");
  const IncastParams ip = incast_params(ctx);
  const std::vector<std::string> efe_modes = ctx.get_strings("efe_modes");
  const std::vector<std::string> tcp_modes = ctx.get_strings("tcp_modes");
  check_incast_modes(efe_modes, "efe");
  check_incast_modes(tcp_modes, "mpa_tcp");
  const uint64_t size = uint64_t(ctx.get_int("size"));
  const int hops = int(ctx.get_int("hops"));
  const int most = int(*std::max_element(ip.counts.begin(), ip.counts.end()));
  struct Island {
    std::string transport, tag;
    int a = 0, b = 0;
    size_t link = 0;
    IncastSite site;
  };
  std::vector<Island> islands;
  Topology topo;
  for (const std::string& tr : transports) {
    Island is;
    is.transport = tr;
    is.tag = tr == "efe" ? "efe" : "tcp";
    SystemConfig c = ctx.cfg;
    c.transport = tr;
    auto host = [&](const std::string& name) {
      const int i = int(topo.hosts.size());
      topo.hosts.push_back({is.tag + "_" + name, default_mac(i), c});
      return i;
    };
    is.a = host("a");
    is.b = host("b");
    is.link = topo.links.size();
    if (hops == 0) {
      topo.links.push_back({is.tag + "_l", is.a, is.b, c.eth_link()});
    } else {
      const int first = int(topo.switches.size());
      for (int k = 1; k <= hops; ++k)
        topo.switches.push_back({fmt::format("{}_h{}", is.tag, k), c.sw});
      LinkSpec in{is.tag + "_l", is.a, 0, c.eth_link()};
      in.sw_b = first;
      topo.links.push_back(in);
      for (int k = 1; k < hops; ++k) {
        LinkSpec l{fmt::format("{}_l{}", is.tag, k), 0, 0, c.eth_link()};
        l.sw_a = first + k - 1;
        l.sw_b = first + k;
        topo.links.push_back(l);
      }
      LinkSpec out{fmt::format("{}_l{}", is.tag, hops), 0, is.b, c.eth_link()};
      out.sw_a = first + hops - 1;
      topo.links.push_back(out);
    }
    is.site.sw = topo.switches.size();
    topo.switches.push_back({is.tag + "_sw", c.sw});
    for (int k = 0; k <= most; ++k) {
      const int h = host(k == 0 ? "r" : fmt::format("s{}", k));
      is.site.hosts.push_back(h);
      is.site.macs.push_back(topo.hosts[size_t(h)].mac);
      LinkSpec l{fmt::format("{}_sw_p{}", is.tag, k), h, 0, c.eth_link()};
      l.sw_b = int(is.site.sw);
      topo.links.push_back(l);
    }
    is.site.port_group = is.tag + "_sw.p0";
    islands.push_back(is);
  }
  Cluster cl(topo, ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  ctx.x = "measure";
  ctx.y = {"value"};
  std::string table;
  auto row = [&](const std::string& tr, const std::string& measure, double v, const char* unit) {
    ctx.rows.push_back({{"transport", tr}, {"measure", measure}, {"value", v}, {"unit", unit}});
    table += fmt::format("{:>8} {:>30} {:>12.3f} {}\n", tr, measure, v, unit);
  };
  // Bytes on each pair's wire, both ways (frame, FCS, preamble and gap), while `counting`.
  bool counting = false;
  uint64_t wire_bytes = 0;
  for (const Island& is : islands)
    if (cl.links[is.link])  // (over several processes: each rank its ends' frames, summed)
      cl.link(is.link).add_wire_tap(
          [&](uint64_t, const eth::EthLink::Frame& f, const uint8_t*, int) {
            if (counting) wire_bytes += std::max<size_t>(f.size(), 60) + 4 + 20;
          });
  for (const Island& is : islands) {
    row(is.transport, "write_lat_2B", perf_pair(cl, is.a, is.b, "write_lat", 2, 1000), "us");
    row(is.transport, "read_lat_2B", perf_pair(cl, is.a, is.b, "read_lat", 2, 1000), "us");
    counting = true;
    wire_bytes = 0;
    row(is.transport, fmt::format("write_bw_{}B", size),
        perf_pair(cl, is.a, is.b, "write_bw", size, 1000) * 1048576 * 8 / 1e9, "Gb/s");
    counting = false;
    wire_bytes = ranks::sum_all(wire_bytes);
    // What the wire carried besides the Writes' payload, both ways (ACKs included), per byte
    // of payload.
    row(is.transport, "header_bytes_per_payload_byte",
        double(wire_bytes - size * 1000) / double(size * 1000), "B/B");
  }
  table += "\n";
  for (const Island& is : islands) {
    std::string t;
    const size_t before = ctx.rows.size();
    loss_points(ctx, cl, is.a, is.b, is.link, ctx.get_ints("loss_ppm"), size,
                uint64_t(ctx.get_int("iters")), 128, is.transport, &t);
    for (size_t r = before; r < ctx.rows.size(); ++r) {
      nlohmann::ordered_json& x = ctx.rows[r];
      x["measure"] = fmt::format("goodput_loss_{}", x["loss"].get<double>());
      x["value"] = x["goodput_gbps"];
      x["unit"] = "Gb/s";
      table += fmt::format("{:>8} {:>30} {:>12.3f} Gb/s ({} resent)\n", is.transport,
                           x["measure"].get<std::string>(), x["value"].get<double>(),
                           x["retransmissions"].get<uint64_t>());
    }
    if (cl.links[is.link]) cl.link(is.link).set_loss(0);
  }
  table += "\n";
  for (const Island& is : islands) {
    std::string t;
    const size_t before = ctx.rows.size();
    incast_points(ctx, cl, is.site, ip, is.transport == "efe" ? efe_modes : tcp_modes, is.transport,
                  &t);
    for (size_t r = before; r < ctx.rows.size(); ++r) {
      nlohmann::ordered_json& x = ctx.rows[r];
      x["measure"] =
          fmt::format("incast_{}_{}", x["senders"].get<int64_t>(), x["mode"].get<std::string>());
      x["value"] = x["receiver_goodput_gbps"];
      x["unit"] = "Gb/s";
      table += fmt::format("{:>8} {:>30} {:>12.3f} Gb/s, Jain {:.3f}, {} drops, {} resent\n",
                           is.transport, x["measure"].get<std::string>(), x["value"].get<double>(),
                           x["jain_mean"].get<double>(), x["drops"].get<uint64_t>(),
                           x["retransmissions"].get<uint64_t>());
    }
  }
  ctx.summary = table;
  return 0;
}

// scale: `hosts` hosts on a two-level leaf/spine (hosts_per_leaf per leaf switch, every leaf
// joined to every spine; one leaf needs no spine); each host writes `size` messages to `peers`
// others (spread over the leaves) for duration_us from a common start, keeping `depth` in
// flight per QP, and with load_mbps > 0 posting no faster than that rate (a fixed load per host,
// so that growth is not hidden by saturated uplinks). The row: hosts, sim_ms, wall_s (the
// simulation, set-up included), setup_s (connecting every QP), peak_rss_mib (the process's peak
// resident memory), the goodput all hosts completed, the least any one flow delivered in order
// (min_flow_gbps), the hosts' frames (their MACs' tx_frames) and the wall time per frame after
// set-up.
int run_scale(ExperimentContext& ctx) {
  const auto wall0 = std::chrono::steady_clock::now();
  const int n = int(ctx.get_int("hosts"));
  const int per_leaf = int(ctx.get_int("hosts_per_leaf"));
  const int spines = int(ctx.get_int("spines"));
  const int peers = std::min(int(ctx.get_int("peers")), n - 1);
  const uint64_t size = uint64_t(ctx.get_int("size"));
  const uint64_t depth = uint64_t(ctx.get_int("depth"));
  const uint64_t duration = uint64_t(ctx.get_int("duration_us")) * 1000000;
  const uint64_t load_mbps = uint64_t(ctx.get_int("load_mbps"));
  const uint64_t poll_ns = uint64_t(ctx.get_int("poll_ns"));
  const bool poll_skip = ctx.get_int("poll_skip") != 0;
  // Between two posts of one host at load_mbps (0: no pacing).
  const uint64_t gap_ps = load_mbps ? size * 8 * 1000000 / load_mbps : 0;
  const int leaves = (n + per_leaf - 1) / per_leaf;
  const Topology t = leaf_spine(ctx.cfg, n, per_leaf, spines);
  Cluster cl(t, ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  // Host i's k-th peer (k = 0..peers-1) is (i + (k + 1) * step) mod n: never itself, and across
  // leaves where there are several.
  const int step = std::max(1, n / (peers + 1));
  auto target = [&](int i, int k) { return (i + (k + 1) * step) % n; };
  EndpointConfig ec;
  ec.buf_bytes = size_t(size);
  ec.send_depth = uint32_t(depth);
  // Host i's QP to target(i, k): out[i][k]; the target's side of it: in[i][k].
  const size_t hn = size_t(n), pn = size_t(peers);
  std::vector<std::vector<Endpoint>> out(hn, std::vector<Endpoint>(pn));
  std::vector<std::vector<Endpoint>> in(hn, std::vector<Endpoint>(pn));
  std::vector<std::vector<PeerInfo>> dest(hn, std::vector<PeerInfo>(pn));
  std::vector<uint64_t> done_bytes(hn);
  // flow_bytes[j * peers + k]: what host j's flow to target(j, k) delivered in order at its
  // receiver in the traffic time (the receiver's EFE measures it; it counts partial messages).
  std::vector<uint64_t> flow_bytes(hn * pn);
  Oob oob;
  // An exchange's key: its kind, and the hosts and peer index it is between.
  auto key = [](int64_t kind, int64_t a, int64_t b, int64_t k) {
    return ((kind * 65536 + a) * 65536 + b) * 64 + k;
  };
  uint64_t start = 0;
  auto setup_wall = std::chrono::steady_clock::now();
  std::vector<Cluster::Program> progs;
  for (int i = 0; i < n; ++i)
    progs.push_back(
        {i, [&, i] {
           // Connect: this host's QPs out, then the QPs of the hosts writing to it.
           for (int k = 0; k < peers; ++k) {
             out[size_t(i)][size_t(k)].open(ec);
             oob.put(key(1, target(i, k), i, k), out[size_t(i)][size_t(k)].info());
           }
           for (int j = 0; j < n; ++j)
             for (int k = 0; k < peers; ++k)
               if (target(j, k) == i) {
                 Endpoint& e = in[size_t(j)][size_t(k)];
                 e.open(ec);
                 const PeerInfo p = oob.get(key(1, i, j, k));
                 oob.put(key(2, 0, j, k), e.info());
                 e.connect(p);
               }
           for (int k = 0; k < peers; ++k) {
             dest[size_t(i)][size_t(k)] = oob.get(key(2, 0, i, k));
             out[size_t(i)][size_t(k)].connect(dest[size_t(i)][size_t(k)]);
           }
           // A common start: host 0 picks it once every host has connected.
           oob.put(key(3, 0, 0, 0), {});
           if (i == 0) {
             for (int j = 0; j < n; ++j) oob.get(key(3, 0, 0, 0));
             setup_wall = std::chrono::steady_clock::now();
             // The start, for hosts that another process simulates: far enough ahead that the
             // last of the n messages telling it arrives before it (the management network's
             // latency, and host 0's time to send each: a few hundred ns).
             PeerInfo go;
             go.addr = uint64_t(rnic_now_ns()) * 1000 +
                       (2 * uint64_t(ctx.cfg.host.mgmt_latency_ns) + 1000 * uint64_t(n + 1)) * 1000;
             for (int j = 0; j < n; ++j) oob.put(key(4, 0, j, 0), go);
           }
           start = oob.get(key(4, 0, i, 0)).addr;
           if (uint64_t(rnic_now_ns()) * 1000 > start)
             throw std::runtime_error(
                 fmt::format("scale: host {} learnt the start ({} ns) at {} ns, after it", i,
                             start / 1000, rnic_now_ns()));
           rnic_spend_ns((start - uint64_t(rnic_now_ns()) * 1000) / 1000);
           // The flows into this host, and what each had delivered at the start.
           std::vector<std::pair<size_t, eth::Mac>> inflows;
           for (int j = 0; j < n; ++j)
             for (int k = 0; k < peers; ++k)
               if (target(j, k) == i)
                 inflows.push_back({size_t(j) * pn + size_t(k), t.hosts[size_t(j)].mac});
           efe::Efe* rx_efe = cl.nodes[size_t(i)]->card.efe.get();
           auto delivered = [&](const eth::Mac& m) {
             return rx_efe ? rx_efe->delivered_bytes(m) : 0;
           };
           for (auto& [f, m] : inflows) flow_bytes[f] = 0 - delivered(m);
           bool measured = false;
           std::vector<uint64_t> posted(pn), completed(pn);
           uint64_t sent = 0;  // posts of this host, for the pacing
           int next_peer = 0;  // the peer the next paced post goes to first
           std::vector<ibv_cq*> cqs;
           for (int k = 0; k < peers; ++k) cqs.push_back(out[size_t(i)][size_t(k)].cq);
           std::vector<ibv_sge> sge(pn);
           for (int k = 0; k < peers; ++k) {
             Endpoint& e = out[size_t(i)][size_t(k)];
             sge[size_t(k)] = {e.addr(), uint32_t(size), e.mr->lkey};
           }
           // Polling: a round of polls (each peer's posts, then its CQ's) every poll_ns. A round
           // that found nothing and could post nothing is followed by rnic_poll_rounds, which
           // returns after the first poll that finds CQEs (the round goes on from that peer's
           // CQEs: `resume`) or at the start of the round in which the traffic time ends or the
           // pacing may let a post through (poll_skip 0: every round is run).
           bool running = false;
           int resume = -1, resume_got = 0;
           ibv_wc resume_wc[16];
           std::vector<ibv_cq*> order(pn);  // the CQs in a round's order (rnic_poll_rounds)
           const uint64_t look_ps = uint64_t(t.hosts[size_t(i)].cfg.cost.cq_poll_ns) * 1000;
           while (true) {
             if (resume < 0) {  // a round's start
               running = uint64_t(rnic_now_ns()) * 1000 < start + duration;
               if (!running && !measured) {
                 measured = true;
                 for (auto& [f, m] : inflows) flow_bytes[f] += delivered(m);
               }
             }
             bool idle = true;  // nothing posted or completed in this round
             for (int kk = std::max(resume, 0); kk < peers; ++kk) {
               // Paced posts go to the peers in turn (from the one after the last post), so a
               // fixed load is spread over all of them; unpaced, each fills its depth in order.
               const int k = gap_ps ? (next_peer + kk) % peers : kk;
               Endpoint& e = out[size_t(i)][size_t(k)];
               while (kk != resume && running && posted[size_t(k)] - completed[size_t(k)] < depth &&
                      (!gap_ps || uint64_t(rnic_now_ns()) * 1000 >= start + sent * gap_ps)) {
                 idle = false;
                 ++sent;
                 ibv_send_wr wr{};
                 wr.wr_id = posted[size_t(k)]++;
                 wr.sg_list = &sge[size_t(k)];
                 wr.num_sge = 1;
                 wr.opcode = IBV_WR_RDMA_WRITE;
                 wr.send_flags = IBV_SEND_SIGNALED;
                 wr.wr.rdma.remote_addr = dest[size_t(i)][size_t(k)].addr;
                 wr.wr.rdma.rkey = dest[size_t(i)][size_t(k)].rkey;
                 ibv_send_wr* bad = nullptr;
                 if (ibv_post_send(e.qps[0], &wr, &bad)) throw std::runtime_error("ibv_post_send");
                 if (gap_ps) {
                   next_peer = (k + 1) % peers;
                   break;
                 }
               }
               ibv_wc polled[16];
               const int got = kk == resume ? resume_got : ibv_poll_cq(e.cq, 16, polled);
               const ibv_wc* wc = kk == resume ? resume_wc : polled;
               idle &= got <= 0;
               for (int j = 0; j < got; ++j) {
                 if (wc[j].status != IBV_WC_SUCCESS)
                   throw std::runtime_error(
                       fmt::format("scale: host {}: {}", i, ibv_wc_status_str(wc[j].status)));
                 if (uint64_t(rnic_now_ns()) * 1000 < start + duration)
                   done_bytes[size_t(i)] += size;  // completed in the traffic time
               }
               completed[size_t(k)] += uint64_t(std::max(got, 0));
             }
             resume = -1;
             bool outstanding = false, room = false;
             for (int k = 0; k < peers; ++k) {
               outstanding |= posted[size_t(k)] != completed[size_t(k)];
               room |= posted[size_t(k)] - completed[size_t(k)] < depth;
             }
             if (!running && !outstanding) break;
             if (poll_ns && poll_skip && idle && look_ps > 0 && !(running && room && !gap_ps)) {
               // Rounds that find nothing until a CQE lands, running ends (the round that starts
               // at or after it), or a paced post's time comes (a round in which a peer's turn
               // can see it: peers - 1 looks after the round's start at most).
               uint64_t until = running ? start + duration : UINT64_MAX;
               if (running && room && gap_ps) {
                 const uint64_t due = start + sent * gap_ps, lead = uint64_t(peers - 1) * look_ps;
                 until = std::min(until, due > lead ? due - lead : 0);
               }
               for (int kk = 0; kk < peers; ++kk)
                 order[size_t(kk)] = cqs[size_t(gap_ps ? (next_peer + kk) % peers : kk)];
               int which = -1;
               const int got =
                   rnic_poll_rounds(order.data(), peers, poll_ns, until, 16, resume_wc, &which);
               if (got < 0) throw std::runtime_error(fmt::format("scale: host {}: polling", i));
               if (which >= 0) resume = which, resume_got = got;
               continue;
             }
             if (poll_ns) {
               rnic_spend_ns(poll_ns);  // the host polls its CQs every poll_ns
               continue;
             }
             // Asleep until a completion, or until the pacing lets it post again.
             uint64_t timeout = RNIC_WAIT_FOREVER;
             const uint64_t now = uint64_t(rnic_now_ns()) * 1000;
             if (running && room && gap_ps)
               timeout = (std::max<uint64_t>(start + sent * gap_ps, now + 1000) - now) / 1000;
             if (running)  // awake at the end of the traffic time, to measure
               timeout = std::min<uint64_t>(timeout, (start + duration - now + 999) / 1000);
             rnic_wait_cqs(cqs.data(), peers, timeout);
           }
         }});
  cl.run(progs);
  const auto wall1 = std::chrono::steady_clock::now();
  const double wall = std::chrono::duration<double>(wall1 - wall0).count();
  const double setup = std::chrono::duration<double>(setup_wall - wall0).count();
  uint64_t frames = 0;
  for (const auto& node : cl.nodes)
    if (node) frames += node->card.port.tx_frames();
  // Over several processes each rank counted its own hosts (it has no other).
  frames = ranks::sum_all(frames);
  ranks::sum_all(done_bytes);
  ranks::sum_all(flow_bytes);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  uint64_t total = 0;
  for (uint64_t b : done_bytes) total += b;
  double flows_sum = 0, flows_sq = 0;
  uint64_t flow_min = UINT64_MAX;
  for (uint64_t b : flow_bytes) {
    flows_sum += double(b);
    flows_sq += double(b) * double(b);
    flow_min = std::min(flow_min, b);
  }
  const double jain =
      flows_sq > 0 ? flows_sum * flows_sum / (double(flow_bytes.size()) * flows_sq) : 0;
  const double delivered_gbps = flows_sum * 8 / (double(duration) / 1000);
  const double sim_ms = double(duration) / 1e9;
  ctx.x = "hosts";
  ctx.y = {"wall_s", "peak_rss_mib", "goodput_gbps", "completed_gbps", "jain", "wall_per_frame_us"};
  const double rss = double(ru.ru_maxrss) / 1024;
  const double gbps = double(total) * 8 / (double(duration) / 1000);
  ctx.rows.push_back({{"hosts", n},
                      {"sim_ms", sim_ms},
                      {"wall_s", wall},
                      {"setup_s", setup},
                      {"peak_rss_mib", rss},
                      {"goodput_gbps", delivered_gbps},
                      {"min_flow_gbps", double(flow_min) * 8 / (double(duration) / 1000)},
                      {"completed_gbps", gbps},
                      {"jain", jain},
                      {"frames", frames},
                      {"wall_per_frame_us", frames ? (wall - setup) * 1e6 / double(frames) : 0.0}});
  ctx.summary = fmt::format(
      "{} hosts ({} leaves, {} spines), {} peers each: {:.3f} ms simulated in {:.2f} s wall "
      "({:.2f} "
      "s set-up), peak RSS {:.0f} MiB, {:.2f} Gb/s delivered in all (Jain {:.3f} over the flows), "
      "{:.2f} Gb/s in Writes completed, {} frames, {:.1f} us wall per frame after set-up\n",
      n, leaves, leaves > 1 ? spines : 0, peers, sim_ms, wall, setup, rss, delivered_gbps, jain,
      gbps, frames, frames ? (wall - setup) * 1e6 / double(frames) : 0.0);
  return 0;
}

}  // namespace

void register_efe_experiments() {
  ExperimentKind k;
  k.kind = "loss_goodput";
  k.has_links = true;
  k.desc =
      "RDMA Write goodput between two hosts over one link as its frame loss steps up: the "
      "transport's retransmission at work (the EFE's, or TCP's)";
  k.keys = {
      {"loss_ppm",
       ExpKey::kIntList,
       "[0, 1000, 10000, 20000, 50000]",
       0,
       500000,
       {},
       "ppm",
       "frame loss of the link, parts per million, one point each"},
      {"size", ExpKey::kInt, "65536", 1, double(1u << 30), {}, "B", "message size"},
      {"iters", ExpKey::kInt, "300", 1, 1e8, {}, "", "RDMA Writes per point"},
      {"tx_depth", ExpKey::kInt, "128", 1, 511, {}, "WRs", "Writes in flight"},
      {"resend",
       ExpKey::kStringList,
       "[selective, go_back_n]",
       0,
       0,
       {"selective", "go_back_n"},
       "",
       "EFE cards: the resend modes, each over every loss point (efe.resend's values); MPA/TCP "
       "cards: not used"},
  };
  k.run = run_loss_goodput;
  k.parallel = true;
  add_experiment_kind(std::move(k));

  ExperimentKind c;
  c.kind = "incast";
  c.has_links = true;
  c.desc =
      "N senders write to one receiver through one switch: the receiver's goodput, fairness "
      "(Jain's index per window), drops and retransmissions, with and without the EFE's "
      "congestion control, or TCP's (with and without DCTCP)";
  c.keys = {
      {"senders", ExpKey::kIntList, "[8, 32]", 2, 63, {}, "hosts", "senders, one point each"},
      {"modes",
       ExpKey::kStringList,
       "[efe_cc, efe_no_cc, pause]",
       0,
       0,
       {"efe_cc", "efe_dcqcn", "efe_dcqcn_pause", "efe_hpcc", "efe_hpcc_pause", "efe_no_cc",
        "pause", "tcp", "dctcp", "tcp_pause", "dctcp_pause"},
       "",
       "EFE cards: efe_cc, the EFE's congestion control (efe.cc: efe); efe_dcqcn, DCQCN in the "
       "same EFE (efe.cc: dcqcn); efe_dcqcn_pause, DCQCN over a switch that sends 802.3x PAUSE "
       "(as RoCE runs it with PFC); efe_hpcc, HPCC in the same EFE (efe.cc: hpcc) on the switch's "
       "utilisation stamps (switch.int_window_ns, 10 us where the scenario sets none); "
       "efe_hpcc_pause, the same over a switch that sends PAUSE (as HPCC runs over PFC); "
       "efe_no_cc, off (every channel at line rate); pause, off, and "
       "the switch sends PAUSE (the conventional lossless baseline). MPA/TCP cards "
       "(card.transport mpa_tcp): tcp, TCP halving its window on ECN "
       "(RFC 3168) over a drop-tail switch; dctcp, DCTCP (RFC 8257); tcp_pause and dctcp_pause, "
       "the same over a switch that sends PAUSE"},
      {"size", ExpKey::kInt, "65536", 1, double(1u << 24), {}, "B", "Write size"},
      {"depth", ExpKey::kInt, "4", 1, 128, {}, "WRs", "Writes in flight per sender"},
      {"warmup_us", ExpKey::kInt, "1000", 0, 1e7, {}, "us", "time before measuring"},
      {"measure_us", ExpKey::kInt, "5000", 1, 1e7, {}, "us", "time measured"},
      {"join_us", ExpKey::kInt, "2000", 0, 1e7, {}, "us", "when the late quarter joins"},
      {"leave_us", ExpKey::kInt, "4000", 0, 1e7, {}, "us", "when the late quarter leaves"},
      {"window_us", ExpKey::kInt, "1000", 1, 1e7, {}, "us", "fairness window"},
  };
  c.run = run_incast;
  c.parallel = true;
  add_experiment_kind(std::move(c));

  ExperimentKind v;
  v.kind = "efe_vs_tcp";
  v.has_links = true;
  v.desc =
      "the same card over the EFE and over MPA/TCP, side by side: latency, bandwidth, goodput "
      "under loss and incast, each transport on an island of its own";
  v.keys = {
      {"transports",
       ExpKey::kStringList,
       "[efe, mpa_tcp]",
       0,
       0,
       {"efe", "mpa_tcp"},
       "",
       "the transports compared (card.transport), each on its own island"},
      {"size", ExpKey::kInt, "65536", 1, double(1u << 24), {}, "B", "Write size"},
      {"iters", ExpKey::kInt, "300", 1, 1e8, {}, "", "RDMA Writes per loss point"},
      {"loss_ppm",
       ExpKey::kIntList,
       "[0, 1000, 10000, 50000]",
       0,
       500000,
       {},
       "ppm",
       "frame loss of the pair's link, one point each"},
      {"hops",
       ExpKey::kInt,
       "0",
       0,
       16,
       {},
       "switches",
       "switches between the pair's hosts (0: one link; the loss is on the first link)"},
      {"efe_modes",
       ExpKey::kStringList,
       "[efe_cc]",
       0,
       0,
       {"efe_cc", "efe_dcqcn", "efe_dcqcn_pause", "efe_hpcc", "efe_hpcc_pause", "efe_no_cc",
        "pause"},
       "",
       "incast modes on the EFE's island (incast's)"},
      {"tcp_modes",
       ExpKey::kStringList,
       "[tcp, dctcp, tcp_pause, dctcp_pause]",
       0,
       0,
       {"tcp", "dctcp", "tcp_pause", "dctcp_pause"},
       "",
       "incast modes on the MPA/TCP island (incast's)"},
      {"senders",
       ExpKey::kIntList,
       "[8, 32]",
       2,
       63,
       {},
       "hosts",
       "incast senders, one point each"},
      {"depth", ExpKey::kInt, "4", 1, 128, {}, "WRs", "Writes in flight per incast sender"},
      {"warmup_us", ExpKey::kInt, "1000", 0, 1e7, {}, "us", "incast: time before measuring"},
      {"measure_us", ExpKey::kInt, "5000", 1, 1e7, {}, "us", "incast: time measured"},
      {"join_us", ExpKey::kInt, "2000", 0, 1e7, {}, "us", "incast: when the late quarter joins"},
      {"leave_us", ExpKey::kInt, "4000", 0, 1e7, {}, "us", "incast: when the late quarter leaves"},
      {"window_us", ExpKey::kInt, "1000", 1, 1e7, {}, "us", "incast: fairness window"},
  };
  v.run = run_efe_vs_tcp;
  v.parallel = true;
  add_experiment_kind(std::move(v));

  ExperimentKind sc;
  sc.kind = "scale";
  sc.has_links = true;
  sc.desc =
      "hosts on a leaf/spine network, each writing to a few others: the simulator's wall time "
      "and memory as the system grows";
  sc.keys = {
      {"hosts", ExpKey::kInt, "64", 2, 4096, {}, "hosts", "hosts"},
      {"hosts_per_leaf", ExpKey::kInt, "8", 1, 64, {}, "hosts", "hosts per leaf switch"},
      {"spines", ExpKey::kInt, "2", 1, 16, {}, "switches", "spine switches (several leaves)"},
      {"peers", ExpKey::kInt, "4", 1, 16, {}, "hosts", "hosts each host writes to"},
      {"size", ExpKey::kInt, "65536", 1, double(1u << 24), {}, "B", "Write size"},
      {"depth", ExpKey::kInt, "2", 1, 64, {}, "WRs", "Writes in flight per QP"},
      {"duration_us", ExpKey::kInt, "1000", 1, 1e7, {}, "us", "simulated time of traffic"},
      {"load_mbps",
       ExpKey::kInt,
       "0",
       0,
       1e6,
       {},
       "Mb/s",
       "each host posts no faster than this (0: as fast as depth allows)"},
      {"poll_ns",
       ExpKey::kInt,
       "500",
       0,
       1e6,
       {},
       "ns",
       "a host polls its CQs this often; 0: it sleeps until a completion or its next post "
       "(rnic_wait_cqs)"},
      {"poll_skip",
       ExpKey::kInt,
       "1",
       0,
       1,
       {},
       "",
       "1: a polling host's rounds that can find nothing are worked out, not each waited through "
       "(the same times and results); 0: every poll is a wait"},
  };
  sc.run = run_scale;
  sc.parallel = true;
  add_experiment_kind(std::move(sc));
}

}  // namespace rnic::traffic
