`default_nettype none
// ddp_rx_parse: the RX datapath's DDP/RDMAP header parser and checker (DESIGN.md §3.3, §4), at
// the boundary of models/rnic/rx_parse/ddp_rx_parse_ports.h, cycle for cycle what RxParsePinModel does.
//
// A segment arrives as beats of BYTES bytes (byte 0 in bits 7..0; the last beat carries s_cnt
// bytes) with its length on s_len with the first beat. The block decodes the DDP control byte
// and the RDMAP control byte, the tagged (STag, TO) or untagged (Inv STag, QN, MSN, MO) header,
// a Read Request's 28-byte payload, and runs the header checks in WIRE.md's order: DDP version
// (tagged: DDP/1/0x04, untagged: DDP/2/0x06), RDMAP version (RDMAP/2/0x05), opcode (unknown, or
// its T bit wrong: RDMAP/2/0x06; RFC 7306's Immediate Data 8 and 9, Atomic Request 0xA and
// Response 0xB are known, their payload is the engine's to read), QN of an untagged opcode (DDP/2/0x01). A segment shorter than
// the header its T bit announces is dropped (h_dropped). The payload of a segment whose checks
// pass follows on p_*, realigned to byte 0.
//
// Latency (core_clk cycles, the first beat accepted at edge F):
//   header result  from edge max(F + max(PARSE_CYCLES, beats of the bytes it needs), E + 1),
//                  E the edge that brought the last of those bytes (the header, plus a Read
//                  Request's 28 bytes; a dropped segment needs all of its beats);
//   payload beat   from the edge after its last byte arrived, not before the header result,
//                  one per cycle;
//   next segment   its first beat no earlier than F + max(result cycles, the segment's beats).
// FIFOs: 4 header results, 64 payload beats (s_ready is low while either is full; one input
// beat may add up to PMAX payload beats, so the payload FIFO has PMAX - 1 entries of slack).
// RAM: the segment buffer, MAX_SEG bytes, and one arrival cycle per beat (MAX_SEG / BYTES + 1
// entries of 64 bits). Contract: s_len is the number of bytes the beats carry (bytes beyond
// s_len are ignored; a segment whose beats end short of s_len is outside the model's contract).
module ddp_rx_parse #(
    parameter int BYTES = 16,
    // core.rx_parse_cycles
    parameter int PARSE_CYCLES = 2,
    // the largest segment buffered, in bytes
    parameter int MAX_SEG = 9216,
    localparam int CNT_W = $clog2(BYTES + 1) < 1 ? 1 : $clog2(BYTES + 1),
    localparam int DATA_W = 8 * BYTES
) (
    input  wire               clk,
    input  wire               rst,

    input  wire               s_valid,
    output logic              s_ready,
    input  wire  [DATA_W-1:0] s_data,
    input  wire               s_last,
    input  wire  [ CNT_W-1:0] s_cnt,
    input  wire  [      15:0] s_len,

    output logic              h_valid,
    input  wire               h_ready,
    output logic              h_dropped,
    output logic              h_ok,
    output logic [       1:0] h_layer,
    output logic [       3:0] h_etype,
    output logic [       7:0] h_code,
    output logic              h_tagged,
    output logic              h_last,
    output logic [       3:0] h_opcode,
    output logic [      31:0] h_stag,
    output logic [      63:0] h_to,
    output logic [      31:0] h_inv_stag,
    output logic [      31:0] h_qn,
    output logic [      31:0] h_msn,
    output logic [      31:0] h_mo,
    output logic              h_rr_ok,
    output logic [      31:0] h_rr_sink_stag,
    output logic [      63:0] h_rr_sink_to,
    output logic [      31:0] h_rr_size,
    output logic [      31:0] h_rr_src_stag,
    output logic [      63:0] h_rr_src_to,
    output logic [      15:0] h_payload_len,

    output logic              p_valid,
    input  wire               p_ready,
    output logic [DATA_W-1:0] p_data,
    output logic              p_last,
    output logic [ CNT_W-1:0] p_cnt
);

  localparam int HQ = 4;
  localparam int PQ = 64;
  localparam int WIN = 46;  // header (at most 18) + a Read Request's 28 bytes
  localparam int PMAX = (WIN + 2 * BYTES) / BYTES + 2;
  localparam int PQ_ALLOC = PQ + PMAX;
  localparam int NBEATS = MAX_SEG / BYTES + 1;

  initial begin
    if (BYTES < 1 || BYTES > 64) $error("ddp_rx_parse: BYTES must be 1..64");
  end

  typedef struct packed {
    logic [63:0] due;
    logic        dropped;
    logic        ok;
    logic [1:0]  layer;
    logic [3:0]  etype;
    logic [7:0]  code;
    logic        tg;  // the T bit ("tagged" is a reserved word)
    logic        last;
    logic [3:0]  opcode;
    logic [31:0] stag;
    logic [63:0] to;
    logic [31:0] inv_stag;
    logic [31:0] qn;
    logic [31:0] msn;
    logic [31:0] mo;
    logic        rr_ok;
    logic [31:0] rr_sink_stag;
    logic [63:0] rr_sink_to;
    logic [31:0] rr_size;
    logic [31:0] rr_src_stag;
    logic [63:0] rr_src_to;
    logic [15:0] payload_len;
  } hdr_t;

  typedef struct packed {
    logic [63:0]       due;
    logic [DATA_W-1:0] data;
    logic              last;
    logic [CNT_W-1:0]  cnt;
  } pay_t;

  // ---- state -------------------------------------------------------------------------------
  logic [63:0] cyc;  // free-running edge count (not reset: only differences matter)
  hdr_t        hq[HQ];
  logic [$clog2(HQ)-1:0] hq_head;
  logic [$clog2(HQ+1)-1:0] hq_n;
  pay_t        pq[PQ_ALLOC];
  logic [$clog2(PQ_ALLOC)-1:0] pq_head;
  logic [$clog2(PQ_ALLOC+1)-1:0] pq_n;
  logic [63:0] pq_tail_due;  // the due cycle of the last payload beat queued

  logic        in_seg, have_header, hdr_ok;
  logic [63:0] first, header_due, next_start, hdr_cycles;
  logic [15:0] len, got, sent, pay_off, pay_len;
  logic [$clog2(NBEATS+1)-1:0] nbeat;  // beats of this segment so far
  // The segment's beats as they came, beat n its bytes n*BYTES on (those past the segment's length
  // are never read).
  logic [DATA_W-1:0] buf_beats[NBEATS];
  logic [63:0] arrived[NBEATS];

  // Byte `at` of the segment, from a beat before this edge's.
  function automatic logic [7:0] buf_byte(input int at);
    buf_byte = buf_beats[at/BYTES][8*(at%BYTES)+:8];
  endfunction

  // ---- the header decode of a byte window (bytes at or beyond `have` read as zero) ---------
  function automatic logic [7:0] wb(input logic [7:0] w[WIN], input int i, input int have);
    wb = i < have ? w[i] : 8'h00;
  endfunction

  function automatic logic [31:0] be32(input logic [7:0] w[WIN], input int i, input int have);
    be32 = {wb(w, i, have), wb(w, i + 1, have), wb(w, i + 2, have), wb(w, i + 3, have)};
  endfunction

  function automatic logic [63:0] be64(input logic [7:0] w[WIN], input int i, input int have);
    be64 = {be32(w, i, have), be32(w, i + 4, have)};
  endfunction

  typedef struct packed {
    hdr_t        h;
    logic [15:0] need;
    logic [15:0] off;
    logic [63:0] cycles;
  } parse_t;

  function automatic logic [63:0] ceil_beats(input int n);
    int q;
    q = (n + BYTES - 1) / BYTES;
    ceil_beats = 64'(q);
  endfunction

  // What DdpRxParse::parse gives for a segment of `l` bytes whose first `have` are in w.
  function automatic parse_t parse(input logic [7:0] w[WIN], input int l, input int have);
    parse_t r;
    int hb, need;
    logic [1:0] ddpv, rdmapv;
    logic [3:0] op;
    // The control bytes' reserved bits are not checked (as the model: RFC 5041 leaves them to
    // the receiver).
    /* verilator lint_off UNUSEDSIGNAL */
    logic [7:0] b0, b1;
    /* verilator lint_on UNUSEDSIGNAL */
    logic tagged_op;
    logic [31:0] qn_of;
    r = '0;
    r.h.last = 1'b1;  // the Segment defaults of a header too short to decode
    need = l;
    if (l < 2) begin
      r.h.dropped = 1'b1;
    end else begin
      b0 = wb(w, 0, have);
      b1 = wb(w, 1, have);
      r.h.tg = b0[7];
      r.h.last = b0[6];
      ddpv = b0[1:0];
      rdmapv = b1[7:6];
      op = b1[3:0];
      r.h.opcode = op;
      hb = r.h.tg ? 14 : 18;
      if (l < hb) begin
        r.h.dropped = 1'b1;
      end else begin
        if (r.h.tg) begin
          r.h.stag = be32(w, 2, have);
          r.h.to = be64(w, 6, have);
        end else begin
          r.h.inv_stag = be32(w, 2, have);
          r.h.qn = be32(w, 6, have);
          r.h.msn = be32(w, 10, have);
          r.h.mo = be32(w, 14, have);
        end
        need = hb;
        r.off = 16'(hb);
        r.h.payload_len = 16'(l - hb);
        tagged_op = op == 4'd0 || op == 4'd2;
        // Queue 1: Read and Atomic Requests; 2: Terminate; 3: Atomic Responses; 0: the rest.
        qn_of = op == 4'd1 || op == 4'd10 ? 32'd1 : op == 4'd7 ? 32'd2 : op == 4'd11 ? 32'd3 : 32'd0;
        r.h.ok = 1'b1;
        if (ddpv != 2'd1) begin
          r.h.ok = 1'b0;
          if (r.h.tg) {r.h.layer, r.h.etype, r.h.code} = {2'd1, 4'd1, 8'h04};
          else {r.h.layer, r.h.etype, r.h.code} = {2'd1, 4'd2, 8'h06};
        end else if (rdmapv != 2'd1) begin
          r.h.ok = 1'b0;
          {r.h.layer, r.h.etype, r.h.code} = {2'd0, 4'd2, 8'h05};
        end else if (op > 4'd11 || tagged_op != r.h.tg) begin
          r.h.ok = 1'b0;
          {r.h.layer, r.h.etype, r.h.code} = {2'd0, 4'd2, 8'h06};
        end else if (!r.h.tg && r.h.qn != qn_of) begin
          r.h.ok = 1'b0;
`ifdef DDP_RX_PARSE_MUTATE
          {r.h.layer, r.h.etype, r.h.code} = {2'd1, 4'd2, 8'h02};  // deliberate defect
`else
          {r.h.layer, r.h.etype, r.h.code} = {2'd1, 4'd2, 8'h01};
`endif
        end
        if (r.h.ok && op == 4'd1) begin
          need = l < hb + 28 ? l : hb + 28;
          if (l - hb >= 28) begin
            r.h.rr_ok = 1'b1;
            r.h.rr_sink_stag = be32(w, hb, have);
            r.h.rr_sink_to = be64(w, hb + 4, have);
            r.h.rr_size = be32(w, hb + 12, have);
            r.h.rr_src_stag = be32(w, hb + 16, have);
            r.h.rr_src_to = be64(w, hb + 20, have);
          end
        end
      end
    end
    r.need = 16'(need);
    begin
      logic [63:0] beats;
      beats = r.h.dropped ? (l == 0 ? 64'd1 : ceil_beats(l)) : ceil_beats(need);
      r.cycles = beats > 64'(PARSE_CYCLES) ? beats : 64'(PARSE_CYCLES);
    end
    return r;
  endfunction

  // ---- one edge ----------------------------------------------------------------------------
  always_ff @(posedge clk) begin
    logic [63:0] now, tail_due, ns;
    logic [$clog2(HQ+1)-1:0] hn, hn0;
    logic [$clog2(PQ_ALLOC+1)-1:0] pn, pn0;
    logic [$clog2(HQ)-1:0] hh;
    logic [$clog2(PQ_ALLOC)-1:0] ph;
    logic h_pushed, p_pushed, seg_now, h_on, p_on;
    hdr_t h_new, h_front;
    pay_t p_first, p_front;
    now = cyc + 64'd1;
    cyc <= now;
    if (rst) begin
      hq_n <= '0;
      pq_n <= '0;
      in_seg <= 1'b0;
      s_ready <= 1'b0;
      h_valid <= 1'b0;
      p_valid <= 1'b0;
    end else begin
      hn = hq_n;
      pn = pq_n;
      hh = hq_head;
      ph = pq_head;
      tail_due = pq_tail_due;
      ns = next_start;
      seg_now = in_seg;
      h_pushed = 1'b0;
      p_pushed = 1'b0;
      h_new = '0;
      p_first = '0;
      // Results taken at this edge leave their queues.
      if (h_valid && h_ready) begin
        hh = hh + 1'b1;
        hn = hn - 1'b1;
      end
      if (p_valid && p_ready) begin
        ph = (32'(ph) == PQ_ALLOC - 1) ? '0 : ph + 1'b1;
        pn = pn - 1'b1;
      end
      hn0 = hn;
      pn0 = pn;
      if (s_valid && s_ready) begin : beat
        logic        hdr_have, ok;
        logic [63:0] f, hdue, hcyc;
        logic [15:0] l, g, g0, snt, off, plen;
        int          n, nb;
        logic [7:0]  w[WIN];
        logic [DATA_W-1:0] shifted;
        parse_t      r;
        hdr_have = have_header;
        ok = hdr_ok;
        f = first;
        hdue = header_due;
        hcyc = hdr_cycles;
        l = len;
        g = got;
        snt = sent;
        off = pay_off;
        plen = pay_len;
        nb = int'(nbeat);
        if (!seg_now) begin
          seg_now = 1'b1;
          f = now;
          l = s_len;
          g = '0;
          nb = 0;
          hdr_have = 1'b0;
          snt = '0;
        end
        n = s_last ? int'(s_cnt) : BYTES;
        g0 = g;
        g = 16'((int'(g0) + n < int'(l)) ? int'(g0) + n : int'(l));
        if (nb < NBEATS) begin
          buf_beats[nb] <= s_data;
          arrived[nb] <= now;
        end
        nb = nb + 1;
        if (!hdr_have) begin
          // The first WIN bytes as they stand after this beat (only until the header is known).
          for (int i = 0; i < WIN; i++) begin
            if (i >= int'(g0) && i < int'(g)) w[i] = s_data[8*(i-int'(g0))+:8];
            else if (i < int'(g0)) w[i] = buf_byte(i);
            else w[i] = 8'h00;
          end
          r = parse(w, int'(l), int'(g));
          if (int'(r.need) <= int'(g) || s_last) begin
            hdr_have = 1'b1;
            ok = r.h.ok;
            hcyc = r.cycles;
            off = r.off;
            plen = r.h.payload_len;
            hdue = (f + r.cycles > now + 64'd1) ? f + r.cycles : now + 64'd1;
            r.h.due = hdue;
            hq[2'(32'(hh) + 32'(hn))] <= r.h;
            hn = hn + 1'b1;
            h_pushed = 1'b1;
            h_new = r.h;
          end
        end
        if (hdr_have && ok) begin
          // Every payload beat whose bytes are all in (or, at the last beat, what is left).
          for (int k = 0; k < PMAX; k++) begin
            int m, lastb, bi, base, keep;
            logic [63:0] due;
            pay_t e;
            if (snt < plen) begin
              m = (int'(plen) - int'(snt) < BYTES) ? int'(plen) - int'(snt) : BYTES;
              if (int'(off) + int'(snt) + m <= int'(g) || s_last) begin
                e = '0;
                base = int'(off) + int'(snt);
                if (base >= int'(g0) - BYTES) begin
                  // Every byte of it is in this beat or the one before: one shift of the two,
                  // the bytes past m, the segment's bytes so far or MAX_SEG zero.
                  shifted = DATA_W'({s_data, nb > 1 ? buf_beats[nb-2] : '0} >>
                                    (8 * (base - int'(g0) + BYTES)));
                  keep = m;
                  if (int'(g) - base < keep) keep = int'(g) - base;
                  if (MAX_SEG - base < keep) keep = MAX_SEG - base;
                  if (keep > 0)
                    e.data = shifted & ({DATA_W{1'b1}} >> (8 * (BYTES - keep)));
                end else begin
                  for (int j = 0; j < BYTES; j++) begin
                    int at;
                    at = base + j;
                    if (j < m && at < int'(g) && at < MAX_SEG)
                      e.data[8*j+:8] = at >= int'(g0) ? s_data[8*(at-int'(g0))+:8] : buf_byte(at);
                  end
                end
                lastb = int'(off) + int'(snt) + m - 1;
                bi = lastb / BYTES;
                if (bi > nb - 1) bi = nb - 1;
                due = ((bi == nb - 1) ? now : arrived[bi]) + 64'd1;
                if (hdue > due) due = hdue;
                if (pn != 0 && tail_due + 64'd1 > due) due = tail_due + 64'd1;
                snt = 16'(int'(snt) + m);
                e.due = due;
                e.last = snt == plen;
                e.cnt = CNT_W'(m);
                pq[(32'(ph) + 32'(pn)) % PQ_ALLOC] <= e;
                if (!p_pushed) p_first = e;
                p_pushed = 1'b1;
                pn = pn + 1'b1;
                tail_due = due;
              end
            end
          end
        end
        if (s_last) begin
          logic [63:0] sc;
          seg_now = 1'b0;
          sc = int'(l) == 0 ? 64'd1 : ceil_beats(int'(l));
          ns = f + (hcyc > sc ? hcyc : sc);
        end
        have_header <= hdr_have;
        hdr_ok <= ok;
        first <= f;
        header_due <= hdue;
        hdr_cycles <= hcyc;
        len <= l;
        got <= g;
        sent <= snt;
        pay_off <= off;
        pay_len <= plen;
        nbeat <= ($clog2(NBEATS + 1))'(nb);
      end
      // The queues' heads (an entry written at this edge is not in the array yet).
      h_front = (hn0 == 0 && h_pushed) ? h_new : hq[hh];
      p_front = (pn0 == 0 && p_pushed) ? p_first : pq[ph];
      h_on = hn != 0 && h_front.due <= now;
      p_on = pn != 0 && p_front.due <= now;
      h_valid <= h_on;
      if (h_on) begin
        h_dropped <= h_front.dropped;
        h_ok <= h_front.ok;
        h_layer <= h_front.layer;
        h_etype <= h_front.etype;
        h_code <= h_front.code;
        h_tagged <= h_front.tg;
        h_last <= h_front.last;
        h_opcode <= h_front.opcode;
        h_stag <= h_front.stag;
        h_to <= h_front.to;
        h_inv_stag <= h_front.inv_stag;
        h_qn <= h_front.qn;
        h_msn <= h_front.msn;
        h_mo <= h_front.mo;
        h_rr_ok <= h_front.rr_ok;
        h_rr_sink_stag <= h_front.rr_sink_stag;
        h_rr_sink_to <= h_front.rr_sink_to;
        h_rr_size <= h_front.rr_size;
        h_rr_src_stag <= h_front.rr_src_stag;
        h_rr_src_to <= h_front.rr_src_to;
        h_payload_len <= h_front.payload_len;
      end
      p_valid <= p_on;
      if (p_on) begin
        p_data <= p_front.data;
        p_last <= p_front.last;
        p_cnt <= p_front.cnt;
      end
      s_ready <= 32'(hn) < HQ && 32'(pn) < PQ && (seg_now || now + 64'd1 >= ns);
      in_seg <= seg_now;
      next_start <= ns;
      hq_n <= hn;
      pq_n <= pn;
      hq_head <= hh;
      pq_head <= ph;
      pq_tail_due <= tail_due;
    end
  end
endmodule
