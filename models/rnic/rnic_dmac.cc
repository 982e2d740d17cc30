#include "models/rnic/rnic_dmac.h"

#include <algorithm>

namespace rnic {

const char* to_string(DmacStatus s) {
  switch (s) {
    case DmacStatus::kOk:
      return "ok";
    case DmacStatus::kUnsupported:
      return "unsupported request";
    case DmacStatus::kAbort:
      return "completer abort";
    case DmacStatus::kTimeout:
      return "completion timeout";
  }
  return "?";
}

namespace {
constexpr uint16_t kTagSpace = 1024;  // 10-bit tags
}

std::vector<DmacSpan> dmac_split(uint64_t addr, uint64_t len, uint64_t max_payload, bool read) {
  std::vector<DmacSpan> v;
  for (uint64_t a = addr, end = addr + len; a < end;) {
    const uint64_t stop = std::min({end, a + max_payload, (a / 4096 + 1) * 4096});
    v.push_back({a, uint32_t(stop - a)});
    a = stop;
  }
  if (len == 0 && read) v.push_back({addr, 0});
  return v;
}

uint64_t DmacLogic::read(uint64_t addr, uint32_t len) {
  const uint64_t id = next_id_++;
  const std::vector<DmacSpan> pieces = dmac_split(addr, len, mrrs_, true);
  reads_[id] = Read{addr, len, uint32_t(pieces.size()), DmacStatus::kOk, std::vector<uint8_t>(len)};
  for (const DmacSpan& p : pieces) waiting_.push_back({id, p.addr, p.len});
  return id;
}

std::vector<DmacLogic::Mrd> DmacLogic::issue(uint64_t now) {
  std::vector<Mrd> v;
  while (!waiting_.empty() && int(out_.size()) < tags_) {
    const Piece p = waiting_.front();
    waiting_.pop_front();
    while (out_.count(next_tag_)) next_tag_ = uint16_t((next_tag_ + 1) % kTagSpace);
    const uint16_t tag = next_tag_;
    next_tag_ = uint16_t((next_tag_ + 1) % kTagSpace);
    out_[tag] = p;
    out_[tag].issued = now;
    if (p.len == 0) {
      complete(tag, DmacStatus::kOk);
      continue;
    }
    order_.push_back({now, tag});
    v.push_back({p.addr, p.len, tag});
  }
  return v;
}

bool DmacLogic::oldest_issue(uint64_t* t) {
  auto live = [this](const std::pair<uint64_t, uint16_t>& e) {
    auto it = out_.find(e.second);
    return it != out_.end() && it->second.issued == e.first;
  };
  while (!order_.empty() && !live(order_.front())) order_.pop_front();
  if (order_.empty()) return false;
  *t = order_.front().first;
  return true;
}

std::vector<uint16_t> DmacLogic::expire_issued_by(uint64_t t) {
  std::vector<uint16_t> v;
  uint64_t first;
  while (oldest_issue(&first) && first <= t) {
    const uint16_t tag = order_.front().second;
    order_.pop_front();
    complete(tag, DmacStatus::kTimeout);
    v.push_back(tag);
  }
  return v;
}

bool DmacLogic::completion(uint16_t tag, DmacStatus st, uint32_t byte_count, const uint8_t* data,
                           uint32_t len) {
  auto it = out_.find(tag);
  if (it == out_.end()) return false;
  const Piece& p = it->second;
  if (st != DmacStatus::kOk) {
    complete(tag, st);
    return true;
  }
  Read& r = reads_.at(p.read);
  // This completion's bytes start byte_count bytes before the piece's end.
  const uint64_t off = (p.addr - r.addr) + (p.len - std::min(byte_count, p.len));
  const uint32_t n =
      uint32_t(std::min<uint64_t>(len, r.data.size() - std::min<uint64_t>(off, r.data.size())));
  std::copy(data, data + n, r.data.begin() + int64_t(off));
  if (byte_count == len) complete(tag, DmacStatus::kOk);
  return true;
}

void DmacLogic::expire(uint16_t tag) {
  if (out_.count(tag)) complete(tag, DmacStatus::kTimeout);
}

void DmacLogic::complete(uint16_t tag, DmacStatus st) {
  auto it = out_.find(tag);
  const uint64_t id = it->second.read;
  out_.erase(it);
  Read& r = reads_.at(id);
  if (st != DmacStatus::kOk && r.status == DmacStatus::kOk) r.status = st;
  if (--r.pieces_left) return;
  if (r.status != DmacStatus::kOk) r.data.clear();
  finished_.push_back({id, r.status, std::move(r.data)});
  reads_.erase(id);
}

std::vector<DmacLogic::Finished> DmacLogic::take_finished() {
  std::vector<Finished> v;
  v.swap(finished_);
  return v;
}

}  // namespace rnic
