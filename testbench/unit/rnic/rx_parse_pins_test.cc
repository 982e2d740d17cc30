// ddp_rx_parse's burst API and its swap boundary (models/rnic/rx_parse/ddp_rx_parse_ports.h): the
// header result of every kind of segment (good tagged and untagged, Read Requests whole and cut
// short, every header fault, too short to parse) through the pins equals the burst API's, field for
// field; with back-to-back beats and ready outputs it is out at exactly the burst's cycle and
// each segment starts exactly when the burst model's RX engine would take the next; under
// valid/ready stalls the results and the payload bytes are the same. ddp_rx_parse_lockstep_test
// runs the Verilated block against the model.
#include <gtest/gtest.h>

#include <random>

#include "models/rnic/rx_parse/ddp_rx_parse_ports.h"
#include "testbench/common/ddp_segments.h"
#include "testbench/common/stream_checker.h"

namespace rnic {
namespace {

using rdmap::Opcode;
using tb::StreamChecker;

constexpr int kBytes = 16;  // the core's datapath
constexpr uint64_t kParse = 2;
static_assert(rx_parse_ports_match<RxParsePinModel<kBytes>, kBytes>(),
              "the pin model has the ddp_rx_parse port list");

TEST(DdpRxParse, ResultsOfTheBurstApi) {
  const DdpRxParse p(kParse, kBytes);
  // A good tagged Write: the header in one beat, the result after rx_parse_cycles.
  rdmap::Segment w;
  w.tagged = true;
  w.opcode = uint8_t(Opcode::kWrite);
  w.stag = 0x1234;
  w.to = 0xABCDEF;
  std::vector<uint8_t> d(14 + 100, 7);
  rdmap::encode(w, d.data());
  RxParseResult r = p.parse(d.data(), d.size());
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.h.stag, 0x1234u);
  EXPECT_EQ(r.h.to, 0xABCDEFu);
  EXPECT_EQ(r.payload_off, 14u);
  EXPECT_EQ(r.payload_len, 100u);
  EXPECT_EQ(r.cycles, kParse);
  EXPECT_EQ(p.stream_cycles(d.size()), 8u);
  // A Read Request: header and its 46 bytes span 3 beats, so the result comes after 3 cycles.
  rdmap::Segment q;
  q.opcode = uint8_t(Opcode::kReadRequest);
  q.qn = rdmap::kQnReadRequest;
  std::vector<uint8_t> rq(18 + 28);
  rdmap::encode(q, rq.data());
  rdmap::encode(rdmap::ReadRequest{1, 2, 3, 4, 5}, rq.data() + 18);
  r = p.parse(rq.data(), rq.size());
  EXPECT_TRUE(r.ok && r.rr_ok);
  EXPECT_EQ(r.rr.size, 3u);
  EXPECT_EQ(r.rr.src_to, 5u);
  EXPECT_EQ(r.cycles, 3u);
  // Cut short: the Read Request's payload missing; the header itself missing.
  r = p.parse(rq.data(), 30);
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.rr_ok);
  r = p.parse(rq.data(), 10);
  EXPECT_TRUE(r.dropped);
  // A bad RDMAP version: the Terminate cause of WIRE.md.
  q.rdmap_version = 0;
  rdmap::encode(q, rq.data());
  r = p.parse(rq.data(), rq.size());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.why, (rdmap::TermCause{rdmap::Layer::kRdmap, 2, 0x05}));
}

struct HeaderSeen {
  uint64_t edge;
  RxParseResult r;
};

class RxParseBench : public sc_core::sc_module {
 public:
  sc_core::sc_clock clk{"clk", 4, sc_core::SC_NS};
  RxParseSignals<kBytes> sig{"sig"};
  RxParsePinModel<kBytes> dut{"dut", kParse};

