// The firmware's share of a scatter-gather handle's extent switch (firmware.extent_switch
// "firmware", DESIGN.md §3.3): an XlatChannel in front of xlat's. Each request over a handle
// whose extent list the firmware wrote (REG_MR) answers, on top of xlat's own time,
// firmware.extent_switch_cycles firmware cycles later per extent boundary inside the requested
// range: xlat hands each switch to the firmware, which finds the next extent's address. Other
// requests, and check requests, pass straight through. With "xlat" (the default) the core uses
// xlat's channel alone and a switch costs its extent_switch_cycles (1 core cycle).
// With `occupy` set (the firmware sets it), the switches are work for the firmware's processor:
// they wait while it runs a command's piece and hold it meanwhile, n x extent_switch_cycles
// from the first free edge; unset (a stand-alone unit), they take that time from xlat's answer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/common/stats.h"
#include "models/rnic/xlat/xlat_channel.h"

namespace rnic {

class ExtentSwitchXlat : public XlatChannel {
 public:
  ExtentSwitchXlat(XlatChannel& inner, EventQueue& own, ClockDomain fw_clk, uint64_t cycles,
                   Counter& switches)
      : inner_(inner), own_(own), clk_(fw_clk), cycles_(cycles), switches_(switches) {}

  // A handle's extents as the firmware wrote them: its base tagged offset and each extent's
  // length, in order. forget() when it is freed.
  void learn(uint32_t index, uint64_t base_to, const std::vector<uint64_t>& lengths) {
    std::vector<uint64_t> ends;
    uint64_t at = base_to;
    for (uint64_t l : lengths) ends.push_back(at += l);
    handles_[index] = std::move(ends);
  }
  void forget(uint32_t index) { handles_.erase(index); }
  // The processor (Firmware::occupy): `done` runs once it has spent `cycles` on the switches.
  std::function<void(uint64_t cycles, std::function<void()> done)> occupy;

  // Extent boundaries strictly inside [to, to + len) of the STag's handle (0 if unknown).
  uint64_t switches(uint32_t stag, uint64_t to, uint64_t len) const {
    auto it = handles_.find(stag >> 8);
    if (it == handles_.end() || len == 0) return 0;
    uint64_t n = 0;
    for (size_t i = 0; i + 1 < it->second.size(); ++i) {
      const uint64_t b = it->second[i];
      n += b > to && b < to + len;
    }
    return n;
  }

  void request(const XlatRequest& r, EventQueue& to, Reply reply) override {
    const uint64_t n = r.check_only ? 0 : switches(r.stag, r.to, r.len);
    if (n == 0) return inner_.request(r, to, std::move(reply));
    switches_ += n;
    inner_.request(r, own_, [this, &to, n, reply = std::move(reply)](XlatResult&& x) mutable {
      // The answer goes to the requester `after` ps from when give() runs.
      auto answer = std::make_shared<std::pair<XlatResult, Reply>>(std::move(x), std::move(reply));
      auto give = [&to, answer](uint64_t after = 0) {
        to.at(now_ps() + after, [answer] { answer->second(std::move(answer->first)); });
      };
      if (answer->first.status != XlatStatus::kOk) return give();
      if (occupy) return occupy(n * cycles_, [give] { give(); });
      give(n * cycles_ * clk_.period_ps);
    });
  }
  bool write_smt(uint32_t index, const SmtEntry& e) override { return inner_.write_smt(index, e); }
  bool invalidate(uint32_t stag, const uint32_t* pd = nullptr) override {
    return inner_.invalidate(stag, pd);
  }
  bool free(uint32_t index) override { return inner_.free(index); }
  bool write_pbl(uint32_t first, const std::vector<PblEntry>& e) override {
    return inner_.write_pbl(first, e);
  }
  size_t pbl_entries() const override { return inner_.pbl_entries(); }
  const XlatTiming& timing() const override { return inner_.timing(); }
  const SmtEntry* entry(uint32_t index) const override { return inner_.entry(index); }

 private:
  XlatChannel& inner_;
  EventQueue& own_;
  ClockDomain clk_;
  uint64_t cycles_;
  Counter& switches_;
  std::unordered_map<uint32_t, std::vector<uint64_t>> handles_;  // SMT index -> extent ends
};

}  // namespace rnic
