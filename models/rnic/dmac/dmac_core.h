// rnic_dmac's cycle contract (DESIGN.md §4): the pins of one clock edge in, the registered
// outputs after it, for the C++ model here and the RTL (rtl/rnic/rnic_dmac.sv) alike. The card's
// DMA service (dmac.h) drives whichever core a run chose through this face; the SystemC pin face
// (rnic_dmac_ports.h) wraps the model for the lockstep bench.
//
// What the block does, per edge (every decision reads the state before the edge):
//   Reads. rq (addr, len, id) is accepted while fewer than kReads reads are in the block (live
//   or finished and not yet taken). It joins the issue queue. The queue's head read is cut into
//   pieces at MRRS and at 4 KiB boundaries; each piece takes a tag (the free list's head, at most
//   cfg_tags in use; the list holds 0..cfg_tags-1 in order after reset and freed tags join its
//   tail) and goes out as one MRd beat. Completions (cp, header on the first beat) for a tag in
//   use put their bytes at offset piece_off + piece_len - min(byte_count, piece_len) of the read,
//   on rw (no ready: the engine side's buffer always takes it) in the cycle after each beat; a
//   completion's last beat completes its piece when byte_count == its length and fails it when
//   its status is not OK; completions for tags not in use are taken and dropped. A read finishes
//   when its last piece is done; its (id, status) joins the done queue (rd), status the first
//   failure's. A 0-byte read finishes when it reaches the issue queue's head.
//   At most one piece event per edge: a completion's last beat first, else the oldest piece
//   that has waited cfg_timeout cycles (kTimeout; not the tag of a completion being
//   taken), else a 0-byte read at the head.
//   Writes. wq (addr, len) is accepted while fewer than kWriteQueue writes wait; its bytes come
//   on wd, each write starting on a new beat (the last one partial), any time before they are
//   needed, while the data buffer (wbuf_beats) has room. A write is cut at MPS and at 4 KiB into
//   MWrs; an MWr starts only when all its bytes are in the buffer, then sends one beat per cycle.
//   TX. One beat per cycle on tx: an MWr's beats back to back; between TLPs, the MWr that is
//   ready and the MRd that can take a tag alternate (round robin), either alone goes.
//   Time. A timer advances 1 + skip per edge: `skip` is how many cycles passed without an edge
//   before this one (a sleeping block told on wake). tmo_wait says how many cycles from now the
//   oldest piece reaches its timeout (0: none in flight) and busy whether the next edge changes
//   anything without input (also after a reset edge: the next one raises the readies), so a driver
//   can stop the clock until input, busy or the deadline.
//
// Latency: a read's MRd leaves the cycle after its acceptance at the earliest (the issue queue's
// head, a tag and TX free); a completion's bytes are on rw the cycle after each beat; a read's
// done is on rd the cycle after its finishing edge. A write's first MWr starts the cycle after its
// last needed data beat at the earliest. Queues: kReads reads, kWriteQueue writes, wbuf_beats data
// beats, cfg_tags tags (at most the core's max_tags), kReads done entries.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "models/common/ring.h"
#include "models/common/trace_sink.h"
#include "models/rnic/dmac/rnic_dmac.h"

