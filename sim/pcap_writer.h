// Per-link packet captures through libpcap (WIRE.md): DLT_EN10MB, nanosecond timestamps (the
// simulated time the frame's first bit left the sender), frames without preamble and, unless
// asked, without the FCS (with it, in wire byte order). Frames of one time are written in the
// order of their `order` key (a link's sending end), not in the order their senders ran.
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

  // frame: without FCS; fcs: its 4 bytes (written only when keep_fcs). Kept until a later time
  // is written (or the writer closes), then written with the others of its time by `order`.
  void write(uint64_t time_ps, const uint8_t* frame, size_t len, const uint8_t* fcs = nullptr,
             int order = 0);
  uint64_t frames() const { return frames_ + held_.size(); }
  // A failed write (a full device) stops the capture and, through output_errors.h, the run
  // (exit 1, naming the file).
  void flush();

 private:
  struct Held {
    int order;
    std::vector<uint8_t> bytes;  // the frame, and the FCS when kept
  };
  void dump(const Held& h);
  void release();  // writes the frames held, by order
  void check(bool failed = false);
  std::string path_;
  bool failed_ = false;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  bool keep_fcs_;
  uint64_t frames_ = 0;
  uint64_t held_ps_ = 0;
  std::vector<Held> held_;  // frames of time held_ps_ not yet written
};

}  // namespace rnic
