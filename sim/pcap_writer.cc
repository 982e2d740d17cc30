#include "sim/pcap_writer.h"

#include <pcap/pcap.h>

#include <algorithm>
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
  release();
  if (dumper_) pcap_dump_close(dumper_);
  if (pcap_) pcap_close(pcap_);
}

void PcapWriter::write(uint64_t time_ps, const uint8_t* frame, size_t len, const uint8_t* fcs,
                       int order) {
  if (!held_.empty() && time_ps != held_ps_) release();
  held_ps_ = time_ps;
  Held h{order, std::vector<uint8_t>(frame, frame + len)};
  if (keep_fcs_ && fcs) h.bytes.insert(h.bytes.end(), fcs, fcs + 4);
  held_.push_back(std::move(h));
}

void PcapWriter::release() {
  std::stable_sort(held_.begin(), held_.end(),
                   [](const Held& a, const Held& b) { return a.order < b.order; });
  for (const Held& h : held_) dump(h);
  held_.clear();
}

void PcapWriter::dump(const Held& held) {
  if (failed_) return;
  const uint64_t ns = held_ps_ / 1000;
  pcap_pkthdr h{};
  h.ts.tv_sec = time_t(ns / 1000000000ull);
  h.ts.tv_usec = suseconds_t(ns % 1000000000ull);  // nanoseconds with PCAP_TSTAMP_PRECISION_NANO
  h.caplen = h.len = bpf_u_int32(held.bytes.size());
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, held.bytes.data());
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