namespace rnic {

constexpr int kDmacMaxBytes = 64;
using DmacBeat = std::array<uint8_t, kDmacMaxBytes>;

struct DmacIn {
  uint64_t t_ps = 0;  // not a pin: the edge's simulated time, for recorders
  bool rst = false;
  uint32_t skip = 0;
  // cfg_*: static while the block is out of reset (a change takes a reset).
  uint32_t cfg_mrrs = 512, cfg_mps = 256, cfg_tags = 64, cfg_timeout = 0xFFFFFFFF;
  bool rq_valid = false;
  uint64_t rq_addr = 0;
  uint32_t rq_len = 0;
  uint8_t rq_id = 0;
  bool rd_ready = false;
  bool wq_valid = false;
  uint64_t wq_addr = 0;
  uint32_t wq_len = 0;
  bool wd_valid = false;
  DmacBeat wd_data{};
  bool tx_ready = false;
  bool cp_valid = false;
  uint16_t cp_tag = 0;
  uint8_t cp_status = 0;
  uint32_t cp_byte_count = 0, cp_len = 0;
  DmacBeat cp_data{};
  uint32_t cp_cnt = 0;
  bool cp_last = false;
};

struct DmacOut {
  bool rq_ready = false, wq_ready = false, wd_ready = false, cp_ready = false;
  bool rd_valid = false;
  uint8_t rd_id = 0, rd_status = 0;
  bool rw_valid = false;
  uint8_t rw_id = 0;
  uint32_t rw_off = 0, rw_cnt = 0;
  DmacBeat rw_data{};
  bool tx_valid = false, tx_write = false, tx_last = false;
  uint64_t tx_addr = 0;
  uint32_t tx_len = 0, tx_cnt = 0;
  uint16_t tx_tag = 0;
  DmacBeat tx_data{};
  bool busy = false;
  uint32_t tmo_wait = 0;
  uint16_t tags_used = 0;  // tags in use (for waveforms and state dumps)
  bool operator==(const DmacOut& o) const;
};

// DmacIn's and DmacOut's pins, named as in the port list (rnic_dmac_ports.h): one list for every
// adapter between the structs and a pin set (the SystemC pin face, the C++-mode RTL core) and
// for comparing outputs. Scalars, then the data beats (BYTES bytes each).
#define RNIC_DMAC_IN_SCALARS(X)                                                             \
  X(rst)                                                                                    \
  X(skip)                                                                                   \
  X(cfg_mrrs)                                                                               \
  X(cfg_mps)                                                                                \
  X(cfg_tags)                                                                               \
  X(cfg_timeout)                                                                            \
  X(rq_valid) X(rq_addr) X(rq_len) X(rq_id) X(rd_ready) X(wq_valid) X(wq_addr) X(wq_len)    \
      X(wd_valid) X(tx_ready) X(cp_valid) X(cp_tag) X(cp_status) X(cp_byte_count) X(cp_len) \
          X(cp_cnt) X(cp_last)
#define RNIC_DMAC_IN_DATA(X) X(wd_data) X(cp_data)
#define RNIC_DMAC_OUT_SCALARS(X)                                                           \
  X(rq_ready)                                                                              \
  X(wq_ready)                                                                              \
  X(wd_ready)                                                                              \
  X(cp_ready)                                                                              \
  X(rd_valid)                                                                              \
  X(rd_id)                                                                                 \
  X(rd_status) X(rw_valid) X(rw_id) X(rw_off) X(rw_cnt) X(tx_valid) X(tx_write) X(tx_last) \
      X(tx_addr) X(tx_len) X(tx_cnt) X(tx_tag) X(busy) X(tmo_wait) X(tags_used)
#define RNIC_DMAC_OUT_DATA(X) X(rw_data) X(tx_data)

// One implementation of the block: the model below or a Verilated RTL build.
class DmacCore {
 public:
  struct Params {};  // nothing besides BlockArgs (the width, the clock)
  class Recorded;    // dmac.h
  virtual ~DmacCore() = default;
  // One rising edge with these input pins; out() is then the outputs until the next edge (one
  // object for the core's life: its users keep the reference).
  virtual void edge(const DmacIn& in) = 0;
  virtual const DmacOut& out() const = 0;
  virtual int bytes() const = 0;     // datapath width (B per beat)
  virtual int max_tags() const = 0;  // the most tags cfg_tags may ask for
  virtual const char* impl() const = 0;
  // Waveform: what the implementation shows of itself beyond its pins (the RTL's internals in
  // a traced run); the model shows nothing more.
  virtual void trace(TraceSink& /*t*/) const {}
};

// A run of edges in which only beats move (DmacModel::beat_edges): what its driver brings to
// them. In: the driver's bound (no request, write or new completion reaches the block in these
// edges, and they are at most its current one), the completion in progress (the cp_bytes of its
// beats from the next one on, cp_beats of them with its last, presented back to back), the write
// data (from the next beat on: wd_bytes in one buffer, its last beat partial, and whether more
// follows it). The completion's first beat may start the run (cp_first, with its header's
// pins; cp_beats and cp_bytes then count all of it). take_tlp: the run may end with the edge
// that takes an MWr's last beat, if that edge is the driver's bound (its current edge, where it
// sends the TLP; took_tlp says it did). Out: what the edges did that the driver carries on its
// side.
struct DmacBeatRun {
  uint64_t max_edges = 0;
  uint32_t skip = 0;  // cycles without an edge before the run's first (DmacIn::skip)
  bool take_tlp = false;
  bool took_tlp = false;
  const uint8_t* cp = nullptr;
  uint32_t cp_beats = 0, cp_bytes = 0;
  bool cp_first = false;
  uint16_t cp_tag = 0;
  uint8_t cp_status = 0;
  uint32_t cp_byte_count = 0, cp_len = 0;
  const uint8_t* wd = nullptr;
  uint32_t wd_bytes = 0;
  bool wd_more = false;
  uint32_t wd_beats = 0;  // beats of wd taken
  // Bytes of the completion put in read rw_id (cp's first rw_cnt bytes, at rw_off).
  uint8_t rw_id = 0;
  uint32_t rw_off = 0, rw_cnt = 0;
};

class DmacModel : public DmacCore {
 public:
  static constexpr int kReads = 64, kWriteQueue = 16;
  // The write-data buffer: room for an MPS of 4096 and a beat either side, a power of two.
  static uint32_t wbuf_beats(int bytes) {
    uint32_t n = 512;
    while (n < uint32_t(4096 / bytes + 2)) n *= 2;
    return n;
  }

