#include "models/pcie/tlp.h"

namespace rnic::pcie {

LinkRate LinkRate::of(int gen, int lanes) {
  static const uint64_t kMtPerS[] = {0, 2500, 5000, 8000, 16000, 32000};
  const bool gen12 = gen <= 2;
  const uint64_t enc_total = gen12 ? 10 : 130, enc_data = gen12 ? 8 : 128;
  // ps per lane byte = 8 bits * (1e6 / MT/s) ps * enc_total / enc_data
  LinkRate r;
  r.num = 8ull * 1000000ull * enc_total;
  r.den = kMtPerS[gen] * enc_data * uint64_t(lanes);
  return r;
}

double tlp_limit_gbps(int gen, int lanes, uint64_t max_payload, uint64_t bytes) {
  const uint64_t tlps = (bytes + max_payload - 1) / max_payload;
  const uint64_t wire = bytes + tlps * tlp_wire_bytes(0, 12, gen);
  return LinkRate::of(gen, lanes).gbps_raw() * double(bytes) / double(wire);
}

namespace {
constexpr size_t kPayloadsKept = 64;
std::vector<std::vector<uint8_t>>& payloads() {
  thread_local std::vector<std::vector<uint8_t>> p;
  return p;
}
}  // namespace

std::vector<uint8_t> take_payload(size_t bytes) {
  auto& p = payloads();
  std::vector<uint8_t> v;
  if (!p.empty()) {
    v = std::move(p.back());
    p.pop_back();
  }
  v.reserve(bytes);
  return v;
}

void give_payload(std::vector<uint8_t>&& v) {
  auto& p = payloads();
  if (v.capacity() == 0 || p.size() >= kPayloadsKept) return;
  v.clear();
  p.push_back(std::move(v));
}

}  // namespace rnic::pcie
