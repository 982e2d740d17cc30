// Congestion control of one EFE channel as plain logic, no SystemC (docs/efe.md, "Congestion
// control"): what the channel may send, as a rate (the engine paces DATA frames at it) and a
// window (bytes on the wire not yet acknowledged), from the signals the engine hands it: RTT
// samples (the TS echo), ECE (a switch marked CE), a NACK (a frame was lost) and a timeout.
//
// Algorithms (efe.cc):
//   - efe: the EFE's own. A delay-based rate (the queueing above the lowest RTT seen held
//     between cc_low and cc_high: below, additive increase of cc_ai_fraction of line rate per
//     round trip; above, a cut in proportion to the excess; between, the trend decides), ECE and
//     loss cut it (at most once per round trip each), and a window: rate x (lowest RTT +
//     cc_window_ns), so that a channel's own queue stays near cc_window_ns of its rate whatever
//     the number of hops; behind a queue q deeper than that, rate x (lowest RTT + q) x
//     cc_window_ns / q, the same share of the rate through every round trip. Before the first
//     RTT sample the window is line rate x cc_window_ns.
//     Where switches stamp the path's utilisation (HPCC's in-band telemetry; switch.int_window_ns)
//     and the receiver echoes it, a slow start ends at the path's room (the rate the stamped
//     frame went at x int_eta / the stamp) when a doubling would pass it, before the queue the
//     doubling would build.
//   - dcqcn: DCQCN as published (Zhu et al., SIGCOMM 2015), the reaction point: rate only, cut by
//     alpha/2 on a congestion notification (an ECE; at most one per cnp_interval, the
//     notification point's pacing), alpha an EWMA with gain g, decaying every alpha_interval
//     without a notification; the rate rises in fast recovery (F steps toward the target rate),
//     then additive and hyper increase, stepped by a timer and a byte counter. Loss and delay
//     are not signals (it relies on the switches' ECN marking). No window.
//   - hpcc: HPCC's sender (Li et al., SIGCOMM 2019, Algorithm 1) on the switches' utilisation
//     stamps: a window W from a reference W_c, updated once per round trip (W_c = W): with the
//     utilisation U (the stamps smoothed over the base RTT T as published) at or above eta, or
//     after max_stage additive steps in a row, W = W_c x eta / U + W_AI, else W = W_c + W_AI;
//     the rate is W / T, T the lowest RTT seen. It starts at line rate (W = line x T) and needs
//     stamps (switch.int_window_ns): without them it stays at line rate. ECE, loss and delay are
//     not its signals. The switch's stamp is its own running estimate of the highest hop's
//     utilisation, not the per-hop byte counters and timestamps HPCC's senders difference
//     (docs/decisions.md).
//   - off: line rate, no window.
// The timers of DCQCN run lazily: each call first applies the periods that ended since the last.
#pragma once

#include <cstdint>
#include <string>

