// PCIe parameters (pcie.*): the link, its credits, the root complex's latencies and the card's PCIe
// I/F.
#pragma once

#include <cstdint>
#include <string>

#include "models/common/params.h"

namespace rnic {

struct PcieConfig {
  int64_t gen = 3;               // 1..5
  int64_t lanes = 8;             // 1, 2, 4, 8, 16
  int64_t mps = 256;             // B, max payload size
  int64_t mrrs = 512;            // B, max read request size
  int64_t rcb = 64;              // B, read completion boundary
  int64_t tags = 64;             // outstanding non-posted requests of the card's DMA
  int64_t link_latency_ns = 60;  // ns one way: PHY pipelines, retimers, wire (and for ExpEther
                                 // the Ethernet tunnel)
  int64_t ack_factor = 4;        // TLPs received per ACK DLLP
  int64_t ack_timer_ns = 200;    // ns before a partial batch is ACKed
  int64_t updatefc_factor = 8;   // TLPs consumed per UpdateFC DLLP
  int64_t updatefc_timer_ns = 200;
  int64_t rc_ph = 128;               // posted header credits the root complex advertises
  int64_t rc_pd = 2048;              // posted data credits (16 B each) the root complex advertises
  int64_t rc_nph = 64;               // non-posted header credits the root complex advertises
  int64_t card_ph = 32;              // posted header credits the card advertises
  int64_t card_pd = 128;             // posted data credits (16 B) the card advertises
  int64_t card_nph = 16;             // non-posted header credits the card advertises
  int64_t rc_read_latency_ns = 90;   // ns from an MRd's arrival to its first CplD (memory)
  int64_t rc_write_latency_ns = 40;  // ns from an MWr's arrival to its data in memory
  int64_t if_cycles = 2;             // core cycles through the card's PCIe I/F, each way
  int64_t cpl_timeout_us =
      50000;  // us, completion timeout of DMA reads (PCIe default range A, upper end)

  // Lists every field under "pcie." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("gen", gen, "", 1, 5, "PCIe generation (1-2: 8b/10b, 3-5: 128b/130b)");
    p.i("lanes", lanes, "lanes", 1, 16, "link width", {1, 2, 4, 8, 16});
    p.i("mps", mps, "B", 128, 4096, "max payload size", {128, 256, 512, 1024, 2048, 4096});
    p.i("mrrs", mrrs, "B", 128, 4096, "max read request size", {128, 256, 512, 1024, 2048, 4096});
    p.i("rcb", rcb, "B", 64, 128, "read completion boundary", {64, 128});
    p.i("tags", tags, "requests", 1, 1024, "outstanding non-posted requests of the card");
    p.i("link_latency_ns", link_latency_ns, "ns", 0, 100000,
        "one-way latency past serialization (PHY, wire, tunnels)");
    p.i("ack_factor", ack_factor, "TLPs", 1, 256, "TLPs received per ACK DLLP");
    p.i("ack_timer_ns", ack_timer_ns, "ns", 1, 100000, "ACK latency timer for a partial batch");
    p.i("updatefc_factor", updatefc_factor, "TLPs", 1, 256, "TLPs consumed per UpdateFC DLLP");
    p.i("updatefc_timer_ns", updatefc_timer_ns, "ns", 1, 100000,
        "UpdateFC timer for a partial batch");
    p.i("rc_ph", rc_ph, "credits", 1, 255, "posted header credits the root complex advertises");
    p.i("rc_pd", rc_pd, "credits", 1, 4095,
        "posted data credits (16 B) the root complex advertises");
    p.i("rc_nph", rc_nph, "credits", 1, 255,
        "non-posted header credits the root complex advertises");
    p.i("card_ph", card_ph, "credits", 1, 255, "posted header credits the card advertises");
    p.i("card_pd", card_pd, "credits", 1, 4095, "posted data credits (16 B) the card advertises");
    p.i("card_nph", card_nph, "credits", 1, 255, "non-posted header credits the card advertises");
    p.i("rc_read_latency_ns", rc_read_latency_ns, "ns", 0, 100000,
        "root complex: MRd arrival to first CplD (host memory latency)");
    p.i("rc_write_latency_ns", rc_write_latency_ns, "ns", 0, 100000,
        "root complex: MWr arrival to data in memory");
    p.i("if_cycles", if_cycles, "cycles", 0, 1000,
        "core cycles through the card's PCIe I/F, each way");
    p.i("cpl_timeout_us", cpl_timeout_us, "us", 1, 1000000, "completion timeout of DMA reads");
  }
};

// What the card's PCIe I/F is built from: the PCIe parameters, the core clock it runs at, and the
// register file's access times behind its BARs.
struct PcieIfParams {
  PcieConfig pcie;
  int64_t clk_mhz = 250;
  int64_t reg_read_cycles = 4;
  int64_t reg_write_cycles = 2;
};

}  // namespace rnic
