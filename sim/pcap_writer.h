// Per-link packet captures through libpcap (WIRE.md): DLT_EN10MB, nanosecond timestamps (the
// simulated time the frame's first bit left the sender), frames without preamble and, unless
// asked, without the FCS (with it, in wire byte order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct pcap;
struct pcap_dumper;

namespace rnic {

class PcapWriter {
 public:
  // Throws std::runtime_error if the file cannot be created.
  PcapWriter(const std::string& path, bool keep_fcs);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // frame: without FCS; fcs: its 4 bytes (written only when keep_fcs).
  void write(uint64_t time_ps, const uint8_t* frame, size_t len, const uint8_t* fcs = nullptr);
  uint64_t frames() const { return frames_; }
  // A failed write (a full device) stops the capture and, through output_errors.h, the run
  // (exit 1, naming the file).
  void flush();

 private:
  void check(bool failed = false);
  std::string path_;
  bool failed_ = false;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  bool keep_fcs_;
  uint64_t frames_ = 0;
  std::vector<uint8_t> buf_;
};

}  // namespace rnic
