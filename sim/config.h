// Typed configuration of a whole system (DESIGN.md §6). Every parameter has a dotted key, a type,
// a default (the rnic-10g preset), a unit, a range and a one-line description. Each block owns
// its parameter struct beside it (models/*/..._params.h) and lists its fields itself;
// SystemConfig gathers them, and everything else (presets, scenario overrides, --set, printing,
// stats.json) goes through SystemConfig::params(). Blocks receive their own structs only.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/params.h"
#include "models/efe/efe_params.h"
#include "models/eth/eth_params.h"
#include "models/host/host_params.h"
#include "models/pcie/pcie_params.h"
#include "models/rnic/card_params.h"

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

struct SimConfig {
  int64_t seed = 1;
  int64_t stats_interval_ns = 0;    // ns between time-series samples; 0 = none
  int64_t watchdog_us = 100000;     // us of simulated time with work outstanding and no progress
                                    // (above every timeout a block may legitimately wait out)
  double spin_guard_s = 10;         // s of wall time with simulated time standing still (0: off)
  int64_t exec_quantum_ns = 10000;  // an executable's busy poll of an empty CQ waits this long
                                    // at most in one call (sim/exec/exec_process.h)
  int64_t decoy_ns = 0;  // a check: a process that wakes this often, doing nothing (0: none)
};

struct SystemConfig {
  CoreConfig core;
  FirmwareConfig firmware;
  PcieConfig pcie;
  HostConfig host;
  CostConfig cost;
  EfeConfig efe;
  MacConfig mac;
  std::string transport = "efe";  // card.transport
  TcpConfig tcp;
  LinkConfig link;
  SwitchConfig sw;
  SimConfig sim;

  std::vector<ParamInfo> params();
  // Sets one parameter from text; throws InputError(where, key, reason).
  void set(const std::string& key, const std::string& value, const std::string& where);
  // The value of a parameter as text.
  std::string get(const std::string& key);
  // What each block is built from, gathered from the sections above.
  CardConfig card() const { return {core, firmware, pcie, efe, mac, transport, tcp}; }
  LinkParams eth_link() const {
    LinkParams l;
    l.rate_gbps = mac.rate_gbps;
    l.prop_ns = link.prop_ns;
    l.loss = link.loss;
    l.ber = link.ber;
    return l;
  }
  // Cross-parameter checks (for example MPS <= MRRS is not required, but the datapath width
  // must carry the line rate); throws InputError.
  void check(const std::string& where);
  // The keys that must agree in pairs (memory and its hole and free share, congestion-control
  // marks and fractions, PAUSE and ECN thresholds against the buffer); check() makes these too.
  void check_pairs(const std::string& where) const;
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
