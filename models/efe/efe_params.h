// The EFE's parameters (efe.*): retransmit and receive buffers, ACK coalescing, the retransmit
// timer, its back-off and retry budget, and the RNR back-off (docs/efe.md says why each default is
// what it is).
#pragma once

#include <cstdint>
#include <string>

#include "models/common/params.h"
#include "models/efe/efe_channel.h"

namespace rnic {

struct EfeConfig {
  int64_t retx_buffer_bytes = 256 << 10;  // B of DATA payload kept per peer until acknowledged
  int64_t rx_buffer_bytes = 256 << 10;    // B of segments given to the core, not yet validated
  int64_t ack_every_frames = 16;          // a standalone ACK after this many validated frames
  int64_t ack_delay_ns = 10000;           // ... or this long after the first unacknowledged one
  int64_t rto_ns = 50000;                 // retransmit timeout (the floor, when adaptive)
  bool rto_adaptive = true;               // the RTO follows the measured RTT (RFC 6298's way)
  int64_t rto_max_ns = 1000000;           // the backed-off timeout's cap
  int64_t retry_budget_ns = 1000000;      // retries without progress this long: the channel fails
  int64_t resync_budget_ns = 10000000;    // ... while a re-established channel's SY is unanswered
  int64_t rnr_delay_ns = 10000;           // a sender's back-off after an RNR
  int64_t keepalive_ns = 0;               // an idle channel probes its peer after this (0: never)
  std::string resend = "selective";       // selective | go_back_n
  // Congestion control per peer (docs/efe.md, efe_cc.h): efe, a delay-based rate from the RTT
  // the TS echo measures (the queueing above the lowest RTT seen held between cc_low_ns and
  // cc_high_ns) cut by ECE and loss, and a window from it; dcqcn, DCQCN as published; off.
  std::string cc = "efe";
  int64_t cc_low_ns = 40000;        // queueing below this: the rate grows
  int64_t cc_high_ns = 160000;      // queueing above this: the rate falls in proportion
  double cc_ai_fraction = 0.005;    // additive increase per round trip, of the line rate
  double cc_beta = 0.5;             // multiplicative decrease factor
  double cc_ecn_beta = 0.5;         // cc_ecn beta: an ACK with ECE cuts the rate so much
  double cc_min_fraction = 0.01;    // the rate never falls below this fraction of the line rate
  double cc_start_fraction = 0.1;   // a new channel's rate, of the line rate (< 1: slow start)
  int64_t cc_window_ns = 10000;     // the window: rate x (lowest RTT + this)
  int64_t cc_ai_period_ns = 15000;  // the additive step is per round trip, or per this if longer
  std::string cc_delay = "rtt";     // efe's delay signal: rtt | one_way
  std::string cc_ecn = "dctcp";     // efe's ECE cut: beta (cc_ecn_beta) | dctcp
  double cc_loss_beta = 0;          // a NACK or a timeout cuts the rate by this fraction
  double cc_int_eta = 0.95;         // efe with utilisation stamps: the utilisation aimed at
  double hpcc_ai_fraction = 0.005;  // hpcc: W_AI, of line rate x the base RTT
  int64_t hpcc_max_stage = 5;       // hpcc: additive steps before a multiplicative one
  double dcqcn_g = 1.0 / 256;       // DCQCN: alpha's EWMA gain
  int64_t dcqcn_alpha_interval_ns = 55000;  // ... alpha decays after this without a notification
  int64_t dcqcn_timer_ns = 55000;           // ... the rate-increase timer
  int64_t dcqcn_byte_counter = 10000000;    // ... the rate-increase byte counter
  int64_t dcqcn_fast_recovery = 5;          // ... steps of fast recovery (F)
  double dcqcn_rai_fraction = 0.001;        // ... additive increase, of the line rate
  double dcqcn_rhai_fraction = 0.01;        // ... hyper increase, of the line rate
  int64_t dcqcn_cnp_interval_ns = 50000;    // ... at most one notification per this
  bool decoy_timer = false;                 // a check: a second timer that never fires (efe.h)

