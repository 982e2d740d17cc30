#include "sim/cluster.h"

#include <fmt/format.h>

#include "models/common/byte_pool.h"
#include "models/common/sim_time.h"
#include "models/common/step_end.h"
#include "models/host/verbs/verbs.h"
#include "models/host/verbs/verbs_internal.h"
#include "sim/default_rtl.h"
#include "sim/ranks.h"
#include "sim/run_control.h"
#include "sim/run_record.h"

namespace rnic {

MacAddr default_mac(int n) {
  const uint32_t v = uint32_t(n) + 1;  // 24 bits: 16,777,215 hosts before the first repeats
  return {0x02, 0, 0, uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

uint32_t default_ip(int n) { return 0x0A000000u + uint32_t(n) + 1; }

Topology two_hosts(const SystemConfig& cfg) {
  Topology t;
  for (int i = 0; i < 2; ++i) t.hosts.push_back({fmt::format("node{}", i), default_mac(i), cfg});
  t.links.push_back({"eth0", 0, 1, cfg.eth_link()});
  return t;
}

Topology leaf_spine(const SystemConfig& cfg, int hosts, int per_leaf, int spines) {
  const int leaves = (hosts + per_leaf - 1) / per_leaf;
  Topology t;
  for (int i = 0; i < hosts; ++i) t.hosts.push_back({fmt::format("h{}", i), default_mac(i), cfg});
  for (int l = 0; l < leaves; ++l) t.switches.push_back({fmt::format("leaf{}", l), cfg.sw});
  if (leaves > 1)
    for (int s = 0; s < spines; ++s) t.switches.push_back({fmt::format("spine{}", s), cfg.sw});
  for (int i = 0; i < hosts; ++i) {
    LinkSpec l{fmt::format("h{}_leaf{}", i, i / per_leaf), i, 0, cfg.eth_link()};
    l.sw_b = i / per_leaf;
    t.links.push_back(l);
  }
  if (leaves > 1)
    for (int l = 0; l < leaves; ++l)
      for (int s = 0; s < spines; ++s) {
        LinkSpec k{fmt::format("leaf{}_spine{}", l, s), 0, 0, cfg.eth_link()};
        k.sw_a = l;
        k.sw_b = leaves + s;
        t.links.push_back(k);
      }
  return t;
}

namespace {

// Graph of the topology: nodes 0..H-1 are hosts, H.. switches; per node its (neighbour, link).
std::vector<std::vector<std::pair<int, int>>> graph(const Topology& t) {
  const int h = int(t.hosts.size());
  std::vector<std::vector<std::pair<int, int>>> g(t.hosts.size() + t.switches.size());
  for (size_t i = 0; i < t.links.size(); ++i) {
    const LinkSpec& l = t.links[i];
    const int a = l.sw_a >= 0 ? h + l.sw_a : l.a, b = l.sw_b >= 0 ? h + l.sw_b : l.b;
    g[size_t(a)].push_back({b, int(i)});
    g[size_t(b)].push_back({a, int(i)});
  }
  return g;
}

// Hops from every node to host `dst`, through switches only (-1: unreachable).
std::vector<int> hops_from(const Topology& t, int dst) {
  const auto g = graph(t);
  const int h = int(t.hosts.size());
  std::vector<int> d(g.size(), -1);
  std::vector<int> q{dst};
  d[size_t(dst)] = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    const int u = q[i];
    if (u < h && u != dst) continue;  // a host is an end, not a way through
    for (const auto& [v, link] : g[size_t(u)])
      if (d[size_t(v)] < 0) {
        d[size_t(v)] = d[size_t(u)] + 1;
        q.push_back(v);
      }
  }
  return d;
}

}  // namespace

bool Topology::reachable(int a, int b) const { return hops_from(*this, b)[size_t(a)] > 0; }
std::vector<int> Topology::hops_to(int dst) const { return hops_from(*this, dst); }

std::vector<std::vector<std::vector<int>>> Topology::routes() const {
  const auto g = graph(*this);
  const int h = int(hosts.size());
  // A switch's ports are numbered in the order of the links that reach it.
  std::vector<std::vector<int>> port_of_link(switches.size(), std::vector<int>(links.size(), -1));
  std::vector<int> next(switches.size(), 0);
  for (size_t i = 0; i < links.size(); ++i)
    for (int sw : {links[i].sw_a, links[i].sw_b})
      if (sw >= 0) port_of_link[size_t(sw)][i] = next[size_t(sw)]++;
  std::vector<std::vector<std::vector<int>>> r(switches.size(),
                                               std::vector<std::vector<int>>(hosts.size()));
  for (int dst = 0; dst < h; ++dst) {
    const std::vector<int> d = hops_from(*this, dst);
    for (size_t sw = 0; sw < switches.size(); ++sw) {
      const int u = h + int(sw);
      if (d[size_t(u)] <= 0) continue;
      for (const auto& [v, link] : g[size_t(u)])
        if (d[size_t(v)] == d[size_t(u)] - 1 && (v >= h || v == dst))
          r[sw][size_t(dst)].push_back(port_of_link[sw][size_t(link)]);
    }
  }
  return r;
}

namespace {

// The implementations a node runs: those given, else default_rtl() (a test binary's --rtl).
// There `all` means every block whose RTL can run the node's configuration (a test that sets
// core.rx_parse_cycles 500 keeps ddp_rx_parse's model); a list names blocks strictly.
Implementations node_implementations(const Implementations& given, const SystemConfig& cfg) {
  if (!given.of.empty() || default_rtl().empty()) return given;
  if (default_rtl() != std::vector<std::string>{"all"})
    return resolve_implementations(default_rtl(), cfg, "--rtl");
  Implementations impl = resolve_implementations({}, cfg, "--rtl");
  for (const BlockInfo& b : blocks()) {
    if (!b.has_rtl) continue;
    try {
      impl.of[b.name] = resolve_implementations({b.name}, cfg, "--rtl").of[b.name];
    } catch (const InputError&) {
      // This configuration is one the block's RTL is not built for: its model runs.
    }
  }
  return impl;
}

}  // namespace

Node::Node(sc_core::sc_module_name n, int i, const HostSpec& spec, StatRegistry& stats,
           const Implementations& given)
    : sc_core::sc_module(n),
      index(i),
      mac(spec.mac),
      ip(spec.ip ? spec.ip : default_ip(i)),
      cfg(spec.cfg),
      impl(node_implementations(given, cfg)),
      host(cfg, stats, std::string(name()) + ".os"),
      card(cfg.card(), host.link, mac, ip, stats,
           {block_factory<DmacCore>(impl), block_factory<Crc32Channel>(impl),
            block_factory<RxParseChannel>(impl), block_factory<XlatChannel>(impl)}),
      driver(std::string(name()) + ".driver", host.mem, host.rc, host.os, host.bar0, host.bar2, mac,
             cfg.card().caps(), cfg.host, cfg.cost, stats) {
  card.pcie.map(host.bar0, host.bar2);
  // The run record (sim/run_record.h): every card write that reached this host's memory.
  if (RunRecord::get().enabled()) {
    const uint32_t src = RunRecord::get().source(std::string(name()) + " host write", 0);
    auto prev = host.rc.on_write;
    host.rc.on_write = [this, src, prev](uint64_t addr, uint32_t len) {
      std::vector<uint8_t> bytes(len);
      host.mem.read(addr, bytes.data(), len);
      RunRecord::get().add(src, now_ps(), addr, record_digest_bytes(bytes.data(), len, len));
      if (prev) prev(addr, len);
    };
  }
}

Cluster::Cluster(const SystemConfig& c, StatRegistry& s, const Implementations& impl)
    : Cluster(two_hosts(c), c, s, impl) {}

Cluster::Cluster(const Topology& topo, const SystemConfig& c, StatRegistry& s,
                 const Implementations& impl)
    : cfg(c), stats(s) {
  host::oob_clear();
  background.every(uint64_t(c.sim.stats_interval_ns) * 1000, [&s](uint64_t t) { s.sample(t); });
  if (c.sim.decoy_ns > 0) {
    // sim.decoy_ns: wakes every period, or at the next event when that comes first, while
    // anything else is pending, and never after the last event: a run (and so the next point of
    // an experiment) ends when its own work does. With activity at the current time it looks
    // again at the end of the time step (StepEnd), when the next event's time is known.
    const sc_core::sc_time period(double(c.sim.decoy_ns), sc_core::SC_NS);
    auto rearm = [this, period] {
      if (!sc_core::sc_pending_activity()) return;
      const sc_core::sc_time d = sc_core::sc_time_to_pending_activity();
      if (d == sc_core::SC_ZERO_TIME)
        StepEnd::get().request(decoy_step);
      else
        decoy_ev.notify(std::min(period, d));
    };
    decoy_step = StepEnd::get().add(rearm);
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&decoy_ev);
    sc_core::sc_spawn(rearm, "decoy", &o);
  }
  // Over several processes: this rank's part, and its links to other ranks. A rank builds only
  // its own hosts and switches, and the links with an end among them.
  // (A waveform of the FCS checker's RTL takes each frame's beats from its first bit.)
  part = partition_topology(topo, ranks::size(), partition_pins(),
                            uint64_t(c.host.mgmt_latency_ns) * 1000,
                            impl.traced && node_implementations(impl, c).rtl("crc32"));
  part_rank_ = ranks::rank();
  run_control::set_lookahead(part.lookahead_ps);
  if (ranks::parallel()) {
    // The programs' out-of-band board: every put goes to every rank (it is seen a management
    // network's latency later, no sooner than the lookahead), whichever rank the getter is on.
    board_channel_ = ranks::channel([](int, const uint8_t* p, size_t n) {
      ranks::Unpacker u(p, n);
      host::OobPut put;
      put.at_ps = u.get<uint64_t>();
      put.host = u.get<uint64_t>();
      put.seq = u.get<uint64_t>();
      put.key = u.get_sized<std::string>();
      put.bytes = u.get_sized<std::vector<uint8_t>>();
      host::oob_arrived(std::move(put));
    });
    host::oob_set_forward([ch = board_channel_](const host::OobPut& put) {
      ranks::Packer m;
      m.put(put.at_ps).put(put.host).put(put.seq).put_sized(put.key).put_sized(put.bytes);
      ranks::broadcast(ch, m.data(), m.size(), put.at_ps);
    });
  }
  for (const HostSpec& h : topo.hosts) {
    host_names.push_back(h.name);
    host_macs.push_back(h.mac);
  }
  for (const SwitchSpec& sw : topo.switches) switch_names.push_back(sw.name);
  for (size_t i = 0; i < topo.hosts.size(); ++i)
    nodes.push_back(local(int(i)) ? std::make_unique<Node>(topo.hosts[i].name.c_str(), int(i),
                                                           topo.hosts[i], s, impl)
                                  : nullptr);
  // Each card learns the others' addresses (MPA/TCP's; ARP is not modelled).
  for (size_t i = 0; i < topo.hosts.size(); ++i)
    if (nodes[i])
      for (size_t j = 0; j < topo.hosts.size(); ++j)
        if (j != i)
          nodes[i]->card.add_peer(topo.hosts[j].mac,
                                  topo.hosts[j].ip ? topo.hosts[j].ip : default_ip(int(j)));
  std::vector<int> ports(topo.switches.size(), 0);
  for (const LinkSpec& l : topo.links)
    for (int sw : {l.sw_a, l.sw_b})
      if (sw >= 0) ++ports[size_t(sw)];
  for (size_t i = 0; i < topo.switches.size(); ++i)
    switches.push_back(part.switch_rank[i] == part_rank_
                           ? std::make_unique<eth::EthSwitch>(topo.switches[i].name.c_str(),
                                                              ports[i], topo.switches[i].cfg, s)
                           : nullptr);
  std::vector<int> used(topo.switches.size(), 0);
  std::vector<std::array<eth::LinkEnd*, 2>> link_ends_here;  // this rank's ends of each link
  // An end of this rank's, or a stand-in for another rank's (a switch's ports are numbered in
  // link order either way).
  auto end = [&](int host, int sw) -> eth::LinkEnd* {
    if (sw < 0) return nodes[size_t(host)] ? &nodes[size_t(host)]->card.port : nullptr;
    const int port = used[size_t(sw)]++;
    return switches[size_t(sw)] ? &switches[size_t(sw)]->port(port) : nullptr;
  };
  for (const LinkSpec& l : topo.links) {
    LinkParams p = l.params;
    p.seed = uint64_t(c.sim.seed) * 1000003 + links.size() + 1;  // each link its own draws
    eth::LinkEnd* a = end(l.a, l.sw_a);
    eth::LinkEnd* b = end(l.b, l.sw_b);
    link_ends_here.push_back({a, b});
    if (!a && !b) {
      links.push_back(nullptr);  // between other ranks' hosts and switches
    } else {
      for (eth::LinkEnd** e : {&a, &b})
        if (!*e) *e = far_ends_.emplace_back(std::make_unique<FarEnd>()).get();
      links.push_back(std::make_unique<eth::EthLink>(l.name.c_str(), p, *a, *b, s));
    }
    link_names.push_back(l.name);
    link_params.push_back(l.params);
    auto name = [&](int host, int sw) {
      return sw < 0 ? topo.hosts[size_t(host)].name : topo.switches[size_t(sw)].name;
    };
    link_ends.push_back({name(l.a, l.sw_a), name(l.b, l.sw_b)});
  }
  const auto routes = topo.routes();
  for (size_t sw = 0; sw < switches.size(); ++sw)
    if (switches[sw])
      for (size_t h = 0; h < topo.hosts.size(); ++h)
        switches[sw]->set_route(topo.hosts[h].mac, routes[sw][h]);
  if (ranks::parallel() && part_rank_ == 0) {
    std::string per;
    for (int n : part.hosts_per_rank()) per += (per.empty() ? "" : "/") + std::to_string(n);
    fmt::print(stderr, "rnicsim: {} ranks, hosts {}, {} links between ranks, lookahead {:.3f} ns\n",
               ranks::size(), per, part.crossing.size(), double(part.lookahead_ps) / 1000.0);
  }
  if (part.crossing.empty()) return;
  frame_channel_ = ranks::channel([this](int, const uint8_t* d, size_t n) {
    // link index, first and last bit times, FCS, then the frame
    ranks::Unpacker u(d, n);
    const auto link = u.get<uint32_t>();
    const auto first = u.get<uint64_t>(), last = u.get<uint64_t>();
    const auto fcs = u.get<std::array<uint8_t, 4>>();
    const size_t len = u.left();
    const uint8_t* f = u.take(len);
    Bytes frame = take_bytes(len);
    frame.assign(f, f + len);
    links[link]->deliver(share_bytes(std::move(frame)), fcs, first, last);
  });
  for (size_t c = 0; c < part.crossing.size(); ++c) {
    const int i = part.crossing[c];
    const LinkSpec& l = topo.links[size_t(i)];
    const int r0 = part.end_rank(l, 0), r1 = part.end_rank(l, 1);
    if (r0 != part_rank_ && r1 != part_rank_) continue;  // between two other ranks
    const int local_end = r0 == part_rank_ ? 0 : 1;
    const int far = local_end == 0 ? r1 : r0;
    // The far end does nothing with a frame before its first bit and the receiver's reaction
    // (the lookahead's argument): windows then advance by the lookahead at least, frames or not.
    // A store-and-forward switch reacts at the frame's last bit, whatever its length, or a
    // latency after it where it can only queue the frame (far_hold_ps).
    Sender snd;
    snd.end = link_ends_here[size_t(i)][size_t(local_end)];
    snd.prop_ps = uint64_t(l.params.prop_ns) * 1000;
    snd.react_ps = part.crossing_send_ps[c][size_t(local_end)] - snd.prop_ps;
    snd.hold_ps = part.crossing_hold_ps[c][size_t(local_end)];
    const int local_sw = local_end == 0 ? l.sw_a : l.sw_b,
              far_sw = local_end == 0 ? l.sw_b : l.sw_a;
    if (local_sw >= 0) {
      switches[size_t(local_sw)]->track_next_starts();
      if (snd.hold_ps > 0) switches[size_t(local_sw)]->promise_no_pause();
      // What the far end sends here may come as late as its hold.
      switches[size_t(local_sw)]->take_inputs_late(part.crossing_hold_ps[c][size_t(1 - local_end)]);
    }
    if (far_sw >= 0 && topo.switches[size_t(far_sw)].cfg.mode != "cut_through")
      snd.byte_ps = uint64_t(8000 / l.params.rate_gbps);
    senders_.push_back(snd);
    links[size_t(i)]->set_remote(
        local_end, [this, i, far, snd](eth::LinkEnd::FramePtr f, std::array<uint8_t, 4> fcs,
                                       uint64_t first, uint64_t last) {
          ranks::Packer m;
          m.put(uint32_t(i)).put(first).put(last).put(fcs).put_bytes(f->data(), f->size());
          ranks::send(far, frame_channel_, m.data(), m.size(), first + snd.react(f->size()));
        });
  }
  // What this rank sends next takes effect at the far end a crossing link's delay and its
  // receiver's reaction after its first bit leaves (a switch port knows when that can be, and
  // which frame: eth::LinkEnd::next_start), and a program's out-of-band message the management
  // network's latency after it is put.
  run_control::set_send_bound([this, mgmt = uint64_t(c.host.mgmt_latency_ns) * 1000] {
    run_control::SendBound b{UINT64_MAX, mgmt};
    for (const Sender& s : senders_) {
      const eth::LinkEnd::NextStart n = s.end->next_start();
      b.known_ps = std::min(b.known_ps, add_sat(n.known_ps, s.prop_ps + s.react(n.known_bytes)));
      b.after_ps = std::min(b.after_ps, add_sat(n.after_ps, s.prop_ps + s.react_ps));
    }
    return b;
  });
}

Cluster::~Cluster() {
  if (board_channel_ != UINT32_MAX) {
    host::oob_set_forward(nullptr);
    ranks::drop_channel(board_channel_);
  }
  if (frame_channel_ == UINT32_MAX) return;  // nothing crosses to another rank
  run_control::set_send_bound(nullptr);
  ranks::drop_channel(frame_channel_);
}

int Cluster::find(const std::string& host) const {
  for (size_t i = 0; i < host_names.size(); ++i)
    if (host == host_names[i]) return int(i);
  return -1;
}

void Cluster::run(const std::vector<std::function<void()>>& programs) {
  std::vector<Program> p;
  for (size_t i = 0; i < programs.size() && i < nodes.size(); ++i)
    if (programs[i]) p.push_back({int(i), programs[i]});
  run(p);
}

void Cluster::run(const std::vector<Program>& programs) {
  std::vector<std::pair<std::string, std::function<void()>>> threads;
  for (const Program& pr : programs) {
    const auto pid = pids_.try_emplace({pr.node, pr.process}, 100 + int(pids_.size()));
    if (!local(pr.node)) continue;  // another rank's host
    Node& n = *nodes[size_t(pr.node)];
    std::unique_ptr<host::Process>& slot = pr.process == 0 ? n.proc : n.other_procs[pr.process];
    if (!slot)
      slot = std::make_unique<host::Process>(
          n.host.mem, n.cfg.host,
          uint64_t(cfg.sim.seed) * 7919 + uint64_t(n.index) + 104729 * uint64_t(pr.process),
          pid.first->second);
    host::Process* proc = slot.get();
    threads.emplace_back(fmt::format("{}_proc{}_{}", n.name(), proc->pid(), runs_++),
                         [&n, proc, fn = pr.fn, priv = pr.privileged] {
                           // A host program's thread (the spin guard tells it how to wait).
                           const void* self = sc_core::sc_get_current_process_b();
                           run_control::set_user_thread(self, true);
                           struct Unmark {
                             const void* p;
                             ~Unmark() { run_control::set_user_thread(p, false); }
                           } unmark{self};
                           host::bind_current_process({&n.driver, proc, priv});
                           fn();
                           host::unbind_current_process();
                         });
  }
  run_control::run_threads(cfg, stats, background, threads, [this] { return dump_state(); });
}

std::vector<uint64_t> Cluster::fault_counts() const {
  std::vector<uint64_t> n(3 * links.size(), 0);
  for (size_t i = 0; i < links.size(); ++i)
    if (links[i]) {  // (nullptr: between other ranks' hosts and switches)
      const auto c = links[i]->fault_counts();
      std::copy(c.begin(), c.end(), n.begin() + std::ptrdiff_t(3 * i));
    }
  return n;
}

std::string Cluster::lossy_text(const std::vector<uint64_t>& n) const {
  std::string s;
  for (size_t i = 0; i < links.size(); ++i) {
    const std::string f =
        eth::EthLink::faults_text(link_params[i], now_ps(), n[3 * i], n[3 * i + 1], n[3 * i + 2]);
    if (!f.empty()) s += fmt::format("link {}: {}\n", link_names[i], f);
  }
  return s;
}

std::string Cluster::lossy_links() const { return lossy_text(fault_counts()); }

std::string Cluster::lossy_links_everywhere() const {
  std::vector<uint64_t> n = fault_counts();
  ranks::sum_all(n);
  return lossy_text(n);
}

std::string Cluster::dump_state() const {
  // Links that lost frames first: a link down for good, or too lossy, is often the cause.
  std::string s = lossy_links() + nonzero_stats(stats);
  for (const auto& n : nodes) {
    if (!n) continue;  // another rank's
    s += n->host.dump_state();
    s += n->card.dump_state();
  }
  return s;
}

void Cluster::trace(TraceSink& t) const {
  for (size_t i = 0; i < nodes.size(); ++i) trace_node(i, t);
}

void Cluster::trace_node(size_t i, TraceSink& t) const {
  const auto& n = nodes[i];
  if (!n) return;  // another rank's
  n->host.trace(t);
  // Its EFE's channel to every other host, on this rank or another.
  std::vector<eth::Mac> peers;
  for (size_t j = 0; j < host_macs.size(); ++j)
    if (j != i) peers.push_back(host_macs[j]);
  n->card.trace(t, peers);
}

}  // namespace rnic