  DmacModel(int bytes, int max_tags = 1024);
  void edge(const DmacIn& in) override;
  const DmacOut& out() const override { return out_; }
  int bytes() const override { return B_; }
  int max_tags() const override { return int(tag_.size()); }
  const char* impl() const override { return "model"; }
  // How many edges after the last one take neither a TLP's last beat on tx nor a read's done on
  // rd when no input comes (0: the next one may). A driver may clock those edges whenever it
  // likes before the first one it cannot, as long as their inputs are known by then.
  uint64_t quiet_edges() const;
  // Beat edges: edges after the last one, back to back, at which no TLP starts or is taken whole
  // from tx, no piece ends, times out or is issued, no read finishes and no request or write is
  // taken (a completion's header only at the first of them); only the beats of the MWr in progress
  // (its last one ending the run), of the completion in progress (its last one too, ending the run,
  // when it cannot end a piece) and of the write data move. With r.take_tlp the run may go one
  // edge further, to the edge that takes the MWr's last beat when that edge is r.max_edges
  // (the TLP that follows it starts there as at any edge: an MWr, an MRd or none). beat_edges says
  // how many of the next edges are such edges with r's inputs (0: the next one is not), beat_run
  // clocks n of them at once: the state and outputs after it are those of n edges, with the MWr's
  // bytes those edges take from tx (its beat presented before the first, and each beat but the
  // last's) appended to tx, and r's outputs set.
  uint64_t beat_edges(const DmacBeatRun& r) const;
  void beat_run(DmacBeatRun& r, uint64_t n, std::vector<uint8_t>& tx);

