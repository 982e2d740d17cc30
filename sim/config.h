// Typed configuration of a whole system (DESIGN.md §6). Every parameter has a dotted key, a type,
// a default (the rnic-10g preset), a unit, a range and a one-line description. Block configs are
// plain structs; SystemConfig::params() lists every field with a pointer to it, and everything
// else (presets, scenario overrides, --set, printing, stats.json) goes through that one list.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rnic {

// Rejected input: where (file and line, or the option), which key, and why. Exit code 2.
struct InputError : std::runtime_error {
  InputError(std::string where, std::string key, std::string reason)
      : std::runtime_error(where + ": key '" + key + "': " + reason),
        where(std::move(where)),
        key(std::move(key)),
        reason(std::move(reason)) {}
  std::string where, key, reason;
};

struct CoreConfig {
  int64_t clk_mhz = 250;            // MHz, core_clk
  int64_t datapath_bytes = 16;      // B per core_clk beat
  int64_t reg_read_cycles = 4;      // core cycles from a BAR read TLP's arrival to its CplD
  int64_t reg_write_cycles = 2;     // core cycles to apply a BAR write
  int64_t qps = 1024;               // QPs (BAR2 pages)
  int64_t cqs = 1024;               // CQs
  int64_t stags = 65536;            // SMT entries
  int64_t pbl_entries = 1 << 20;    // PBLMT entries
  int64_t max_qp_wr = 512;          // WQEs each on-chip SQ and RQ holds
  int64_t max_cqe = 65536;          // CQEs a CQ ring may have
  int64_t ird = 16;                 // inbound RDMA Reads a QP may have outstanding (max)
  int64_t ord = 16;                 // outbound RDMA Reads a QP may have outstanding (max)
  int64_t tx_buffer_bytes = 65536;  // B of segments the SQ engine may have fetched, not sent
  int64_t sched_cycles = 2;         // cycles the SQ engine spends per segment it issues
  int64_t rx_parse_cycles = 2;      // cycles from a segment's arrival to its header checked
  int64_t cqe_cycles = 2;           // cycles to form a CQE before its DMA write
  int64_t cmd_cycles = 200;         // cycles the command processor spends per mailbox command
};

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
};

struct HostConfig {
  int64_t mem_mib = 16384;            // MiB of physical memory
  std::string hole_behaviour = "ur";  // "ur" | "timeout": DMA reads of a hole
  std::string wqe_mode = "mmio";      // "mmio": WQEs written into the card's windows;
                                      // "ring": host-memory rings fetched by DMA
  int64_t hole_base_mib = 3072;       // MiB, device-reserved window start (below 4 GiB)
  int64_t hole_mib = 1024;            // MiB, its size (0 = none)
  double malloc_scatter = 0.5;        // probability that the next page of a buffer is not
                                      // physically adjacent to the previous one
  int64_t malloc_max_gap = 64;        // pages, largest jump between two scattered pages
};

// CPU/OS costs (host software is not cycle-accurate: it spends these).
struct CostConfig {
  int64_t syscall_entry_ns = 120;
  int64_t syscall_exit_ns = 100;
  int64_t ioctl_dispatch_ns = 400;   // driver ioctl: fd lookup, argument copy-in, command decode
  int64_t walk_step_ns = 25;         // one page-table entry read by the kernel walker
  int64_t copy_line_ns = 35;         // copy_to_user / copy_from_user per 64 B line
  int64_t mlock_page_ns = 32;        // pin one page (refcount, LRU isolation)
  int64_t interrupt_entry_ns = 900;  // MSI-X to the handler's first instruction
  int64_t mmio_issue_ns = 45;        // core -> uncore -> root complex for an MMIO access
  int64_t mmio_return_ns = 25;       // CplD at the root complex -> the load retires
  int64_t wqe_build_ns = 10;         // the verbs library forms one WQE
  int64_t cq_poll_ns = 10;           // the verbs library reads one CQE slot (cache line)
};

struct MacConfig {
  int64_t rate_gbps = 10;      // Gb/s: 1, 10, 25, 40, 100
  int64_t mtu = 1500;          // B
  int64_t tx_cycles = 2;       // core cycles from a frame's last beat into the MAC to its first bit
  int64_t rx_cycles = 2;       // core cycles from the FCS check to the frame at the upper layer
  int64_t tx_fifo_frames = 8;  // frames the MAC's transmit FIFO holds (full: back-pressure)
};

struct LinkConfig {
  int64_t prop_ns = 5;  // ns, propagation (about 1 m of cable or fibre)
};

struct SimConfig {
  int64_t seed = 1;
  int64_t stats_interval_ns = 0;  // ns between time-series samples; 0 = none
  int64_t watchdog_us = 100000;   // us of simulated time with work outstanding and no progress
                                  // (above every timeout a block may legitimately wait out)
};

enum class ParamKind { kInt, kReal, kBool, kString };

struct ParamInfo {
  std::string key;
  ParamKind kind;
  void* ptr;
  std::string unit;
  std::string desc;
  double lo = 0, hi = 0;             // range for numbers
  std::vector<std::string> choices;  // for strings; empty = free text
  std::vector<int64_t> allowed;      // for ints; empty = any in range
};

struct SystemConfig {
  CoreConfig core;
  PcieConfig pcie;
  HostConfig host;
  CostConfig cost;
  MacConfig mac;
  LinkConfig link;
  SimConfig sim;

  std::vector<ParamInfo> params();
  // Sets one parameter from text; throws InputError(where, key, reason).
  void set(const std::string& key, const std::string& value, const std::string& where);
  // The value of a parameter as text.
  std::string get(const std::string& key);
  // Cross-parameter checks (for example MPS <= MRRS is not required, but the datapath width
  // must carry the line rate); throws InputError.
  void check(const std::string& where);
};

struct Preset {
  std::string name;
  std::string summary;
  void (*apply)(SystemConfig&);
};
const std::vector<Preset>& presets();
// Throws InputError(where, "preset", ...) for an unknown name.
SystemConfig preset_config(const std::string& name, const std::string& where);

}  // namespace rnic
