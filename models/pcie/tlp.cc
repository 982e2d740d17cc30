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

}  // namespace rnic::pcie