 private:
  struct Entry {
    bool live = false;
    uint8_t id = 0;
    uint64_t addr = 0;
    uint32_t len = 0, out = 0;
    bool issued_all = false;
    uint8_t status = 0;
  };
  struct Tag {
    bool out = false;
    uint64_t issued = 0;
    int entry = 0;
    uint32_t off = 0, len = 0;
  };
  struct Write {
    uint64_t addr;
    uint32_t len;
    uint64_t base;  // its first beat in the data stream
  };
  void reset(const DmacIn& in);
  // A completion's first beat: its header (a tag not in use: its bytes are dropped).
  void take_header(uint16_t tag, uint8_t status, uint32_t byte_count, uint32_t len);
  bool tag_out(uint16_t tag) const { return tag < tag_.size() && tag_[tag].out; }
  void piece_event(int tag, uint8_t status);
  void finish(int entry);
  uint32_t mwr_len(const Write& w) const;
  bool mwr_ready() const;
  bool mrd_ready() const;
  bool zero_head() const;
  void start_mwr();
  void start_mrd();
  void next_mwr_beat();
  // Edge n of a run takes the MWr's last beat: the next TLP (the decision from the state before
  // the edge, write data taken by then counted) or an idle tx.
  void take_tlp_edge(uint64_t data_before);
  void copy_wbuf(uint64_t base, uint64_t off, uint64_t n, std::vector<uint8_t>& to) const;
  void drive();

  int B_;
  uint64_t mrrs_ = 512, mps_ = 256, timeout_ = 0xFFFFFFFF;  // cfg_* of the last edge
  uint64_t now_ = 0;
  Entry e_[kReads];
  size_t n_live_ = 0;
  std::vector<Tag> tag_;
  Ring<uint16_t> free_tags_;
  int tags_out_ = 0;
  // (issue time, tag) of the tags issued, in issue order (one a cycle at most: the times are
  // distinct); an entry whose tag was freed since stays until it reaches the front, which is
  // always a tag in use.
  std::deque<std::pair<uint64_t, uint16_t>> by_issue_;
  bool live(const std::pair<uint64_t, uint16_t>& p) const {
    return tag_[p.second].out && tag_[p.second].issued == p.first;
  }
  Ring<int> issue_q_{kReads};  // entries with pieces to issue
  bool cur_started_ = false;
  uint64_t cur_addr_ = 0;
  uint32_t cur_left_ = 0;
  Ring<std::pair<uint8_t, uint8_t>> done_q_{kReads};  // (id, status)
  Ring<Write> wq_{kWriteQueue};
  uint64_t wbase_next_ = 0;
  // The write-data buffer: wbuf_n_ beats of B_ bytes each, back to back (a ring of beats; a run
  // of them is one span of bytes up to the ring's end).
  std::vector<uint8_t> wbuf_;
  uint64_t wbuf_n_ = 0;
  // Where a beat's bytes start in the ring.
  uint64_t wpos(uint64_t beat) const { return (beat & (wbuf_n_ - 1)) * uint64_t(B_); }
  // The beats from `beat` on take `bytes` bytes of `from` (a partial last beat padded with zeros).
  void put_wbuf(uint64_t beat, const uint8_t* from, uint64_t bytes);
  uint64_t data_wr_ = 0, data_rel_ = 0;
  uint32_t wr_pos_ = 0;  // bytes of the head write already in MWrs started
  // The MWr in progress on tx.
  bool mwr_on_ = false, mwr_end_ = false;  // end: the TLP is its write's last
  uint32_t mwr_off_ = 0, mwr_tlp_len_ = 0, mwr_k_ = 0, mwr_wlen_ = 0;
  uint64_t mwr_base_ = 0, mwr_addr_ = 0;
  bool last_write_ = false;  // round robin: the last TLP started was an MWr
  // The completion being taken.
  bool in_cpl_ = false, cpl_match_ = false;
  uint16_t cpl_tag_ = 0;
  uint8_t cpl_status_ = 0;
  uint32_t cpl_bc_ = 0, cpl_len_ = 0, cpl_k_ = 0;
  uint64_t cpl_off_ = 0;
  DmacOut out_;
};

}  // namespace rnic
