#include "models/rnic/xlat/rnic_xlat.h"

#include <algorithm>

namespace rnic {

const char* to_string(XlatStatus s) {
  switch (s) {
    case XlatStatus::kOk:
      return "ok";
    case XlatStatus::kInvalidStag:
      return "invalid STag";
    case XlatStatus::kPdMismatch:
      return "STag of another protection domain";
    case XlatStatus::kAccess:
      return "access rights violation";
    case XlatStatus::kToWrap:
      return "tagged offset wraps";
    case XlatStatus::kBounds:
      return "base or bounds violation";
    case XlatStatus::kPageFault:
      return "page not present";
  }
  return "?";
}

XlatResult RnicXlat::translate(const XlatRequest& r) const {
  XlatResult out;
  out.cycles = t_.smt_cycles;
  auto fail = [&](XlatStatus s) {
    out.status = s;
    out.chunks.clear();
    return out;
  };
  const SmtEntry* e = smt_.find(stag_index(r.stag));
  if (!e || e->state != SmtEntry::State::kValid || e->key != stag_key(r.stag))
    return fail(XlatStatus::kInvalidStag);
  if (e->pd != r.pd) return fail(XlatStatus::kPdMismatch);
  if ((e->access & r.access) != r.access) return fail(XlatStatus::kAccess);
  if (r.to + r.len < r.to) return fail(XlatStatus::kToWrap);
  if (r.to < e->base_to || r.to + r.len > e->base_to + e->length) return fail(XlatStatus::kBounds);
  if (r.len == 0) return out;
  uint64_t off = r.to - e->base_to;  // offset into the region
  uint64_t left = r.len;
  out.cycles += t_.pbl_cycles;
  switch (e->type) {
    case SmtEntry::Type::kPhysical:
      out.cycles += 1;
      out.chunks.push_back({e->phys_base + off, uint32_t(left), out.cycles});
      return out;
    case SmtEntry::Type::kMemoryRegion:
    case SmtEntry::Type::kOnDemand: {
      const uint64_t page = 1ull << e->page_shift;
      uint64_t in_list = off + e->first_page_offset;  // offset from the first page's start
      out.chunks.reserve(((in_list + left - 1) >> e->page_shift) - (in_list >> e->page_shift) + 1);
      while (left) {
        const uint64_t idx = in_list >> e->page_shift, in_page = in_list & (page - 1);
        const uint64_t n = std::min(left, page - in_page);
        const uint64_t pa = pblmt_.at(uint32_t(e->pbl_first + idx)).addr;
        out.cycles += 1;
        if (pa == 0) {  // the chunks before the absent page stay in the result
          out.fault_to = e->base_to + (idx << e->page_shift) - e->first_page_offset;
          if (out.fault_to < r.to) out.fault_to = r.to;
          out.status = XlatStatus::kPageFault;
          return out;
        }
        out.chunks.push_back({pa + in_page, uint32_t(n), out.cycles});
        in_list += n;
        left -= n;
      }
      return out;
    }
    case SmtEntry::Type::kSgHandle: {
      // Scan from the first extent to the one holding `off`, one cycle per extent passed over,
      // then walk extents.
      uint32_t i = e->pbl_first;
      const uint32_t end = e->pbl_first + e->pbl_count;
      uint64_t start = 0;
      while (i < end && start + pblmt_.at(i).len <= off) {
        start += pblmt_.at(i++).len;
        out.cycles += 1;
      }
      bool first = true;
      while (left) {
        if (!first) out.cycles += t_.extent_switch_cycles;
        out.cycles += 1;
        if (i == end) {  // extents shorter than the entry's length: the chunks before stay
          out.status = XlatStatus::kBounds;
          return out;
        }
        const PblEntry& x = pblmt_.at(i);
        const uint64_t in_ext = off - start, n = std::min(left, x.len - in_ext);
        out.chunks.push_back({x.addr + in_ext, uint32_t(n), out.cycles});
        off += n;
        left -= n;
        start += x.len;
        ++i;
        first = false;
      }
      return out;
    }
  }
  return out;
}

bool XlatBlock::write_smt(uint32_t index, const SmtEntry& e) {
  if (index >= smt_.size() || uint64_t(e.pbl_first) + e.pbl_count > pbl_.size()) return false;
  smt_.at(index) = e;
  return true;
}

bool XlatBlock::invalidate(uint32_t stag, const uint32_t* pd) {
  const SmtEntry* e = smt_.find(stag_index(stag));
  if (!e || e->state != SmtEntry::State::kValid || e->key != stag_key(stag) || (pd && e->pd != *pd))
    return false;
  smt_.at(stag_index(stag)).state = SmtEntry::State::kInvalid;
  return true;
}

bool XlatBlock::free(uint32_t index) {
  if (index >= smt_.size()) return false;
  smt_.at(index).state = SmtEntry::State::kFree;
  return true;
}

bool XlatBlock::write_pbl(uint32_t first, const std::vector<PblEntry>& entries) {
  if (uint64_t(first) + entries.size() > pbl_.size()) return false;
  for (size_t i = 0; i < entries.size(); ++i) pbl_.at(uint32_t(first + i)) = entries[i];
  return true;
}

}  // namespace rnic