namespace rnic::efe {

enum class CcAlgo { kOff, kEfe, kDcqcn, kHpcc };

// "off" | "efe" | "dcqcn" | "hpcc"; false for any other name.
bool parse_cc_algo(const std::string& name, CcAlgo* out);

struct CcConfig {
  CcAlgo algo = CcAlgo::kEfe;
  double line_bps = 10e9;
  uint32_t frame_bytes = 1500;  // a full DATA frame's payload (the window's floor is two)
  // efe
  uint64_t low_ps = 5'000'000, high_ps = 50'000'000, window_ps = 50'000'000;
  // The additive step is ai_fraction of line rate per max(lowest RTT + low_ps, ai_period_ps).
  uint64_t ai_period_ps = 0;
  bool one_way = false;  // the delay signal: the forward path's queueing (else the RTT's)
  // ECE cuts by ecn_alpha / 2, ecn_alpha the average fraction of ACKs echoing CE per round trip
  // (DCTCP's, gain ecn_g), not by ecn_beta.
  bool ecn_dctcp = false;
  double ecn_g = 1.0 / 16;
  double ai_fraction = 0.01, beta = 0.5, ecn_beta = 0.5, loss_beta = 0;
  double min_fraction = 0.01, start_fraction = 1;
  double int_eta = 0.95;  // utilisation stamps: the utilisation aimed at (efe, hpcc)
  // dcqcn (the published values; the rate steps are fractions of line rate: 40 Mb/s and 400 Mb/s
  // at the paper's 40 Gb/s)
  double g = 1.0 / 256;
  uint64_t alpha_interval_ps = 55'000'000, timer_ps = 55'000'000, cnp_interval_ps = 50'000'000;
  uint64_t byte_counter = 10'000'000;
  uint32_t fast_recovery = 5;
  double rai_fraction = 0.001, rhai_fraction = 0.01;
  // hpcc (eta is int_eta): W_AI as a fraction of line rate x T, and the additive steps before a
  // multiplicative one
  double hpcc_ai_fraction = 0.005;
  uint32_t hpcc_max_stage = 5;
};

class CongestionControl {
 public:
  explicit CongestionControl(const CcConfig& c);
  const CcConfig& config() const { return cfg_; }
  // The rate DATA frames are paced at (line rate: no pacing) and the window (bytes on the wire
  // unacknowledged; UINT64_MAX: none), at `now` (DCQCN's timers first).
  double rate(uint64_t now);
  uint64_t window() const;
  // Below line rate the engine asks for an ACK once per round trip (RTT samples, slow start).
  // Where switches stamp utilisation, at line rate too (the stamps say when to stop growing).
  bool probing() const {
    return cfg_.algo == CcAlgo::kHpcc ||
           (cfg_.algo != CcAlgo::kOff && (rate_ < cfg_.line_bps || int_seen_));
  }
  // An RTT sample, and the forward queueing delay the receiver measured for the same frame (its
  // one-way delay above the lowest it saw; negative: not known): the efe algorithm's queueing
  // delay is that when known and config().one_way, else the RTT above the lowest RTT seen.
  // echoed_bytes: the payload of the DATA frame the sample answers (0: not known). The queueing
  // of a full frame (at least half of frame_bytes) is its RTT above the lowest RTT of full
  // frames: a store-and-forward hop adds a full frame's time, not queueing, to its RTT.
  // util: the highest utilisation the switches on the way stamped on that frame (negative:
  // none).
  void on_rtt(uint64_t now, uint64_t rtt_ps, int64_t fwd_q_ps = -1, size_t echoed_bytes = 0,
              double util = -1);
  void on_ece(uint64_t now, double srtt_ps);
  // Every ACK or NACK, with its ECE or not (efe with ecn_dctcp: the marked fraction's average).
  void on_echo(uint64_t now, bool ece, double srtt_ps);
  void on_loss(uint64_t now, double srtt_ps);
  void on_timeout(uint64_t now);
  void on_sent(uint64_t now, uint64_t bytes);
  // Back to the start (an experiment switching algorithms between points).
  void reset(const CcConfig& c) { *this = CongestionControl(c); }
  uint64_t min_rtt_ps() const { return min_rtt_ps_; }
  double alpha() const { return alpha_; }
  double target_rate() const { return target_; }

 private:
  void cut_for_loss(uint64_t now);
  void dcqcn_catch_up(uint64_t now);
  void dcqcn_increase();
  double floor_bps() const { return cfg_.min_fraction * cfg_.line_bps; }
  void hpcc_sample(uint64_t now, uint64_t rtt_ps, double util);

  CcConfig cfg_;
  double rate_;
  // efe
  uint64_t min_rtt_ps_ = UINT64_MAX;
  double prev_q_ps_ = 0;
  bool slow_start_;
  uint64_t ece_cut_ps_ = 0, loss_cut_ps_ = 0, delay_cut_ps_ = 0;
  bool ece_cut_ = false, loss_cut_ = false, delay_cut_ = false;
  uint64_t ai_at_ps_ = 0;
  bool int_seen_ = false;    // a sample carried a utilisation stamp
  double ss_prev_rate_ = 0;  // slow start: the rate before the last doubling (0: none yet)
  double ecn_alpha_ = 1;
  uint64_t min_rtt_full_ps_ = UINT64_MAX;  // the lowest RTT of full frames
  uint64_t echo_from_ps_ = 0, echoes_ = 0, marked_ = 0;
  // dcqcn
  double target_, alpha_ = 1;
  uint64_t alpha_at_ps_ = 0, timer_at_ps_ = 0, cnp_ps_ = 0;
  bool cnp_ = false;
  uint64_t bytes_ = 0;
  uint32_t timer_steps_ = 0, byte_steps_ = 0;
  // hpcc
  double w_ = 0, w_c_ = 0, u_ = 0;  // bytes; the smoothed utilisation
  uint64_t u_at_ps_ = 0, w_c_at_ps_ = 0;
  bool u_seen_ = false, w_c_set_ = false;
  uint32_t inc_stage_ = 0;
};

}  // namespace rnic::efe
