// A full-duplex point-to-point Ethernet link joining two MAC ports (DESIGN.md §3.4): its rate
// sets both ports' byte time, and a frame's bits reach the other end link.prop_ns after they
// leave. Every frame is shown to the wire tap (captures) as its first bit goes on the wire.
// Faults (LinkParams): a frame on the wire while the link is down, or drawn lost (probability
// `loss`), never arrives; one drawn to have a bit error (probability 1 - (1 - ber)^bits over its
// bits from the destination address through the FCS) arrives with one random bit flipped and
// fails the receiving MAC's FCS check. Each direction draws from a stream of its own (seeded
// from LinkParams::seed and the sending end), so what one direction loses never depends on when
// the other sends. Captures show what was sent. Counted per link: lost_down, lost_random,
// corrupted.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <random>
#include <systemc>
#include <vector>

#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/eth/eth_params.h"

namespace rnic::eth {

class EthLink;

// One end of a link: a MAC port of a card or a switch port. The link tells it its byte time,
// and hands it each frame with the times its first and last bits arrive.
class LinkEnd {
 public:
  using FramePtr = std::shared_ptr<const std::vector<uint8_t>>;
  virtual ~LinkEnd() = default;
  virtual void attach(EthLink* link, int end, uint64_t byte_ps) = 0;
  virtual void arrive(FramePtr frame, std::array<uint8_t, 4> fcs, uint64_t first_bit_ps,
                      uint64_t last_bit_ps) = 0;
  // When this end can next start a frame it has not handed to its link yet: at or after
  // min(known_ps, E + after_ps), E the earliest time at which anything not yet queued in its
  // block happens (a frame not yet handed to it, another block's event). A run over several
  // processes sizes its windows by it (docs/decisions.md). By default nothing more than E.
  struct NextStart {
    uint64_t known_ps = UINT64_MAX;
    size_t known_bytes = 0;  // the frame that starts at known_ps, if known (0: the shortest)
    uint64_t after_ps = 0;
  };
  virtual NextStart next_start() const { return {}; }
};

class EthLink : public sc_core::sc_module {
 public:
  using Frame = std::vector<uint8_t>;

  // Joins port a (end 0) and port b (end 1).
  EthLink(sc_core::sc_module_name n, const LinkParams& p, LinkEnd& a, LinkEnd& b,
          StatRegistry& stats);

  // Every frame as it goes on the wire (time of its first bit, the frame, its FCS, the end that
  // sent it): captures and the request timeline; each tap added sees every frame, in the order
  // they were added.
  using WireTap = std::function<void(uint64_t, const Frame&, const uint8_t*, int)>;
  void add_wire_tap(WireTap tap) { taps_.push_back(std::move(tap)); }

  // From the MAC at `end`: the frame's first bit is on the wire now.
  void on_wire(const Frame& f, const uint8_t* fcs, int end) const {
    for (const WireTap& t : taps_) t(now_ps(), f, fcs, end);
  }
  // From the MAC at `end`: a frame whose first bit goes on the wire at start_ps and lasts
  // on_wire_ps; it reaches the other end prop later.
  void carry(int end, LinkEnd::FramePtr f, std::array<uint8_t, 4> fcs, uint64_t start_ps,
             uint64_t on_wire_ps);

  uint64_t byte_ps() const { return byte_ps_; }
  uint64_t prop_ps() const { return uint64_t(cfg_.prop_ns) * 1000; }
  // The fraction of frames lost from now on (an experiment's sweep sets it between points).
  void set_loss(double loss) { cfg_.loss = loss; }
  // Schedules one more down interval [from_ps, to_ps) (tests place one relative to traffic).
  void add_down(uint64_t from_ps, uint64_t to_ps) { cfg_.down_ps.push_back({from_ps, to_ps}); }
  // A link whose other end another process simulates (a run over several processes): frames
  // the local end `local` sends are handed to `send` (with the times their first and last bits
  // reach the far end) instead of to the far end, and anything from the far end's stand-in is
  // dropped (it never sends). The far process hands its frames in through deliver().
  using RemoteSend =
      std::function<void(LinkEnd::FramePtr, std::array<uint8_t, 4>, uint64_t, uint64_t)>;
  void set_remote(int local, RemoteSend send) {
    remote_local_ = local;
    remote_send_ = std::move(send);
  }
  // A frame from the far end's process, for the local end: as carry() would have handed it.
  void deliver(LinkEnd::FramePtr f, std::array<uint8_t, 4> fcs, uint64_t first_bit_ps,
               uint64_t last_bit_ps) {
    end_[remote_local_]->arrive(std::move(f), fcs, first_bit_ps, last_bit_ps);
  }
  // What a link configured `cfg`'s faults do at now_ps, for a report of a run that cannot go on:
  // down (and until when), the frames it lost or corrupted ("" when it has lost nothing; a link
  // between processes counts each direction where it is sent: their sum).
  static std::string faults_text(const LinkParams& cfg, uint64_t now_ps, uint64_t lost_down,
                                 uint64_t lost_random, uint64_t corrupted);
  // Frames lost while down, lost at random and corrupted, in the directions sent here.
  std::array<uint64_t, 3> fault_counts() const {
    return {lost_down_.value, lost_random_.value, corrupted_.value};
  }

 private:
  bool down(uint64_t from_ps, uint64_t to_ps) const;

  LinkParams cfg_;
  uint64_t byte_ps_;
  std::mt19937_64 rng_[2];  // per sending end
  Counter &lost_down_, &lost_random_, &corrupted_;
  LinkEnd* end_[2];
  std::vector<WireTap> taps_;
  int remote_local_ = -1;  // >= 0: the far end is another process's (set_remote)
  RemoteSend remote_send_;
};

}  // namespace rnic::eth