  // Lists every field under "efe." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("retx_buffer_bytes", retx_buffer_bytes, "B", 9000, 1 << 30,
        "retransmit buffer per peer: DATA payload kept until acknowledged (full: the SQ engine "
        "waits for that peer)");
    p.i("rx_buffer_bytes", rx_buffer_bytes, "B", 9000, 1 << 30,
        "receive buffer: segments given to the core and not yet validated (full: RNR)");
    p.i("ack_every_frames", ack_every_frames, "frames", 1, 65536,
        "a standalone ACK after this many validated DATA frames (AR asks for one at once)");
    p.i("ack_delay_ns", ack_delay_ns, "ns", 1, 1000000000,
        "a standalone ACK this long after the first validated DATA frame not yet acknowledged");
    p.i("rto_ns", rto_ns, "ns", 100, 10000000000,
        "retransmit timeout: fixed, or with rto_adaptive its value before the first RTT sample "
        "and its floor");
    p.b("rto_adaptive", rto_adaptive,
        "the retransmit timeout follows the RTT the TS echo measures: smoothed RTT + 4 x its "
        "variation + ack_delay_ns (RFC 6298's estimator), never below rto_ns");
    p.i("rto_max_ns", rto_max_ns, "ns", 100, 10000000000,
        "the cap of the retransmit timeout, which doubles at each expiry without progress "
        "(exponential back-off; an ACK that moves the window or an RNR ends it)");
    p.i("retry_budget_ns", retry_budget_ns, "ns", 0, 10000000000,
        "the channel fails this long after its first retry (timeout or NACK) without progress "
        "(0: it never fails)");
    p.i("resync_budget_ns", resync_budget_ns, "ns", 0, 100000000000,
        "the retry budget of a channel re-established after a failure until its first frame (SY, "
        "which tells the peer its QPs are gone) is acknowledged (0: it never fails)");
    p.i("rnr_delay_ns", rnr_delay_ns, "ns", 1, 1000000000,
        "how long a sender waits after an RNR before it resends");
    p.i("keepalive_ns", keepalive_ns, "ns", 0, 1000000000000,
        "a channel a QP was connected over that has nothing unacknowledged and has heard "
        "nothing from its peer this long sends a probe (a DATA frame the peer acknowledges), "
        "resent as DATA is: a peer gone for the retry budget fails the channel and its QPs. "
        "The probes do not keep a run going (0: no probes, as TCP without SO_KEEPALIVE)");
    p.s("resend", resend, {"selective", "go_back_n"},
        "selective: the receiver keeps frames after a gap (up to rx_buffer_bytes) and its NACK "
        "names the missing ranges, which alone are resent; go_back_n: a gap's frames are dropped "
        "and the sender goes back to the first missing");
    p.s("cc", cc, {"efe", "dcqcn", "hpcc", "off"},
        "congestion control per peer: efe, the EFE's (a delay-based rate cut by ECE and loss, and "
        "a window of rate x (lowest RTT + cc_window_ns)); dcqcn, DCQCN as published (rate only, "
        "cut on ECE; the dcqcn_* keys); hpcc, HPCC's sender as published on the switches' "
        "utilisation stamps (switch.int_window_ns; cc_int_eta and the hpcc_* keys); off, every "
        "channel at line rate");
    p.i("cc_low_ns", cc_low_ns, "ns", 0, 1000000000,
        "queueing delay (RTT above the lowest seen) below which a channel's rate grows");
    p.i("cc_high_ns", cc_high_ns, "ns", 1, 1000000000,
        "queueing delay above which a channel's rate falls in proportion to the excess");
    p.r("cc_ai_fraction", cc_ai_fraction, "", 0.0001, 1,
        "additive increase per base round trip (the lowest RTT + cc_low_ns), as a fraction of "
        "the line rate");
    p.r("cc_beta", cc_beta, "", 0, 1, "multiplicative decrease factor (TIMELY's beta)");
    p.r("cc_ecn_beta", cc_ecn_beta, "", 0, 1,
        "with cc_ecn: beta, the fraction of its rate a channel gives up on an ACK echoing "
        "congestion (ECE)");
    p.r("cc_min_fraction", cc_min_fraction, "", 0.0001, 1,
        "the lowest rate a channel falls to, as a fraction of the line rate");
    p.r("cc_start_fraction", cc_start_fraction, "", 0.0001, 1,
        "a new channel's rate, as a fraction of the line rate; below 1 the rate doubles per RTT "
        "sample until the first sign of congestion (slow start)");
    p.s("cc_delay", cc_delay, {"rtt", "one_way"},
        "efe: the queueing delay the rate follows: rtt, the round trip's above the lowest RTT "
        "seen (queues on the way back count too); one_way, the forward path's: this card's "
        "ACKs carry the one-way delay of the DATA frame they echo above the lowest it saw (the "
        "header's QD bit), and its channels follow what their peers' ACKs carry (the RTT's "
        "where a peer sends none)");
    p.s("cc_ecn", cc_ecn, {"beta", "dctcp"},
        "efe: the cut an ECE makes (once per round trip): beta, cc_ecn_beta of the rate; dctcp, "
        "alpha / 2, alpha the moving average (gain 1/16, per round trip) of the fraction of "
        "ACKs echoing CE, as DCTCP cuts its window");
    p.i("cc_window_ns", cc_window_ns, "ns", 1000, 1000000000,
        "efe: a channel's window (bytes on the wire unacknowledged) is its rate x (the lowest RTT "
        "seen + this), and behind a queue q deeper than this rate x (the lowest RTT + q) x this / "
        "q; before the first RTT sample, line rate x this (hpcc's too); never below two frames");
    p.i("cc_ai_period_ns", cc_ai_period_ns, "ns", 0, 1000000000,
        "efe: the additive step (cc_ai_fraction) is per base round trip (the lowest RTT + "
        "cc_low_ns) or per this, whichever is longer: channels whose round trips are shorter "
        "add alike per us, which evens out the shares of channels with different RTTs");
    p.r("cc_loss_beta", cc_loss_beta, "", 0, 1,
        "efe: fraction of its rate a channel gives up on a NACK (once per round trip) or a "
        "timeout");
    p.r("cc_int_eta", cc_int_eta, "", 0.1, 1,
        "the utilisation aimed at where switches stamp it (switch.int_window_ns): efe, a slow "
        "start ends at the rate the stamped frame went at x this / its stamp when a doubling "
        "would pass it; hpcc, its eta");
    p.r("hpcc_ai_fraction", hpcc_ai_fraction, "", 0, 1,
        "hpcc: the additive step W_AI, as a fraction of line rate x the base RTT (the window a "
        "line-rate channel has)");
    p.i("hpcc_max_stage", hpcc_max_stage, "steps", 0, 1000,
        "hpcc: additive steps in a row (once per round trip) before a multiplicative one "
        "(maxStage)");
    p.r("dcqcn_g", dcqcn_g, "", 0.0001, 1, "dcqcn: gain of alpha's moving average (g)");
    p.i("dcqcn_alpha_interval_ns", dcqcn_alpha_interval_ns, "ns", 1000, 1000000000,
        "dcqcn: alpha decays by (1 - g) after each such period without a notification");
    p.i("dcqcn_timer_ns", dcqcn_timer_ns, "ns", 1000, 1000000000,
        "dcqcn: the rate-increase timer's period (T)");
    p.i("dcqcn_byte_counter", dcqcn_byte_counter, "B", 1500, 1 << 30,
        "dcqcn: the rate-increase byte counter (B)");
    p.i("dcqcn_fast_recovery", dcqcn_fast_recovery, "steps", 1, 1000,
        "dcqcn: increase steps of fast recovery before additive increase (F)");
    p.r("dcqcn_rai_fraction", dcqcn_rai_fraction, "", 0, 1,
        "dcqcn: additive increase per step, of the line rate (R_AI)");
    p.r("dcqcn_rhai_fraction", dcqcn_rhai_fraction, "", 0, 1,
        "dcqcn: hyper increase per step, of the line rate (R_HAI)");
    p.i("dcqcn_cnp_interval_ns", dcqcn_cnp_interval_ns, "ns", 0, 1000000000,
        "dcqcn: ECEs closer than this count as one notification (the notification point's CNP "
        "interval)");
    p.b("decoy_timer", decoy_timer,
        "a determinism check: each EFE arms a second retransmit timer, an event of its own, one "
        "picosecond after the real one and moves it with it, so it never fires; its entries "
        "reshape SystemC's queue of timed events at the EFE's deadlines, and results and "
        "captures must not change");
  }
  efe::EfeChannelConfig channel() const {
    efe::EfeChannelConfig c;
    c.retx_buffer_bytes = uint64_t(retx_buffer_bytes);
    c.rto_ps = uint64_t(rto_ns) * 1000;
    c.rto_max_ps = uint64_t(rto_max_ns) * 1000;
    c.retry_budget_ps = uint64_t(retry_budget_ns) * 1000;
    c.resync_budget_ps = uint64_t(resync_budget_ns) * 1000;
    c.rnr_delay_ps = uint64_t(rnr_delay_ns) * 1000;
    c.selective = resend == "selective";
    return c;
  }
};

}  // namespace rnic