  RxParseBench(sc_core::sc_module_name n, uint64_t seed, int segments, int valid_pct, int ready_pct)
      : sc_core::sc_module(n), rng_(seed), valid_pct_(valid_pct), ready_pct_(ready_pct) {
    SC_HAS_PROCESS(RxParseBench);
    dut.clk(clk);
    sig.connect(dut);
    for (int i = 0; i < segments; ++i) segs.push_back(tb::random_ddp_segment(rng_));
    auto add = [&](const char* what, auto valid, auto ready, auto payload) {
      chk_.push_back(std::make_unique<StreamChecker>(what, valid, ready, payload));
      chk_.back()->clk(clk);
    };
    add(
        "chk_s", [this] { return sig.s_valid.read(); }, [this] { return sig.s_ready.read(); },
        [this] { return pin_str(sig.s_data.read()) + std::to_string(sig.s_len.read()); });
    add(
        "chk_h", [this] { return sig.h_valid.read(); }, [this] { return sig.h_ready.read(); },
        [this] {
          return fmt::format("{} {} {} {} {} {}", sig.h_ok.read(), sig.h_code.read(),
                             sig.h_opcode.read(), sig.h_to.read(), sig.h_msn.read(),
                             sig.h_rr_src_to.read());
        });
    add(
        "chk_p", [this] { return sig.p_valid.read(); }, [this] { return sig.p_ready.read(); },
        [this] { return pin_str(sig.p_data.read()) + std::to_string(sig.p_cnt.read()); });
    SC_THREAD(drive);
    SC_METHOD(monitor);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  std::vector<std::vector<uint8_t>> segs;
  std::vector<uint64_t> first_edge;  // edge each segment's first beat was taken
  std::vector<HeaderSeen> headers;
  std::vector<std::vector<uint8_t>> payloads;
  uint64_t input_stalls = 0;  // edges with s_valid high and s_ready low
  bool finished = false;
  int violations() const {
    int v = 0;
    for (const auto& c : chk_) v += c->violations();
    return v;
  }

 private:
  bool chance(int pct) { return int(rng_() % 100) < pct; }
  void tick() { wait(clk.posedge_event()); }

  void drive() {
    sig.rst.write(true);
    sig.s_valid.write(false);
    tick();
    tick();
    sig.rst.write(false);
    for (const auto& d : segs) {
      const size_t beats = d.empty() ? 1 : (d.size() + kBytes - 1) / kBytes;
      for (size_t k = 0; k < beats; ++k) {
        while (!chance(valid_pct_)) {
          sig.s_valid.write(false);
          tick();
        }
        pin_t<8 * kBytes> v{};
        const size_t n = std::min<size_t>(kBytes, d.size() - std::min(d.size(), k * kBytes));
        if (n) v = pack_beat<pin_t<8 * kBytes>>(&d[k * kBytes], n);
        for (size_t i = n; i < size_t(kBytes); ++i) set_pin_byte(v, int(i), 0xEE);  // junk
        sig.s_data.write(v);
        sig.s_last.write(k + 1 == beats);
        sig.s_cnt.write(unsigned(n));
        sig.s_len.write(uint32_t(d.size()));
        sig.s_valid.write(true);
        do tick();
        while (!sig.s_ready.read());
      }
    }
    sig.s_valid.write(false);
    while (headers.size() < segs.size() || !drained()) tick();
    for (int i = 0; i < 10; ++i) tick();
    finished = true;
    sc_core::sc_stop();
  }

  bool drained() const {
    size_t want = 0;
    for (const auto& h : headers)
      if (h.r.ok && h.r.payload_len) ++want;
    return payloads.size() == want && !open_payload_;
  }

  void monitor() {
    ++edge_;
    if (sig.s_valid.read() && !sig.s_ready.read()) ++input_stalls;
    if (sig.s_valid.read() && sig.s_ready.read()) {
      if (!in_seg_) first_edge.push_back(edge_);
      in_seg_ = !sig.s_last.read();
    }
    if (sig.h_valid.read() && sig.h_ready.read()) {
      RxParseResult r;
      r.dropped = sig.h_dropped.read();
      r.ok = sig.h_ok.read();
      r.why = {rdmap::Layer(sig.h_layer.read()), uint8_t(sig.h_etype.read()),
               uint8_t(sig.h_code.read())};
      r.h.tagged = sig.h_tagged.read();
      r.h.last = sig.h_last.read();
      r.h.opcode = uint8_t(sig.h_opcode.read());
      r.h.stag = sig.h_stag.read();
      r.h.to = sig.h_to.read();
      r.h.inv_stag = sig.h_inv_stag.read();
      r.h.qn = sig.h_qn.read();
      r.h.msn = sig.h_msn.read();
      r.h.mo = sig.h_mo.read();
      r.rr_ok = sig.h_rr_ok.read();
      r.rr = {sig.h_rr_sink_stag.read(), sig.h_rr_sink_to.read(), sig.h_rr_size.read(),
              sig.h_rr_src_stag.read(), sig.h_rr_src_to.read()};
      r.payload_len = sig.h_payload_len.read();
      headers.push_back({edge_, r});
    }
    if (sig.p_valid.read() && sig.p_ready.read()) {
      if (!open_payload_) payloads.emplace_back();
      const auto v = sig.p_data.read();
      unpack_beat(v, sig.p_cnt.read(), payloads.back());
      open_payload_ = !sig.p_last.read();
    }
    sig.h_ready.write(chance(ready_pct_));
    sig.p_ready.write(chance(ready_pct_));
  }

  std::mt19937_64 rng_;
  int valid_pct_, ready_pct_;
  uint64_t edge_ = 0;
  bool in_seg_ = false, open_payload_ = false;
  std::vector<std::unique_ptr<StreamChecker>> chk_;
};

void check(const RxParseBench& b, bool exact) {
  ASSERT_TRUE(b.finished);
  EXPECT_EQ(b.violations(), 0);
  ASSERT_EQ(b.headers.size(), b.segs.size());
  const DdpRxParse ref(kParse, kBytes);
  size_t pay = 0;
  int kinds[4] = {};  // ok, failed, dropped, Read Request cut short
  for (size_t i = 0; i < b.segs.size(); ++i) {
    const auto& d = b.segs[i];
    const RxParseResult want = ref.parse(d.data(), d.size());
    const RxParseResult& got = b.headers[i].r;
    ASSERT_EQ(got.dropped, want.dropped) << "segment " << i;
    ++kinds[want.dropped ? 2
            : want.ok    ? (want.rr_ok || Opcode(want.h.opcode) != Opcode::kReadRequest ? 0 : 3)
                         : 1];
    if (exact) {
      EXPECT_EQ(b.headers[i].edge, b.first_edge[i] + want.cycles + 1) << "segment " << i;
      if (i + 1 < b.segs.size()) {
        EXPECT_EQ(b.first_edge[i + 1],
                  b.first_edge[i] + std::max(want.cycles, ref.stream_cycles(d.size())))
            << "segment " << i + 1;
      }
    }
    if (want.dropped) continue;
    EXPECT_EQ(got.ok, want.ok) << "segment " << i;
    if (!want.ok) {
      EXPECT_EQ(got.why, want.why) << "segment " << i;
    }
    EXPECT_EQ(got.h.tagged, want.h.tagged);
    EXPECT_EQ(got.h.last, want.h.last);
    EXPECT_EQ(got.h.opcode, want.h.opcode & 0xF);
    if (want.h.tagged) {
      EXPECT_EQ(got.h.stag, want.h.stag);
      EXPECT_EQ(got.h.to, want.h.to);
    } else {
      EXPECT_EQ(got.h.inv_stag, want.h.inv_stag);
      EXPECT_EQ(got.h.qn, want.h.qn);
      EXPECT_EQ(got.h.msn, want.h.msn);
      EXPECT_EQ(got.h.mo, want.h.mo);
    }
    EXPECT_EQ(got.rr_ok, want.rr_ok) << "segment " << i;
    if (want.rr_ok) {
      EXPECT_EQ(got.rr.sink_stag, want.rr.sink_stag);
      EXPECT_EQ(got.rr.sink_to, want.rr.sink_to);
      EXPECT_EQ(got.rr.size, want.rr.size);
      EXPECT_EQ(got.rr.src_stag, want.rr.src_stag);
      EXPECT_EQ(got.rr.src_to, want.rr.src_to);
    }
    EXPECT_EQ(got.payload_len, want.payload_len);
    if (want.ok && want.payload_len) {
      ASSERT_LT(pay, b.payloads.size());
      const std::vector<uint8_t> bytes(d.begin() + want.payload_off, d.end());
      EXPECT_EQ(b.payloads[pay++], bytes) << "segment " << i;
    }
  }
  EXPECT_EQ(pay, b.payloads.size());
  for (int k : kinds) EXPECT_GT(k, 5) << "the stimulus reaches every outcome";
}

TEST(RxParsePins, BackToBackGivesTheBurstCycles) {
  RxParseBench b("bench", 3, 400, 100, 100);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  check(b, true);
  EXPECT_GT(b.input_stalls, 0u) << "short segments wait for the parse time";
}

TEST(RxParsePins, SameResultsUnderValidAndReadyStalls) {
  RxParseBench b("bench", 4, 400, 50, 30);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  check(b, false);
}

}  // namespace
}  // namespace rnic
