#include "sim/partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "models/eth/ethernet.h"
#include "sim/cluster.h"
#include "sim/config.h"

namespace rnic {

int Partition::end_rank(const LinkSpec& l, int end) const {
  const int sw = end == 0 ? l.sw_a : l.sw_b;
  const int host = end == 0 ? l.a : l.b;
  return sw >= 0 ? switch_rank[size_t(sw)] : host_rank[size_t(host)];
}

std::vector<int> Partition::hosts_per_rank() const {
  std::vector<int> n(size_t(ranks), 0);
  for (int r : host_rank)
    if (r >= 0) ++n[size_t(r)];
  return n;
}

namespace {

// Union-find over hosts (0..H-1) and switches (H..).
struct Groups {
  std::vector<int> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  }
  void join(int a, int b) { parent[size_t(find(a))] = find(b); }
};

}  // namespace

uint64_t link_lookahead_ps(const LinkParams& l, const std::vector<const SwitchConfig*>& ends,
                           bool host_first_bit) {
  // A link hands a frame over when its sender starts it. A MAC acts on it after its last bit
  // (its FCS), a store-and-forward switch too (a PAUSE, a drop, or its queue switch.latency_ns
  // later); the shortest frame is a preamble, 60 bytes and the FCS. A cut-through switch acts
  // switch.latency_ns after the preamble and header.
  const uint64_t byte_ps = uint64_t(8000 / l.rate_gbps);
  uint64_t react = (eth::kPreambleBytes + eth::kMinFrameBytes + eth::kFcsBytes) * byte_ps;
  for (const SwitchConfig* sw : ends)
    if (sw && sw->mode == "cut_through")
      react = std::min(react, (eth::kPreambleBytes + eth::kHeaderBytes) * byte_ps +
                                  uint64_t(sw->latency_ns) * 1000);
  if (host_first_bit && std::find(ends.begin(), ends.end(), nullptr) != ends.end()) react = 0;
  return uint64_t(l.prop_ns) * 1000 + react;
}

uint64_t far_hold_ps(const Topology& t, size_t link, int from,
                     const std::vector<std::vector<std::vector<int>>>& routes) {
  const LinkSpec& l = t.links[link];
  const int x = from == 0 ? l.sw_a : l.sw_b, y = from == 0 ? l.sw_b : l.sw_a;
  if (x < 0 || y < 0 || l.params.ber > 0) return 0;
  const SwitchConfig &sx = t.switches[size_t(x)].cfg, &sy = t.switches[size_t(y)].cfg;
  if (sx.mode != "store_and_forward" || sy.mode != "store_and_forward" || sx.pause ||
      sx.shared_buffer_bytes > 0)
    return 0;
  // The sender's port on the link: its ports are numbered in the order of the links that reach
  // it.
  int port = 0;
  for (size_t i = 0; i < link; ++i) port += int(t.links[i].sw_a == x) + int(t.links[i].sw_b == x);
  for (size_t h = 0; h < t.hosts.size(); ++h) {
    const std::vector<int>& out = routes[size_t(x)][h];
    if (std::find(out.begin(), out.end(), port) != out.end() && routes[size_t(y)][h].empty())
      return 0;
  }
  return uint64_t(sy.latency_ns) * 1000;
}

