// `--pcap`: each Ethernet link's frames, both directions, into OUT/<link>.pcap (WIRE.md: the
// time a frame's first bit left its sender, in ns; the frame without preamble; the FCS only
// with outputs.pcap_fcs, in wire byte order). Frames of one time: the link's end 0's first.
#pragma once

#include <memory>
#include <string>

#include "models/eth/eth_link.h"
#include "sim/pcap_writer.h"

namespace rnic {

// Taps the link; the returned writer must outlive the simulation of the link.
std::unique_ptr<PcapWriter> capture_link(eth::EthLink& link, const std::string& path,
                                         bool keep_fcs);

}  // namespace rnic
