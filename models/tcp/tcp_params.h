// The TCP offload engine's parameters (tcp.*), used when card.transport is mpa_tcp: the
// datacenter values of its timers, its windows and buffers, and ECN's reaction
// (docs/transport.md says why each default is what it is).
#pragma once

#include <cstdint>

#include "models/common/params.h"
#include "models/tcp/tcp_connection.h"

namespace rnic {
namespace tcp {

// What the offload engine (toe.h) is built from.
struct ToeParams {
  TcpConnConfig conn;
  uint32_t tx_buffer_bytes = 256 << 10;   // FPDU bytes per stream not yet acknowledged
  int64_t clk_mhz = 250;                  // core_clk
  uint32_t tx_cycles = 0, rx_cycles = 0;  // a segment's latency through the engine
  int64_t line_gbps = 10;                 // the port's rate (how far ahead the engine makes frames)
};

}  // namespace tcp

struct TcpConfig {
  int64_t rto_min_us = 200;             // RFC 6298 asks 1 s; datacenters run hundreds of us
  int64_t rto_initial_us = 1000;        // before the first RTT sample
  int64_t rto_max_us = 100000;          // the doubled timer's cap
  int64_t retry_budget_ms = 500;        // expiries without progress this long: the connection fails
  int64_t delayed_ack_us = 40;          // a receiver's delayed-ACK time
  int64_t init_segments = 10;           // RFC 6928
  int64_t rcv_buffer_bytes = 4 << 20;   // what a receiver keeps out of order (its window)
  int64_t tx_buffer_bytes = 256 << 10;  // FPDU bytes per connection sent and not acknowledged
  int64_t tx_cycles = 88;               // core_clk cycles: docs/transport.md "Per-segment costs"
  int64_t rx_cycles = 88;
  int64_t wscale = 7;
  bool sack = true;
  bool timestamps = true;
  bool dctcp = false;
  double dctcp_g = 1.0 / 16;

  void describe(ParamList& p) {
    p.i("rto_min_us", rto_min_us, "us", 1, 1e7,
        "the retransmission timer's floor (RFC 6298 asks 1 s; a datacenter value by default)");
    p.i("rto_initial_us", rto_initial_us, "us", 1, 1e8,
        "the retransmission timer before the first round-trip sample (and a lost SYN's)");
    p.i("rto_max_us", rto_max_us, "us", 1, 1e9, "the cap of the doubled retransmission timer");
    p.i("retry_budget_ms", retry_budget_ms, "ms", 1, 1e6,
        "a connection fails at the first expiry this long after the first expiry without "
        "progress (its QPs end in ERROR)");
    p.i("delayed_ack_us", delayed_ack_us, "us", 0, 1e6,
        "a receiver acknowledges at every second full segment, else after this long");
    p.i("init_segments", init_segments, "segments", 1, 1000, "the initial window (RFC 6928)");
    p.i("rcv_buffer_bytes", rcv_buffer_bytes, "B", 65536, 1 << 30,
        "the receive buffer per connection: the window it advertises");
    p.i("tx_buffer_bytes", tx_buffer_bytes, "B", 9000, 1 << 30,
        "FPDU bytes per connection sent and not yet acknowledged (full: the SQ engine waits "
        "for that QP)");
    p.i("tx_cycles", tx_cycles, "cycles", 0, 1e6,
        "a segment's latency through the offload engine on its way out (core_clk cycles; the "
        "default puts write_lat at a published iWARP card's: docs/transport.md)");
    p.i("rx_cycles", rx_cycles, "cycles", 0, 1e6,
        "a segment's latency through the offload engine on its way in (core_clk cycles)");
    p.i("wscale", wscale, "", 0, 14, "the window scale this end offers (RFC 7323)");
    p.b("sack", sack, "offer SACK (RFC 2018; used when both ends offer it)");
    p.b("timestamps", timestamps,
        "offer timestamps (RFC 7323; used when both ends offer them: 12 bytes a segment)");
    p.b("dctcp", dctcp,
        "react to ECN marks as DCTCP does (RFC 8257) rather than halve the window (RFC 3168)");
    p.r("dctcp_g", dctcp_g, "", 0.0001, 1, "DCTCP's gain for its estimate of marked bytes");
  }

  // The engine on a card of this core clock, MTU and IRD/ORD.
  tcp::ToeParams toe(int64_t clk_mhz, int64_t mtu, int64_t ird, int64_t ord,
                     int64_t line_gbps) const {
    tcp::ToeParams t;
    t.line_gbps = line_gbps;
    t.conn = connection(mtu);
    t.conn.ird = uint16_t(ird);
    t.conn.ord = uint16_t(ord);
    t.tx_buffer_bytes = uint32_t(tx_buffer_bytes);
    t.clk_mhz = clk_mhz;
    t.tx_cycles = uint32_t(tx_cycles);
    t.rx_cycles = uint32_t(rx_cycles);
    return t;
  }
  // One connection's settings on a port of this MTU.
  tcp::TcpConnConfig connection(int64_t mtu) const {
    tcp::TcpConnConfig c;
    c.mss = uint16_t(mtu - 40);
    c.wscale = uint8_t(wscale);
    c.timestamps = timestamps;
    c.sack = sack;
    c.logic.mss = uint32_t(c.mss - (timestamps ? 12 : 0));
    c.logic.init_segments = uint32_t(init_segments);
    c.logic.rto_min_ps = uint64_t(rto_min_us) * 1'000'000;
    c.logic.rto_initial_ps = uint64_t(rto_initial_us) * 1'000'000;
    c.logic.rto_max_ps = uint64_t(rto_max_us) * 1'000'000;
    c.logic.retry_budget_ps = uint64_t(retry_budget_ms) * 1'000'000'000;
    c.logic.sack = sack;
    c.logic.dctcp = dctcp;
    c.logic.dctcp_g = dctcp_g;
    c.logic.delack_ps = uint64_t(delayed_ack_us) * 1'000'000;
    c.logic.rcv_buffer = uint32_t(rcv_buffer_bytes);
    return c;
  }
};

}  // namespace rnic
