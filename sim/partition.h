// How a run over several processes (MPI ranks; docs/performance.md, "Runs over several
// processes") splits a topology: every host and every switch belongs to one rank, which
// simulates it; a link whose ends belong to different ranks carries its frames between them with
// their time stamps. The ranks advance in windows no longer than the lookahead: the smallest
// link_lookahead_ps() of a link that crosses (with its far switch's far_hold_ps()), and the
// management network's latency (what the programs' out-of-band exchange takes), whichever is
// smaller.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rnic {

struct LinkSpec;
struct LinkParams;
struct SwitchConfig;
struct Topology;

// How far one end of a link may run ahead of the other: its propagation delay and the time from
// a frame's first bit to the first thing its receiver does with it (the shortest frame's time at
// the link's rate; a cut-through switch's latency after the header, if shorter). `ends`: the
// switch at each end (nullptr: a host). host_first_bit: a host's MAC takes a frame beat by beat
// from its first bit (a waveform of the FCS checker's RTL, clocked in simulated time), so a link
// with a host at either end has its propagation delay alone.
uint64_t link_lookahead_ps(const LinkParams& l, const std::vector<const SwitchConfig*>& ends,
                           bool host_first_bit = false);

// How long after a frame's last bit the switch at the far end of link `link` from end `from`
// (0: a, 1: b) does anything with it: switch.latency_ns where that switch can only queue what
// arrives, 0 otherwise. It queues every frame from there, a latency after its last bit, when both
// ends are store-and-forward switches, the sender never makes a PAUSE of its own (no
// switch.pause, no shared buffer), the link corrupts nothing (link.ber 0) and the far switch
// routes every host the sender routes over the link (`routes`: Topology::routes()). A frame that
// fails its FCS, a PAUSE or one with no route would act at its last bit.
uint64_t far_hold_ps(const Topology& t, size_t link, int from,
                     const std::vector<std::vector<std::vector<int>>>& routes);

struct Partition {
  int ranks = 1;
  std::vector<int> host_rank;    // per host
  std::vector<int> switch_rank;  // per switch
  std::vector<int> crossing;     // the links whose ends are on different ranks, in link order
  // Per crossing link and sending end (0: a): its far end's far_hold_ps(), and the
  // link_lookahead_ps() of that direction with the hold added.
  std::vector<std::array<uint64_t, 2>> crossing_hold_ps;
  std::vector<std::array<uint64_t, 2>> crossing_send_ps;
  uint64_t lookahead_ps = UINT64_MAX;  // the smallest of them; UINT64_MAX: nothing crosses

  // The rank of a link's end 0 (a) or 1 (b).
  int end_rank(const LinkSpec& l, int end) const;
  // Hosts per rank.
  std::vector<int> hosts_per_rank() const;
};

// Splits `t` over `ranks`. By default every switch goes with the hosts on its links (a leaf with
// its hosts) and hosts joined only to hosts with each other; these groups go, the largest first,
// each to the rank with the fewest hosts so far (ties: the lower rank); switches with no host
// (spines) go in turn to the rank with the fewest switches. Where that leaves a rank without a
// host, hosts joined to hosts are split; where it still does (one switch with every host), each
// host goes alone, the switches as spines do. `pins` ("NAME=RANK", a host or a
// switch) place those first; a pinned host leaves its group. mgmt_latency_ps bounds the
// lookahead. Throws InputError: an unknown name or a rank out of range, a rank with no host, a
// crossing link with no propagation delay (it cannot be split: pin its ends together).
// host_first_bit: as link_lookahead_ps's.
Partition partition_topology(const Topology& t, int ranks, const std::vector<std::string>& pins,
                             uint64_t mgmt_latency_ps, bool host_first_bit = false);

// The run's `--partition` pins, for every system it builds (empty: the default split).
void set_partition_pins(std::vector<std::string> pins);
const std::vector<std::string>& partition_pins();

}  // namespace rnic
