`default_nettype none
// rnic_dmac: the card's bus-master DMA (DESIGN.md §3.3, §4) at the boundary of
// models/rnic/dmac/rnic_dmac_ports.h, cycle for cycle what DmacModel (models/rnic/dmac/dmac_core.h) does:
// reads cut at MRRS and 4 KiB into MRds under a tag pool, completion bytes placed at their
// offsets on rw, a read's done when its last piece is done or failed, the completion timeout;
// writes cut at MPS and 4 KiB into MWrs sent beat by beat. dmac_core.h's header is the contract;
// this module implements it.
//
// Latency (core_clk cycles): a read accepted at edge A has its first MRd in the tx register at
// A + 1 at the earliest (issue queue head, a free tag, tx free); a completion beat taken at edge
// C is on rw after C; a read's done is on rd after the edge of its last piece event; an MWr is
// loaded the edge after its last data beat arrives at the earliest, one beat per cycle after.
// Between TLPs a ready MWr and an MRd that can take a tag alternate. At most one piece event per
// edge: a completion's last beat, else the oldest piece past cfg_timeout (not the tag of a
// completion being taken), else a 0-byte read at the issue queue's head.
// Every output is a register or a function of registers (busy, tmo_wait, the readies).
// FIFOs: the issue queue, the done queue and the free read-table entries, READS entries each;
// the write queue, WQ entries; the free-tag list, TAGS entries; the tags in use in issue order
// (a linked list over the tag table). RAM: the read table (READS entries: id, address, length,
// pieces out, status), the tag table (TAGS entries: issue time, read, offset, length), the
// write-data buffer (WBUF beats of 8 * BYTES bits). No read data is held: it goes out on rw.
// Time: a 48-bit timer advances 1 + skip per edge (skip: edges the driver did not clock).
module rnic_dmac #(
    parameter int BYTES = 32,    // B per beat (core.dma_bytes): 1, 2, 4, ... 64
    parameter int TAGS = 64,     // the most tags cfg_tags may ask for (pcie.tags)
    parameter int READS = 64,    // reads in the block (live, or done and not taken)
    parameter int WQ = 16,       // writes waiting
    parameter int WBUF = (4096 / BYTES + 2 > 512) ? (1 << $clog2(4096 / BYTES + 2)) : 512
) (
    input  wire                      clk,
    input  wire                      rst,
    input  wire  [             31:0] skip,
    input  wire  [             12:0] cfg_mrrs,
    input  wire  [             12:0] cfg_mps,
    input  wire  [             10:0] cfg_tags,
    input  wire  [             31:0] cfg_timeout,

    input  wire                      rq_valid,
    output logic                     rq_ready,
    input  wire  [             63:0] rq_addr,
    input  wire  [             31:0] rq_len,
    input  wire  [              7:0] rq_id,

    output logic                     rw_valid,
    output logic [              7:0] rw_id,
    output logic [             31:0] rw_off,
    output logic [      8*BYTES-1:0] rw_data,
    output logic [$clog2(BYTES+1)-1:0] rw_cnt,

    output logic                     rd_valid,
    input  wire                      rd_ready,
    output logic [              7:0] rd_id,
    output logic [              1:0] rd_status,

    input  wire                      wq_valid,
    output logic                     wq_ready,
    input  wire  [             63:0] wq_addr,
    input  wire  [             31:0] wq_len,
    input  wire                      wd_valid,
    output logic                     wd_ready,
    input  wire  [      8*BYTES-1:0] wd_data,

    output logic                     tx_valid,
    input  wire                      tx_ready,
    output logic                     tx_write,
    output logic [             63:0] tx_addr,
    output logic [             12:0] tx_len,
    output logic [              9:0] tx_tag,
    output logic [      8*BYTES-1:0] tx_data,
    output logic [$clog2(BYTES+1)-1:0] tx_cnt,
    output logic                     tx_last,

    input  wire                      cp_valid,
    output logic                     cp_ready,
    input  wire  [              9:0] cp_tag,
    input  wire  [              1:0] cp_status,
    input  wire  [             12:0] cp_byte_count,
    input  wire  [             12:0] cp_len,
    input  wire  [      8*BYTES-1:0] cp_data,
    input  wire  [$clog2(BYTES+1)-1:0] cp_cnt,
    input  wire                      cp_last,

    output logic                     busy,
    output logic [             31:0] tmo_wait,
    output logic [             10:0] tags_used
);
  localparam int LB = $clog2(BYTES);  // log2 of the beat (BYTES is a power of two)
  localparam int RW = $clog2(READS);
  localparam int TW = (TAGS > 1) ? $clog2(TAGS) : 1;
  localparam int QW = $clog2(WQ);
  localparam int BW = $clog2(WBUF);
  localparam int CW = $clog2(BYTES + 1);
  localparam logic [1:0] ST_TIMEOUT = 2'd3;

  // ---------------------------------------------------------------- state
  logic        live;  // out of reset: the readies may rise
  logic [47:0] now;
  // Read table.
  logic [READS-1:0] e_all;  // every piece issued
  logic [7:0]  e_id     [READS];
  logic [63:0] e_addr   [READS];
  logic [31:0] e_len    [READS];
  logic [10:0] e_out    [READS];
  logic [1:0]  e_status [READS];
  logic [RW:0] n_live;
  // Issue queue (read table indices) and the head's cursor.
  logic [RW-1:0] iq [READS];
  logic [RW-1:0] iq_head, iq_tail;
  logic [RW:0]   iq_count;
  logic          cur_started;
  logic [63:0]   cur_addr;
  logic [31:0]   cur_left;
  // Done queue.
  logic [7:0]    dq_id [READS];
  logic [1:0]    dq_st [READS];
  logic [RW-1:0] dq_head, dq_tail;
  logic [RW:0]   dq_count;
  // Tags.
  logic [TAGS-1:0] t_out;
  logic [47:0]   t_issued [TAGS];
  logic [RW-1:0] t_entry  [TAGS];
  logic [31:0]   t_off    [TAGS];
  logic [12:0]   t_len    [TAGS];
  // Free tags: those never used since reset (0, 1, ... up to cfg_tags), then the freed ones in
  // the order they were freed.
  logic [10:0]   ft_fresh;
  logic [TW-1:0] ft [TAGS];
  logic [TW-1:0] ft_head, ft_tail;
  logic [TW:0]   ft_count;
  logic [10:0]   tags_out;
  // Tags in use in issue order (a doubly linked list): the oldest at l_head.
  logic [TW-1:0] l_next [TAGS];
  logic [TW-1:0] l_prev [TAGS];
  logic [TW-1:0] l_head, l_tail;
  // Free read-table entries.
  logic [RW-1:0] ef [READS];
  logic [RW-1:0] ef_head, ef_tail;
  // Writes.
  logic [63:0]   w_addr [WQ];
  logic [31:0]   w_len  [WQ];
  logic [31:0]   w_base [WQ];
  logic [QW-1:0] wq_head, wq_tail;
  logic [QW:0]   wq_count;
  logic [31:0]   wbase_next, data_wr, data_rel;
  logic [8*BYTES-1:0] wbuf [WBUF];
  logic [31:0]   wr_pos;
  // The MWr in progress.
  logic          mwr_on, mwr_end, last_write;
  logic [31:0]   mwr_off, mwr_k, mwr_wlen, mwr_base;
  logic [12:0]   mwr_tlp_len;
  logic [63:0]   mwr_addr;
  // The completion being taken.
  logic          in_cpl, cpl_match;
  logic [9:0]    cpl_tag;
  logic [1:0]    cpl_status;
  logic [12:0]   cpl_bc, cpl_len;
  logic [31:0]   cpl_k;
  logic [32:0]   cpl_off;

  // ---------------------------------------------------------------- helpers
  function automatic logic [31:0] min3(input logic [31:0] a, input logic [31:0] b,
                                       input logic [31:0] c);
    logic [31:0] m;
    m = (a < b) ? a : b;
    return (m < c) ? m : c;
  endfunction

  // The head write's next MWr.
  logic [RW-1:0] eh;  // issue queue head
  logic [31:0]   w_l, r_l;
  logic [63:0]   r_addr_c;
  logic [31:0]   r_left_c;
  logic          mwr_rdy, mrd_rdy, zero_head;
  logic          t_fresh;  // the next tag is one never used since reset
  logic [TW-1:0] t_new;    // the tag the next MRd takes
  always_comb begin
    w_l = min3(w_len[wq_head] - wr_pos, {19'd0, cfg_mps},
               32'd4096 - {20'd0, 12'(w_addr[wq_head] + {32'd0, wr_pos})});
    mwr_rdy = (wq_count != 0) &&
              ((data_wr - w_base[wq_head]) > ((wr_pos + w_l - 32'd1) >> LB));
    eh = iq[iq_head];
    r_addr_c = cur_started ? cur_addr : e_addr[eh];
    r_left_c = cur_started ? cur_left : e_len[eh];
    r_l = min3(r_left_c, {19'd0, cfg_mrrs}, 32'd4096 - {20'd0, r_addr_c[11:0]});
    t_fresh = (32'(ft_fresh) < 32'(cfg_tags)) && (32'(ft_fresh) < 32'(TAGS));
    t_new = t_fresh ? TW'(ft_fresh) : ft[ft_head];
    mrd_rdy = (iq_count != 0) && (e_len[eh] != 0) && (t_fresh || ft_count != 0);
    zero_head = (iq_count != 0) && (e_len[eh] == 0);
  end

  // Outputs that are functions of the state.
  logic [47:0] deadline;
  always_comb begin
    deadline = t_issued[l_head] + {16'd0, cfg_timeout};
    rd_valid = dq_count != 0;
    rd_id = rd_valid ? dq_id[dq_head] : 8'd0;
    rd_status = rd_valid ? dq_st[dq_head] : 2'd0;
    rq_ready = live && ({1'b0, n_live} + {1'b0, dq_count} < (RW + 2)'(READS));
    wq_ready = live && (wq_count < (QW + 1)'(WQ));
    wd_ready = live && ((data_wr - data_rel) < 32'(WBUF));
    cp_ready = live;
    busy = !live || tx_valid || rd_valid || mwr_rdy || mrd_rdy || zero_head;
    tags_used = tags_out;
    if (tags_out == 0) tmo_wait = 32'd0;
    else if (deadline <= now) tmo_wait = 32'd1;
    else tmo_wait = 32'(deadline - now);  // at most cfg_timeout
  end

  // ---------------------------------------------------------------- per edge
  // Decisions read the state before the edge.
  logic [47:0] now_n;
  logic tx_taken, rd_taken, rq_take, wq_take, wd_take, cp_take;
  logic cont, start_w, start_r;
  // Completion beat.
  logic        c_first, c_match, c_rw, c_last_ev;
  logic [TW-1:0] c_tag;  // the completion's tag, as a table index
  logic [1:0]  c_status;
  logic [12:0] c_bc, c_len;
  logic [32:0] c_base, c_off;
  logic [31:0] c_k, c_n;
  logic [RW-1:0] c_entry;
  // The piece event.
  logic        ev;
  logic [TW-1:0] ev_tag;
  logic [1:0]  ev_status;
  logic        zero_ev;
  logic [10:0] excl;
  logic        finish;
  logic [RW-1:0] fin_entry;
  logic [1:0]  fin_status;
  // Beat source of the MWr beat loaded now.
  logic [31:0] b_off, b_k, b_base, b_l, b_o, b_cnt;
  logic [63:0] b_addr;
  logic [8*BYTES-1:0] b_data;
  logic [16*BYTES-1:0] b_pair;
  logic        b_last;
  logic [RW-1:0] e_alloc;
  logic [TW-1:0] l_second, l_head1, l_tail1;
  logic          l_empty1;

  always_comb begin
    now_n = now + 48'd1 + {16'd0, skip};
    tx_taken = tx_valid && tx_ready;
    rd_taken = rd_valid && rd_ready;
    rq_take = rq_valid && rq_ready;
    wq_take = wq_valid && wq_ready;
    wd_take = wd_valid && wd_ready;
    cp_take = cp_valid && cp_ready;
    cont = 1'b0;
    start_w = 1'b0;
    start_r = 1'b0;
    if (!tx_valid || tx_taken) begin
      if (mwr_on) cont = 1'b1;
      else if (mwr_rdy && mrd_rdy) begin
        start_r = last_write;
        start_w = !last_write;
      end else begin
        start_w = mwr_rdy;
        start_r = mrd_rdy;
      end
    end

    c_first = !in_cpl;
    c_tag = TW'(c_first ? cp_tag : cpl_tag);
    c_status = c_first ? cp_status : cpl_status;
    c_bc = c_first ? cp_byte_count : cpl_bc;
    c_len = c_first ? cp_len : cpl_len;
    c_match = c_first ? ((32'(cp_tag) < 32'(TAGS)) && t_out[TW'(cp_tag)]) : cpl_match;
    c_base = {1'b0, t_off[TW'(cp_tag)]} + {20'd0, t_len[TW'(cp_tag)]} -
             {20'd0, (cp_byte_count < t_len[TW'(cp_tag)]) ? cp_byte_count : t_len[TW'(cp_tag)]};
    c_k = c_first ? 32'd0 : cpl_k;
    c_off = (c_first ? c_base : cpl_off) + {1'b0, c_k << LB};
    c_n = cp_last ? ((32'(cp_cnt) < 32'(BYTES)) ? 32'(cp_cnt) : 32'(BYTES)) : 32'(BYTES);
    c_entry = t_entry[c_tag];
    c_rw = cp_take && c_match && (c_status == 2'd0) && (c_n != 0) &&
           (c_off < {1'b0, e_len[c_entry]});
    c_last_ev = cp_take && cp_last;

    ev = 1'b0;
    ev_tag = c_tag;
    ev_status = 2'd0;
    if (c_last_ev && c_match) begin
      if (c_status != 2'd0) begin
        ev = 1'b1;
        ev_status = c_status;
`ifdef RNIC_DMAC_MUTATE
      // Mutant (DESIGN.md §4): a piece counted done at any completion's last beat, even when
      // byte_count says more completions follow; the lockstep must catch it.
      end else begin
        ev = 1'b1;
      end
