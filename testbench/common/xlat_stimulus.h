// Random tables and translation requests for the rnic_xlat benches (the pin tests and the RTL
// lockstep). A region is every SMT entry type (page list, scatter-gather handle, physical,
// on-demand with one page in four absent), valid nine times in ten, in one of four keys and two
// PDs with random rights; a request names its region's STag most of the time, else another key,
// an index off the table, another PD, rights the region lacks, a tagged offset anywhere, a length
// running past the end, or 0 bytes. The stimulus keeps a mirror of what it wrote, so a bench can
// ask the burst API (RnicXlat) what a request should give.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "models/rnic/xlat/rnic_xlat.h"

namespace rnic::tb {

// One write of the tables' write port: an SMT entry or a PBLMT entry.
struct XlatTableWrite {
  bool smt;
  uint32_t addr;
  SmtEntry e;
  PblEntry p;
};

class XlatStimulus {
 public:
  XlatStimulus(uint64_t seed, size_t smt_entries, size_t pbl_entries)
      : rng(seed),
        smt(smt_entries),
        pbl(pbl_entries),
        slots_(uint32_t(pbl_entries / smt_entries)) {}

  // The writes that make SMT entry i a fresh region, with PBL entries [s*i, s*i + s), s the PBL
  // entries per SMT entry (at most 8 used). The mirror is updated.
  std::vector<XlatTableWrite> region(uint32_t i) {
    std::vector<XlatTableWrite> w;
    SmtEntry e;
    e.state = chance(90) ? SmtEntry::State::kValid : SmtEntry::State::kInvalid;
    e.type = SmtEntry::Type(rng() % 4);
    e.key = uint8_t(rng() % 4);
    e.pd = uint32_t(1 + rng() % 2);
    e.access = uint8_t(rng() % 16);
    // One region in twenty sits at the top of the 64-bit tagged-offset space (requests wrap).
    e.base_to =
        chance(5) ? (0 - (uint64_t(1) << 17)) + rng() % 4096 : (rng() % 1000) * 4096 + rng() % 4096;
    e.pbl_first = slots_ * i;
    e.page_shift = 12;
    e.first_page_offset = e.base_to & 4095;
    const uint32_t n = 1 + uint32_t(rng() % std::min<uint32_t>(8, slots_));
    e.pbl_count = n;
    auto pblw = [&](uint32_t k, PblEntry x) {
      pbl.at(e.pbl_first + k) = x;
      w.push_back({false, e.pbl_first + k, {}, x});
    };
    if (e.type == SmtEntry::Type::kSgHandle) {
      e.length = 0;
      for (uint32_t k = 0; k < n; ++k) {
        const PblEntry x{(1 + rng() % 100000) * 64, 1 + rng() % 5000};
        e.length += x.len;
        pblw(k, x);
      }
      // One in ten claims more bytes than its extents hold (the card's write port never
      // stores such an entry; the block still answers it: the chunks, then a bounds error).
      if (chance(10)) e.length += 1 + rng() % 3000;
    } else {
      for (uint32_t k = 0; k < n; ++k) {
        const bool absent = e.type == SmtEntry::Type::kOnDemand && chance(25);
        pblw(k, {absent ? 0 : (1 + rng() % 100000) * 4096, 0});
      }
      e.length = uint64_t(n) * 4096 - e.first_page_offset - rng() % 100;
      e.phys_base = (1 + rng() % 100000) * 4096 + rng() % 4096;
    }
    smt.at(i) = e;
    w.push_back({true, i, e, {}});
    return w;
  }

  XlatRequest request() {
    const uint32_t n = uint32_t(smt.size());
    const uint32_t i = uint32_t(rng() % n);
    const SmtEntry& e = smt.at(i);
    XlatRequest r;
    r.stag =
        make_stag(chance(95) ? i : uint32_t(n + rng() % 4), chance(90) ? e.key : uint8_t(rng()));
    r.pd = chance(90) ? e.pd : uint32_t(rng() % 4);
    r.access = chance(80) ? uint8_t(e.access & rng()) : uint8_t(rng() % 16);
    const uint64_t len = e.length ? e.length : 1;
    const uint64_t off = rng() % len;
    r.to = chance(95) ? e.base_to + off : rng();
    r.len = chance(5) ? 0 : uint32_t(1 + rng() % (len - off + (chance(10) ? 100 : 0)));
    if (chance(3)) r.len = 0xFFFFFFFFu - uint32_t(rng() % 16);  // past the end, or wrapping
    return r;
  }

  // What the burst API gives for r against the tables as written so far.
  XlatResult expect(const XlatRequest& r) const { return RnicXlat(smt, pbl).translate(r); }

  bool chance(int pct) { return int(rng() % 100) < pct; }

  std::mt19937_64 rng;
  Smt smt;
  Pblmt pbl;

 private:
  uint32_t slots_;
};

}  // namespace rnic::tb