Partition partition_topology(const Topology& t, int ranks, const std::vector<std::string>& pins,
                             uint64_t mgmt_latency_ps, bool host_first_bit) {
  if (ranks < 1) throw InputError("mpirun -n", "ranks", fmt::format("{} ranks", ranks));
  const size_t h = t.hosts.size(), s = t.switches.size();
  Partition p;
  p.ranks = ranks;
  p.host_rank.assign(h, -1);
  p.switch_rank.assign(s, -1);
  // Pins.
  std::vector<bool> pinned(h + s, false);
  for (const std::string& pin : pins) {
    const size_t eq = pin.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--partition", pin, "expected NAME=RANK");
    const std::string name = pin.substr(0, eq);
    int rank = -1;
    try {
      size_t used = 0;
      rank = std::stoi(pin.substr(eq + 1), &used);
      if (used != pin.size() - eq - 1) rank = -1;
    } catch (const std::exception&) {
      rank = -1;
    }
    if (rank < 0 || rank >= ranks)
      throw InputError("--partition", pin, fmt::format("the rank must be 0 to {}", ranks - 1));
    size_t node = h + s;
    for (size_t i = 0; i < h; ++i)
      if (t.hosts[i].name == name) node = i;
    for (size_t i = 0; i < s; ++i)
      if (t.switches[i].name == name) node = h + i;
    if (node == h + s) throw InputError("--partition", pin, "no host or switch is called " + name);
    pinned[node] = true;
    if (node < h)
      p.host_rank[node] = rank;
    else
      p.switch_rank[node - h] = rank;
  }
  // Groups: a switch with the hosts on its links; hosts joined to hosts together, unless that
  // leaves a rank without a host (two hosts on one link over two ranks): then each such host
  // is a group of its own; and if a rank still has none (one switch with all the hosts), every
  // host is a group of its own, the switches placed as spines are.
  const Partition pinned_only = p;
  auto place = [&](bool split_hosts, bool split_switches) {
    p = pinned_only;
    Groups g(h + s);
    for (const LinkSpec& l : t.links) {
      const int a = l.sw_a >= 0 ? int(h) + l.sw_a : l.a, b = l.sw_b >= 0 ? int(h) + l.sw_b : l.b;
      const bool a_sw = l.sw_a >= 0, b_sw = l.sw_b >= 0;
      if (a_sw && b_sw) continue;  // switch to switch: spines go on their own
      if (split_hosts && !a_sw && !b_sw) continue;
      if (split_switches) continue;
      if ((a < int(h) && pinned[size_t(a)]) || (b < int(h) && pinned[size_t(b)])) continue;
      g.join(a, b);
    }
    std::map<int, std::vector<int>> members;  // root -> nodes, in node order
    for (size_t n = 0; n < h + s; ++n)
      if (!(n < h && pinned[n])) members[g.find(int(n))].push_back(int(n));
    struct Group {
      std::vector<int> nodes;
      int hosts = 0;
      int rank = -1;  // a pinned switch's, which its hosts follow
    };
    std::vector<Group> groups, spines;
    for (auto& [root, nodes] : members) {
      Group gr{nodes, 0, -1};
      for (int n : nodes) {
        gr.hosts += n < int(h);
        if (n >= int(h) && pinned[size_t(n)] && gr.rank < 0) gr.rank = p.switch_rank[size_t(n) - h];
      }
      if (gr.hosts == 0 && gr.rank >= 0) continue;  // a pinned spine
      (gr.hosts ? groups : spines).push_back(gr);
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const Group& a, const Group& b) { return a.hosts > b.hosts; });
    std::vector<int> load = p.hosts_per_rank(), sw_load(size_t(ranks), 0);
    for (size_t i = 0; i < s; ++i)
      if (p.switch_rank[i] >= 0) ++sw_load[size_t(p.switch_rank[i])];
    // Groups with a pinned switch first (their rank is given), then the largest first.
    std::stable_partition(groups.begin(), groups.end(),
                          [](const Group& gr) { return gr.rank >= 0; });
    for (const Group& gr : groups) {
      const int r =
          gr.rank >= 0 ? gr.rank : int(std::min_element(load.begin(), load.end()) - load.begin());
      load[size_t(r)] += gr.hosts;
      for (int n : gr.nodes) {
        if (n < int(h)) {
          p.host_rank[size_t(n)] = r;
        } else if (!pinned[size_t(n)]) {
          p.switch_rank[size_t(n) - h] = r;
          ++sw_load[size_t(r)];
        }
      }
    }
    for (const Group& gr : spines)
      for (int n : gr.nodes) {
        const int r = int(std::min_element(sw_load.begin(), sw_load.end()) - sw_load.begin());
        p.switch_rank[size_t(n) - h] = r;
        ++sw_load[size_t(r)];
      }
  };
  auto some_rank_empty = [&] {
    const std::vector<int> per = p.hosts_per_rank();
    return std::find(per.begin(), per.end(), 0) != per.end();
  };
  place(false, false);
  if (some_rank_empty()) place(true, false);
  if (some_rank_empty()) place(true, true);
  const std::vector<int> per = p.hosts_per_rank();
  for (int r = 0; r < ranks; ++r)
    if (per[size_t(r)] == 0)
      throw InputError("--partition", fmt::format("rank {}", r),
                       fmt::format("it would simulate no host ({} hosts over {} ranks)", h, ranks));
  p.lookahead_ps = ranks > 1 ? mgmt_latency_ps : UINT64_MAX;
  std::vector<std::vector<std::vector<int>>> routes;  // made for the first link between switches
  for (size_t i = 0; i < t.links.size(); ++i) {
    const LinkSpec& l = t.links[i];
    if (p.end_rank(l, 0) == p.end_rank(l, 1)) continue;
    if (l.params.prop_ns <= 0)
      throw InputError("--partition", "link " + l.name,
                       fmt::format("it joins ranks {} and {} but has no propagation delay "
                                   "(prop_ns 0), so neither can run ahead of the other; pin its "
                                   "ends to one rank",
                                   p.end_rank(l, 0), p.end_rank(l, 1)));
    p.crossing.push_back(int(i));
    const uint64_t ahead =
        link_lookahead_ps(l.params,
                          {l.sw_a >= 0 ? &t.switches[size_t(l.sw_a)].cfg : nullptr,
                           l.sw_b >= 0 ? &t.switches[size_t(l.sw_b)].cfg : nullptr},
                          host_first_bit);
    if (routes.empty() && l.sw_a >= 0 && l.sw_b >= 0) routes = t.routes();
    std::array<uint64_t, 2> hold{0, 0}, send{ahead, ahead};
    for (int e = 0; e < 2; ++e)
      if (!routes.empty()) {
        hold[size_t(e)] = far_hold_ps(t, i, e, routes);
        send[size_t(e)] += hold[size_t(e)];
      }
    p.crossing_hold_ps.push_back(hold);
    p.crossing_send_ps.push_back(send);
    p.lookahead_ps = std::min({p.lookahead_ps, send[0], send[1]});
  }
  return p;
}

namespace {
std::vector<std::string>& pins_store() {
  static std::vector<std::string> p;
  return p;
}
}  // namespace

void set_partition_pins(std::vector<std::string> pins) { pins_store() = std::move(pins); }
const std::vector<std::string>& partition_pins() { return pins_store(); }

}  // namespace rnic
