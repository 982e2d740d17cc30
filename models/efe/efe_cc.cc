#include "models/efe/efe_cc.h"

#include <algorithm>
#include <cmath>

namespace rnic::efe {

bool parse_cc_algo(const std::string& name, CcAlgo* out) {
  if (name == "off")
    *out = CcAlgo::kOff;
  else if (name == "efe")
    *out = CcAlgo::kEfe;
  else if (name == "dcqcn")
    *out = CcAlgo::kDcqcn;
  else if (name == "hpcc")
    *out = CcAlgo::kHpcc;
  else
    return false;
  return true;
}

CongestionControl::CongestionControl(const CcConfig& c)
    : cfg_(c),
      rate_(c.algo == CcAlgo::kEfe ? c.line_bps * c.start_fraction : c.line_bps),
      slow_start_(true),
      target_(c.line_bps) {}

double CongestionControl::rate(uint64_t now) {
  if (cfg_.algo == CcAlgo::kDcqcn) dcqcn_catch_up(now);
  return rate_;
}

uint64_t CongestionControl::window() const {
  if (cfg_.algo == CcAlgo::kHpcc) {
    // Before the first RTT sample (no T yet): line rate x window_ps, as the efe algorithm.
    const double w = w_ > 0 ? w_ : cfg_.line_bps * double(cfg_.window_ps) / 8e12;
    return std::max(uint64_t(w), uint64_t(2) * cfg_.frame_bytes);
  }
  if (cfg_.algo != CcAlgo::kEfe) return UINT64_MAX;
  const double w = double(cfg_.window_ps);
  double ps = min_rtt_ps_ == UINT64_MAX ? w : double(min_rtt_ps_) + w;
  // A queue deeper than window_ps (the last sample's): the window lets the channel send
  // window_ps / q of its rate over its round trip (lowest RTT + q), whatever that lowest RTT,
  // so channels of different round trips behind one queue keep the shares their rates give.
  if (min_rtt_ps_ != UINT64_MAX && prev_q_ps_ > w)
    ps = (double(min_rtt_ps_) + prev_q_ps_) * w / prev_q_ps_;
  const double line = min_rtt_ps_ == UINT64_MAX ? cfg_.line_bps : rate_;
  return std::max(uint64_t(line * ps / 8e12), uint64_t(2) * cfg_.frame_bytes);
}

void CongestionControl::on_rtt(uint64_t now, uint64_t rtt_ps, int64_t fwd_q_ps, size_t echoed_bytes,
                               double util) {
  if (cfg_.algo == CcAlgo::kDcqcn) dcqcn_catch_up(now);
  if (cfg_.algo == CcAlgo::kHpcc) hpcc_sample(now, rtt_ps, util);
  if (cfg_.algo != CcAlgo::kEfe) return;
  const double line = cfg_.line_bps;
  min_rtt_ps_ = std::min(min_rtt_ps_, rtt_ps);
  uint64_t base = min_rtt_ps_;
  if (2 * echoed_bytes >= cfg_.frame_bytes) {
    min_rtt_full_ps_ = std::min(min_rtt_full_ps_, rtt_ps);
    base = min_rtt_full_ps_;
  }
  const double q = cfg_.one_way && fwd_q_ps >= 0 ? double(fwd_q_ps) : double(rtt_ps - base);
  const double lo = double(cfg_.low_ps), hi = double(cfg_.high_ps);
  // The additive step is per round trip, or per ai_period when that is longer: a sample adds
  // the share of it the time since the last sample covers (a fast channel's many samples add no
  // more than a slow one's few, and channels of round trips below the period add alike).
  const double round = std::max(double(min_rtt_ps_) + lo, double(cfg_.ai_period_ps));
  const double since = ai_at_ps_ ? double(now - ai_at_ps_) : round;
  ai_at_ps_ = now;
  const double ai = cfg_.ai_fraction * line * std::min(1.0, since / round);
  double r = rate_;
  // A cut for delay waits a round trip (this sample's) after the last: the samples of one
  // round trip see one queue, and the queue the cut drains shows in them for a round trip more.
  const bool may_cut = !delay_cut_ || now >= delay_cut_ps_ + rtt_ps;
  double cut = 1;
  if (util >= 0) int_seen_ = true;
  // A slow start with a stamp: the rate that fills the path is the rate the stamped frame went
  // at x int_eta / the utilisation. The frame went before the last doubling (a stamp shows a
  // round trip and more of the past), so that rate is the one before it. A doubling that would
  // pass that rate ends the slow start there; a path already full (others' channels: the rate
  // would not grow) leaves the doubling as it was, so that a new channel pushes its way in.
  double fill = 0;
  if (slow_start_ && util >= 0 && q < lo) {
    const double sent_at = ss_prev_rate_ > 0 ? ss_prev_rate_ : rate_;
    const double f = sent_at * cfg_.int_eta / std::max(util, 1 / 64.0);
    if (f > rate_ && f <= 2 * rate_) {
      fill = f;
      slow_start_ = false;
    }
  }
  if (fill > 0) {
    r = fill;
  } else if (slow_start_ && q < lo) {
    ss_prev_rate_ = r;
    r *= 2;
  } else if (q < lo) {
    r += ai;
  } else if (q > hi) {
    slow_start_ = false;
    cut = 1 - cfg_.beta * (1 - hi / q);
  } else {
    // Between the thresholds the trend decides: a rising queue cuts in proportion to how far
    // it stands between the thresholds.
    slow_start_ = false;
    if (q <= prev_q_ps_)
      r += ai;
    else
      cut = 1 - cfg_.beta * (q - lo) / (hi - lo);
  }
  if (cut < 1 && may_cut) {
    r *= cut;
    delay_cut_ = true;
    delay_cut_ps_ = now;
  }
  prev_q_ps_ = q;
  rate_ = std::clamp(r, floor_bps(), line);
}

void CongestionControl::hpcc_sample(uint64_t now, uint64_t rtt_ps, double util) {
  min_rtt_ps_ = std::min(min_rtt_ps_, rtt_ps);
  const double t = double(min_rtt_ps_);  // T, the base RTT
  const double line = cfg_.line_bps;
  if (w_ == 0) w_ = w_c_ = line * t / 8e12;  // line rate until the first stamp
  if (util < 0) return;
  // The stamps smoothed over T: a sample tau after the last weighs tau / T (at most 1).
  const double tau = u_seen_ ? std::min(double(now - u_at_ps_), t) : t;
  u_ = (1 - tau / t) * u_ + tau / t * util;
  u_seen_ = true;
  u_at_ps_ = now;
  // W_c moves once per round trip (this sample's).
  const bool update = !w_c_set_ || now >= w_c_at_ps_ + rtt_ps;
  const double w_ai = cfg_.hpcc_ai_fraction * line * t / 8e12;
  double w;
  if (u_ >= cfg_.int_eta || inc_stage_ >= cfg_.hpcc_max_stage) {
    w = w_c_ * cfg_.int_eta / std::max(u_, 1e-9) + w_ai;
    if (update) inc_stage_ = 0;
  } else {
    w = w_c_ + w_ai;
    if (update) ++inc_stage_;
  }
  const double w_max = line * t / 8e12, w_min = floor_bps() * t / 8e12;
  w_ = std::clamp(w, w_min, w_max);
  if (update) {
    w_c_ = w_;
    w_c_set_ = true;
    w_c_at_ps_ = now;
  }
  rate_ = std::clamp(w_ * 8e12 / t, floor_bps(), line);
}

void CongestionControl::on_ece(uint64_t now, double srtt_ps) {
  if (cfg_.algo == CcAlgo::kDcqcn) {
    dcqcn_catch_up(now);
    // The notification point sends at most one notification per cnp_interval.
    if (cnp_ && now < cnp_ps_ + cfg_.cnp_interval_ps) return;
    cnp_ = true;
    cnp_ps_ = now;
    target_ = rate_;
    rate_ = std::max(rate_ * (1 - alpha_ / 2), floor_bps());
    alpha_ = (1 - cfg_.g) * alpha_ + cfg_.g;
    alpha_at_ps_ = timer_at_ps_ = now;
    bytes_ = 0;
    timer_steps_ = byte_steps_ = 0;
    return;
  }
  if (cfg_.algo != CcAlgo::kEfe) return;
  slow_start_ = false;
  // At most one cut per round trip: the ECEs of one window of marked frames are one signal.
  if (ece_cut_ && now < ece_cut_ps_ + uint64_t(srtt_ps)) return;
  ece_cut_ = true;
  ece_cut_ps_ = now;
  rate_ = std::max(rate_ * (1 - (cfg_.ecn_dctcp ? ecn_alpha_ / 2 : cfg_.ecn_beta)), floor_bps());
}

void CongestionControl::on_echo(uint64_t now, bool ece, double srtt_ps) {
  if (cfg_.algo != CcAlgo::kEfe || !cfg_.ecn_dctcp) return;
  if (!echoes_) echo_from_ps_ = now;
  ++echoes_;
  if (ece) ++marked_;
  if (now >= echo_from_ps_ + uint64_t(srtt_ps)) {
    // A round trip's echoes: the marked fraction joins the average.
    ecn_alpha_ = (1 - cfg_.ecn_g) * ecn_alpha_ + cfg_.ecn_g * double(marked_) / double(echoes_);
    echoes_ = marked_ = 0;
  }
}

void CongestionControl::on_loss(uint64_t now, double srtt_ps) {
  if (cfg_.algo == CcAlgo::kDcqcn) dcqcn_catch_up(now);
  if (cfg_.algo != CcAlgo::kEfe) return;
  if (loss_cut_ && now < loss_cut_ps_ + uint64_t(srtt_ps)) {
    slow_start_ = false;
    return;
  }
  cut_for_loss(now);
}

void CongestionControl::on_timeout(uint64_t now) {
  if (cfg_.algo == CcAlgo::kDcqcn) dcqcn_catch_up(now);
  if (cfg_.algo != CcAlgo::kEfe) return;
  cut_for_loss(now);  // a timeout cuts whenever it fires
}

void CongestionControl::cut_for_loss(uint64_t now) {
  slow_start_ = false;
  loss_cut_ = true;
  loss_cut_ps_ = now;
  rate_ = std::max(rate_ * (1 - cfg_.loss_beta), floor_bps());
}

void CongestionControl::on_sent(uint64_t now, uint64_t bytes) {
  if (cfg_.algo != CcAlgo::kDcqcn || !cnp_) return;
  dcqcn_catch_up(now);
  bytes_ += bytes;
  while (bytes_ >= cfg_.byte_counter) {
    bytes_ -= cfg_.byte_counter;
    dcqcn_increase();  // (the stage counts the steps before this one, as published)
    ++byte_steps_;
  }
}

// The periods of the alpha timer and the rate-increase timer that ended since the last call.
void CongestionControl::dcqcn_catch_up(uint64_t now) {
  if (!cnp_) return;  // at line rate until the first notification: nothing to step
  if (now >= alpha_at_ps_ + cfg_.alpha_interval_ps) {
    const uint64_t n = (now - alpha_at_ps_) / cfg_.alpha_interval_ps;
    alpha_ *= std::pow(1 - cfg_.g, double(n));
    alpha_at_ps_ += n * cfg_.alpha_interval_ps;
  }
  while (now >= timer_at_ps_ + cfg_.timer_ps) {
    timer_at_ps_ += cfg_.timer_ps;
    if (rate_ >= cfg_.line_bps && target_ >= cfg_.line_bps) {
      // Back at line rate: the remaining steps change nothing.
      const uint64_t n = (now - timer_at_ps_) / cfg_.timer_ps;
      timer_at_ps_ += n * cfg_.timer_ps;
      timer_steps_ += uint32_t(std::min<uint64_t>(n + 1, 1u << 30));
      break;
    }
    dcqcn_increase();
    ++timer_steps_;
  }
}

void CongestionControl::dcqcn_increase() {
  const uint32_t hi = std::max(timer_steps_, byte_steps_), lo = std::min(timer_steps_, byte_steps_);
  const double line = cfg_.line_bps;
  if (hi < cfg_.fast_recovery) {
    // Fast recovery: halfway back to the rate before the cut.
  } else if (lo > cfg_.fast_recovery) {
    target_ += double(lo - cfg_.fast_recovery) * cfg_.rhai_fraction * line;  // hyper increase
  } else {
    target_ += cfg_.rai_fraction * line;  // additive increase
  }
  target_ = std::min(target_, line);
  rate_ = std::min((target_ + rate_) / 2, line);
}

}  // namespace rnic::efe
