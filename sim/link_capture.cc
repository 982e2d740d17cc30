#include "sim/link_capture.h"

namespace rnic {

std::unique_ptr<PcapWriter> capture_link(eth::EthLink& link, const std::string& path,
                                         bool keep_fcs) {
  auto w = std::make_unique<PcapWriter>(path, keep_fcs);
  PcapWriter* p = w.get();
  // Frames of one time from the two ends: end 0's first, whichever sender ran first.
  link.add_wire_tap([p](uint64_t t_ps, const eth::EthLink::Frame& f, const uint8_t* fcs, int end) {
    p->write(t_ps, f.data(), f.size(), fcs, end);
  });
  return w;
}

}  // namespace rnic