`else
      end else if (c_bc == c_len) begin
        ev = 1'b1;
      end
`endif
    end
    excl = cp_take ? (in_cpl ? {1'b0, cpl_tag} : {1'b0, cp_tag})
                   : (in_cpl ? {1'b0, cpl_tag} : 11'h7FF);
    // The oldest piece past its timeout, or the next oldest when the oldest's completion is
    // being taken (issue times only grow along the list).
    l_second = l_next[l_head];
    if (!c_last_ev && tags_out != 0) begin
      if (t_issued[l_head] + {16'd0, cfg_timeout} <= now_n && {1'b0, 10'(l_head)} != excl) begin
        ev = 1'b1;
        ev_tag = l_head;
        ev_status = ST_TIMEOUT;
      end else if (tags_out > 11'd1 && {1'b0, 10'(l_head)} == excl &&
                   t_issued[l_second] + {16'd0, cfg_timeout} <= now_n) begin
        ev = 1'b1;
        ev_tag = l_second;
        ev_status = ST_TIMEOUT;
      end
    end
    zero_ev = !c_last_ev && !ev && zero_head;

    finish = 1'b0;
    fin_entry = zero_ev ? eh : t_entry[ev_tag];
    fin_status = e_status[fin_entry];
    if (ev) begin
      if (ev_status != 2'd0 && fin_status == 2'd0) fin_status = ev_status;
      finish = e_all[fin_entry] && (e_out[fin_entry] == 11'd1);
    end else if (zero_ev) begin
      finish = 1'b1;
    end

    // The MWr beat to load: the next of the one in progress, or the first of the head write's.
    b_off = start_w ? wr_pos : mwr_off;
    b_k = start_w ? 32'd0 : mwr_k;
    b_base = start_w ? w_base[wq_head] : mwr_base;
    b_l = start_w ? w_l : {19'd0, mwr_tlp_len};
    b_addr = start_w ? w_addr[wq_head] + {32'd0, wr_pos} : mwr_addr;
    b_o = b_off + (b_k << LB);
    b_cnt = (b_l - (b_k << LB) < 32'(BYTES)) ? b_l - (b_k << LB) : 32'(BYTES);
    // The beat's bytes, at an edge that loads one (only then are they taken).
    b_pair = '0;
    b_data = '0;
    if (cont || start_w) begin
      b_pair = {wbuf[BW'(b_base + (b_o >> LB) + 32'd1)], wbuf[BW'(b_base + (b_o >> LB))]};
      b_pair = b_pair >> (8 * (b_o & 32'(BYTES - 1)));
      b_data = b_pair[8*BYTES-1:0];
      if (b_cnt < 32'(BYTES))  // the bytes from b_cnt on zero
        b_data = b_data & ({8 * BYTES{1'b1}} >> (8 * (32'(BYTES) - b_cnt)));
    end
    b_last = ((b_k + 32'd1) << LB) >= b_l;

    e_alloc = ef[ef_head];

    // The issue-order list after this edge's piece event, before its MRd joins.
    l_head1 = (ev && ev_tag == l_head) ? l_next[ev_tag] : l_head;
    l_tail1 = (ev && ev_tag == l_tail) ? l_prev[ev_tag] : l_tail;
    l_empty1 = tags_out == 11'(ev);
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      live <= 1'b0;
      now <= '0;
      e_all <= '0;
      n_live <= '0;
      iq_head <= '0;
      iq_tail <= '0;
      iq_count <= '0;
      cur_started <= 1'b0;
      dq_head <= '0;
      dq_tail <= '0;
      dq_count <= '0;
      t_out <= '0;
      l_head <= '0;
      l_tail <= '0;
      for (int i = 0; i < READS; i++) ef[i] <= RW'(i);
      ef_head <= '0;
      ef_tail <= '0;
      ft_fresh <= '0;
      ft_head <= '0;
      ft_tail <= '0;
      ft_count <= '0;
      tags_out <= '0;
      wq_head <= '0;
      wq_tail <= '0;
      wq_count <= '0;
      wbase_next <= '0;
      data_wr <= '0;
      data_rel <= '0;
      wr_pos <= '0;
      mwr_on <= 1'b0;
      mwr_end <= 1'b0;
      last_write <= 1'b0;
      in_cpl <= 1'b0;
      cpl_match <= 1'b0;
      tx_valid <= 1'b0;
      tx_write <= 1'b0;
      tx_addr <= '0;
      tx_len <= '0;
      tx_tag <= '0;
      tx_data <= '0;
      tx_cnt <= '0;
      tx_last <= 1'b0;
      rw_valid <= 1'b0;
      rw_id <= '0;
      rw_off <= '0;
      rw_data <= '0;
      rw_cnt <= '0;
    end else begin
      live <= 1'b1;
      now <= now_n;

      // Done queue.
      if (rd_taken) dq_head <= dq_head + 1'b1;
      if (finish) begin
        dq_id[dq_tail] <= e_id[fin_entry];
        dq_st[dq_tail] <= fin_status;
        dq_tail <= dq_tail + 1'b1;
      end
      dq_count <= dq_count + (RW + 1)'(finish) - (RW + 1)'(rd_taken);

      // Read table: a new read (a free entry), the head's piece issued, a piece event.
      if (rq_take) begin
        e_all[e_alloc] <= 1'b0;
        e_id[e_alloc] <= rq_id;
        e_addr[e_alloc] <= rq_addr;
        e_len[e_alloc] <= rq_len;
        e_out[e_alloc] <= '0;
        e_status[e_alloc] <= '0;
      end
      if (start_r && !(ev && eh == fin_entry)) e_out[eh] <= e_out[eh] + 11'd1;
      if (ev && !(start_r && eh == fin_entry)) e_out[fin_entry] <= e_out[fin_entry] - 11'd1;
      if (start_r && r_l == r_left_c) e_all[eh] <= 1'b1;
      if (ev) e_status[fin_entry] <= fin_status;
      if (rq_take) ef_head <= ef_head + 1'b1;
      if (finish) begin
        ef[ef_tail] <= fin_entry;
        ef_tail <= ef_tail + 1'b1;
      end
      n_live <= n_live + (RW + 1)'(rq_take) - (RW + 1)'(finish);

      // Issue queue and cursor.
      if (rq_take) begin
        iq[iq_tail] <= e_alloc;
        iq_tail <= iq_tail + 1'b1;
      end
      if ((start_r && r_l == r_left_c) || zero_ev) iq_head <= iq_head + 1'b1;
      iq_count <= iq_count + (RW + 1)'(rq_take) -
                  (RW + 1)'((start_r && r_l == r_left_c) || zero_ev);
      if (start_r) begin
        cur_started <= r_l != r_left_c;
        cur_addr <= r_addr_c + {32'd0, r_l};
        cur_left <= r_left_c - r_l;
      end

      // Tags.
      if (start_r) begin
        t_out[t_new] <= 1'b1;
        t_issued[t_new] <= now_n;
        t_entry[t_new] <= eh;
        t_off[t_new] <= 32'(r_addr_c - e_addr[eh]);
        t_len[t_new] <= 13'(r_l);
        if (t_fresh) ft_fresh <= ft_fresh + 11'd1;
        else ft_head <= ft_head + 1'b1;
      end
      if (ev) begin
        t_out[ev_tag] <= 1'b0;
        ft[ft_tail] <= ev_tag;
        ft_tail <= ft_tail + 1'b1;
      end
      // The issue-order list: the piece event's tag out, the new MRd's tag in at the tail.
      if (ev) begin
        if (ev_tag != l_head) l_next[l_prev[ev_tag]] <= l_next[ev_tag];
        if (ev_tag != l_tail) l_prev[l_next[ev_tag]] <= l_prev[ev_tag];
      end
      if (start_r) begin
        if (l_empty1) begin
          l_head <= t_new;
        end else begin
          l_head <= l_head1;
          l_next[l_tail1] <= t_new;
          l_prev[t_new] <= l_tail1;
        end
        l_tail <= t_new;
      end else begin
        l_head <= l_head1;
        l_tail <= l_tail1;
      end
      ft_count <= ft_count + (TW + 1)'(ev) - (TW + 1)'(start_r && !t_fresh);
      tags_out <= tags_out + 11'(start_r) - 11'(ev);

      // Writes.
      if (wq_take && wq_len != 0) begin
        w_addr[wq_tail] <= wq_addr;
        w_len[wq_tail] <= wq_len;
        w_base[wq_tail] <= wbase_next;
        wq_tail <= wq_tail + 1'b1;
        wbase_next <= wbase_next + ((wq_len + 32'(BYTES - 1)) >> LB);
      end
      if (wd_take) begin
        wbuf[BW'(data_wr)] <= wd_data;
        data_wr <= data_wr + 32'd1;
      end
      if (start_w) begin
        if (wr_pos + w_l == w_len[wq_head]) begin
          wq_head <= wq_head + 1'b1;
          wr_pos <= '0;
        end else begin
          wr_pos <= wr_pos + w_l;
        end
      end
      wq_count <= wq_count + (QW + 1)'(wq_take && wq_len != 0) -
                  (QW + 1)'(start_w && wr_pos + w_l == w_len[wq_head]);

      // TX.
      if (cont || start_w) begin
        tx_valid <= 1'b1;
        tx_write <= 1'b1;
        tx_addr <= b_addr;
        tx_len <= 13'(b_l);
        tx_tag <= '0;
        tx_data <= b_data;
        tx_cnt <= CW'(b_cnt);
        tx_last <= b_last;
        mwr_on <= !b_last;
        mwr_k <= b_k + 32'd1;
        if (start_w) begin
          mwr_off <= wr_pos;
          mwr_tlp_len <= 13'(w_l);
          mwr_base <= w_base[wq_head];
          mwr_addr <= b_addr;
          mwr_wlen <= w_len[wq_head];
          mwr_end <= wr_pos + w_l == w_len[wq_head];
          last_write <= 1'b1;
        end
        if (b_last)
          data_rel <= (start_w ? (wr_pos + w_l == w_len[wq_head]) : mwr_end)
                      ? b_base + (((start_w ? w_len[wq_head] : mwr_wlen) + 32'(BYTES - 1)) >> LB)
                      : b_base + ((b_off + b_l) >> LB);
      end else if (start_r) begin
        tx_valid <= 1'b1;
        tx_write <= 1'b0;
        tx_addr <= r_addr_c;
        tx_len <= 13'(r_l);
        tx_tag <= 10'(t_new);
        tx_data <= '0;
        tx_cnt <= '0;
        tx_last <= 1'b1;
        last_write <= 1'b0;
      end else if (tx_taken) begin
        tx_valid <= 1'b0;
      end

      // Completion intake.
      rw_valid <= c_rw;
      if (c_rw) begin
        rw_id <= e_id[c_entry];
        rw_off <= 32'(c_off);
        rw_cnt <= CW'(({1'b0, e_len[c_entry]} - c_off < 33'(c_n)) ? {1'b0, e_len[c_entry]} - c_off
                                                                 : 33'(c_n));
        rw_data <= cp_data;
      end
      if (cp_take) begin
        if (c_first) begin
          cpl_tag <= cp_tag;
          cpl_status <= cp_status;
          cpl_bc <= cp_byte_count;
          cpl_len <= cp_len;
          cpl_match <= c_match;
          cpl_off <= c_base;
        end
        cpl_k <= c_k + 32'd1;
        in_cpl <= !cp_last;
      end
    end
  end

endmodule
`default_nettype wire
