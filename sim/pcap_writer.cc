#include "sim/pcap_writer.h"

#include <pcap/pcap.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "sim/output_errors.h"

namespace rnic {

PcapWriter::PcapWriter(const std::string& path, bool keep_fcs) : path_(path), keep_fcs_(keep_fcs) {
  pcap_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
  if (!pcap_) throw std::runtime_error("pcap: cannot open a capture handle");
  dumper_ = pcap_dump_open(pcap_, path.c_str());
  if (!dumper_) {
    const std::string err = pcap_geterr(pcap_);
    pcap_close(pcap_);
    throw std::runtime_error("pcap: cannot create " + path + ": " + err);
  }
}

PcapWriter::~PcapWriter() {
  if (dumper_) pcap_dump_close(dumper_);
  if (pcap_) pcap_close(pcap_);
}

void PcapWriter::write(uint64_t time_ps, const uint8_t* frame, size_t len, const uint8_t* fcs) {
  const uint64_t ns = time_ps / 1000;
  pcap_pkthdr h{};
  h.ts.tv_sec = time_t(ns / 1000000000ull);
  h.ts.tv_usec = suseconds_t(ns % 1000000000ull);  // nanoseconds with PCAP_TSTAMP_PRECISION_NANO
  const u_char* data = frame;
  size_t n = len;
  if (keep_fcs_ && fcs) {
    buf_.assign(frame, frame + len);
    buf_.insert(buf_.end(), fcs, fcs + 4);
    data = buf_.data();
    n = buf_.size();
  }
  h.caplen = h.len = bpf_u_int32(n);
  if (failed_) return;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, data);
  ++frames_;
  check();
}

void PcapWriter::flush() {
  if (!failed_ && pcap_dump_flush(dumper_) != 0) check(true);
}

// A write that failed (a full device, a quota): the capture stops and the run with it.
void PcapWriter::check(bool failed) {
  if (!failed && !std::ferror(pcap_dump_file(dumper_))) return;
  failed_ = true;
  output_errors::failed(path_, errno ? std::strerror(errno) : "write error");
}

}  // namespace rnic
