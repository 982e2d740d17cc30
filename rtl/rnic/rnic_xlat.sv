`default_nettype none
// rnic_xlat: STag translation (DESIGN.md §3.3, §4) at the boundary of models/rnic/xlat/xlat_ports.h,
// cycle for cycle what XlatPinModel does while rsp_ready is high. It holds the STag Management
// Table (SMT) and the PBL Management Table (PBLMT), written only through smt_we / pbl_we, and
// turns (STag, tagged offset, length, required access, PD) into physical chunks: a page list's
// split at page boundaries, an extent list's (scatter-gather handle) at extent ends, a physical
// region's as one, or an error, by the checks of models/rnic/xlat/rnic_xlat.h in their order.
//
// Latency (core_clk cycles, the request accepted at edge A; one request at a time):
//   SMT read   at A (a table write at A counts from A + 1); the checks' error, or a 0-byte
//              request's empty beat, from edge A + SMT_CYCLES;
//   PBLMT      the first entry read at edge A + SMT_CYCLES + PBL_CYCLES (P);
//   chunks     one per cycle from P + 1; a scatter-gather handle first passes over the
//              extents before its offset, one cycle each, and spends EXT_SWITCH_CYCLES between
//              extents; an absent page (address 0, on-demand regions) ends the burst with a page
//              fault beat at its turn, as a short extent list does with a bounds beat;
//   req_ready  low from A until the edge that takes the last beat.
// The producer stops while a beat waits for rsp_ready, so beats come later than the model's
// under backpressure, never earlier; in the same order with the same contents.
// FIFOs: none; the output register holds one beat.
// RAM: the SMT, 2^SMT_AW entries of 384 bits (smt_pack's layout, xlat_ports.h), and the PBLMT,
// 2^PBL_AW entries of 128 bits (address 63..0, extent length 127..64: two 64-bit RAMs side by
// side); both start zeroed (every SMT entry free) and are not cleared by rst. Table writes
// outside them are ignored.
// Contract (the card's write port keeps it): a page list's entry covers no more pages than its
// PBL range holds, and no table write lands on an entry a request in flight is reading.
module rnic_xlat #(
    // SMT entries 2^SMT_AW (core.stags at most that)
    parameter int SMT_AW = 16,
    // PBLMT entries 2^PBL_AW (core.pbl_entries at most that)
    parameter int PBL_AW = 20,
    // XlatTiming: SMT read and checks, first PBLMT read, extent switch
    parameter int SMT_CYCLES = 2,
    parameter int PBL_CYCLES = 2,
    parameter int EXT_SWITCH_CYCLES = 1
) (
    input  wire          clk,
    input  wire          rst,

    input  wire          req_valid,
    output logic         req_ready,
    input  wire  [ 31:0] req_stag,
    input  wire  [ 63:0] req_to,
    input  wire  [ 31:0] req_len,
    input  wire  [  3:0] req_access,
    input  wire  [ 31:0] req_pd,

    output logic         rsp_valid,
    input  wire          rsp_ready,
    output logic [ 63:0] rsp_pa,
    output logic [ 31:0] rsp_len,
    output logic [  2:0] rsp_status,
    output logic         rsp_last,

    input  wire          smt_we,
    input  wire  [ 23:0] smt_addr,
    input  wire  [383:0] smt_wdata,
    input  wire          pbl_we,
    input  wire  [ 31:0] pbl_addr,
    input  wire  [127:0] pbl_wdata
);

  // XlatStatus
  localparam logic [2:0] ST_OK = 3'd0;
  localparam logic [2:0] ST_INVALID_STAG = 3'd1;
  localparam logic [2:0] ST_PD = 3'd2;
  localparam logic [2:0] ST_ACCESS = 3'd3;
  localparam logic [2:0] ST_WRAP = 3'd4;
  localparam logic [2:0] ST_BOUNDS = 3'd5;
  localparam logic [2:0] ST_FAULT = 3'd6;
  // SMT entry state and type (smt.h, abi::StagType)
  localparam logic [1:0] STATE_VALID = 2'd1;
  localparam logic [1:0] TYPE_SG = 2'd1;
  localparam logic [1:0] TYPE_PHYS = 2'd2;

  localparam int SMT_N = 1 << SMT_AW;
  localparam int PBL_N = 1 << PBL_AW;
  localparam logic [31:0] T_CHECK = 32'(SMT_CYCLES);
  localparam logic [31:0] T_FETCH = 32'(SMT_CYCLES + PBL_CYCLES);
  localparam logic [31:0] SWITCH = 32'(EXT_SWITCH_CYCLES);

  // ---- tables ------------------------------------------------------------------------------
  logic [383:0] smt_mem[SMT_N];
  // The PBLMT as two RAMs side by side, an entry's address and its extent length: the same
  // table, which Verilator's C++ makes and zeroes in 40% of the instructions one 128-bit RAM took.
  logic [63:0] pbl_addr_mem[PBL_N];
  logic [63:0] pbl_len_mem[PBL_N];
  initial begin
    for (int i = 0; i < SMT_N; i++) smt_mem[i] = '0;
    for (int i = 0; i < PBL_N; i++) begin
      pbl_addr_mem[i] = '0;
      pbl_len_mem[i] = '0;
    end
  end

  // PBLMT entry a, as one 128-bit word (address 63..0, extent length 127..64).
  function automatic logic [127:0] pbl_entry(input logic [PBL_AW-1:0] a);
    pbl_entry = {pbl_len_mem[a], pbl_addr_mem[a]};
  endfunction

  wire smt_in_range = smt_addr < 24'(SMT_N);
  wire pbl_in_range = pbl_addr < 32'(PBL_N);
  always_ff @(posedge clk) begin
    if (!rst && smt_we && smt_in_range) smt_mem[smt_addr[SMT_AW-1:0]] <= smt_wdata;
    if (!rst && pbl_we && pbl_in_range) begin
      pbl_addr_mem[pbl_addr[PBL_AW-1:0]] <= pbl_wdata[63:0];
      pbl_len_mem[pbl_addr[PBL_AW-1:0]]  <= pbl_wdata[127:64];
    end
  end

  // ---- request and entry -------------------------------------------------------------------
  typedef enum logic [2:0] {
    S_IDLE,
    S_CHECK,
    S_FETCH,
    S_EMIT,
    S_SWITCH,
    S_DRAIN
  } state_t;
  state_t state;

  logic [  7:0] r_key;
  logic [ 31:0] r_len, r_pd;
  logic [ 63:0] r_to;
  logic [  3:0] r_access;
  logic         r_off_table;  // the STag's index lies beyond the SMT
  logic [383:0] smt_q;
  logic [ 31:0] t;  // edges since the accepting one
  logic [ 31:0] sw;  // switch cycles left

  wire [ 1:0] e_state = smt_q[1:0];
  wire [ 1:0] e_type = smt_q[3:2];
  wire [ 7:0] e_key = smt_q[11:4];
  wire [31:0] e_pd = smt_q[43:12];
  wire [ 7:0] e_access = smt_q[51:44];
  wire [63:0] e_base = smt_q[115:52];
  wire [63:0] e_length = smt_q[179:116];
  wire [31:0] e_pbl_first = smt_q[211:180];
  wire [31:0] e_pbl_count = smt_q[243:212];
  wire [ 5:0] e_shift = smt_q[249:244];
  wire [63:0] e_fpo = smt_q[313:250];
  wire [63:0] e_phys = smt_q[377:314];
  /* verilator coverage_off */
  wire        unused_smt_bits = ^smt_q[383:378];
  /* verilator coverage_on */

  // The checks, in rnic_xlat.h's order.
  wire [64:0] to_end = {1'b0, r_to} + {33'b0, r_len};
  logic [2:0] check;
  always_comb begin
    if (r_off_table || e_state != STATE_VALID || e_key != r_key) check = ST_INVALID_STAG;
`ifdef RNIC_XLAT_MUTATE
    // Mutation check (DESIGN.md §4): a PD mismatch reported as an access violation.
    else if (e_pd != r_pd) check = ST_PD ^ 3'b001;
`else
    else if (e_pd != r_pd) check = ST_PD;
`endif
    else if ((e_access & {4'b0, r_access}) != {4'b0, r_access}) check = ST_ACCESS;
    else if (to_end[64]) check = ST_WRAP;
    else if (r_to < e_base || to_end[63:0] > e_base + e_length) check = ST_BOUNDS;
    else check = ST_OK;
  end

  // ---- walk --------------------------------------------------------------------------------
  logic [ 63:0] off;  // offset into the region of the next byte
  logic [ 31:0] left;  // bytes still to translate
  logic [ 63:0] in_list;  // page lists: offset from the first page's start
  logic [ 63:0] start;  // extent lists: region offset of the extent in pbl_q
  logic [ 31:0] rem;  // extent lists: extents left, the one in pbl_q included
  logic         scanning;  // extent lists: no chunk out yet
  logic [PBL_AW-1:0] ra;  // the PBLMT entry the next read fetches
  logic [127:0] pbl_q;

  wire  [ 63:0] x_addr = pbl_q[63:0];
  wire  [ 63:0] x_len = pbl_q[127:64];
  wire  [ 63:0] page = 64'd1 << e_shift;
  wire  [ 63:0] in_page = in_list & (page - 64'd1);
  wire  [ 63:0] page_left = page - in_page;
  wire  [ 63:0] left64 = {32'b0, left};
  wire  [ 31:0] page_n = page_left < left64 ? page_left[31:0] : left;
  wire  [ 63:0] page_idx = in_list >> e_shift;
  wire  [ 63:0] page_to = e_base + (page_idx << e_shift) - e_fpo;
  wire  [ 63:0] fault_to = page_to < r_to ? r_to : page_to;
  wire  [ 63:0] in_ext = off - start;
  wire  [ 63:0] ext_left = x_len - in_ext;
  wire  [ 31:0] ext_n = ext_left < left64 ? ext_left[31:0] : left;
  wire          skip = scanning && start + x_len <= off;

  // First PBLMT entry of the walk (the check edge).
  wire  [ 63:0] off0 = r_to - e_base;
  wire  [ 63:0] in_list0 = off0 + e_fpo;
  wire  [ 31:0] first0 = e_type == TYPE_SG ? e_pbl_first : e_pbl_first + 32'(in_list0 >> e_shift);
  wire          unused_first0 = ^first0;  // the PBLMT address is its low PBL_AW bits

  // ---- control -----------------------------------------------------------------------------
  wire accept = req_valid && req_ready;
  wire go = !rsp_valid || rsp_ready;  // the output register can take a beat
  wire taken_last = rsp_valid && rsp_ready && rsp_last;

  task automatic put(input logic [63:0] pa, input logic [31:0] len, input logic [2:0] st,
                     input logic last);
    rsp_valid  <= 1'b1;
    rsp_pa     <= pa;
    rsp_len    <= len;
    rsp_status <= st;
    rsp_last   <= last;
  endtask

  always_ff @(posedge clk) begin
    if (rst) begin
      state     <= S_IDLE;
      req_ready <= 1'b0;
      rsp_valid <= 1'b0;
    end else begin
      if (rsp_valid && rsp_ready) rsp_valid <= 1'b0;
      case (state)
        S_IDLE: begin
          req_ready <= 1'b1;
          if (accept) begin
            req_ready   <= 1'b0;
            r_key       <= req_stag[7:0];
            r_to        <= req_to;
            r_len       <= req_len;
            r_access    <= req_access;
            r_pd        <= req_pd;
            r_off_table <= (req_stag[31:8] >> SMT_AW) != 24'd0;
            smt_q       <= smt_mem[req_stag[8+:SMT_AW]];
            t           <= 32'd1;
            state       <= S_CHECK;
          end
        end
        // The output register is empty from A to the first beat (the last beat of the request
        // before was taken at or before A), so the check and the fetch never wait for it.
        S_CHECK: begin
          t <= t + 32'd1;
          if (t == T_CHECK) begin
            if (check != ST_OK) begin
              put(64'd0, 32'd0, check, 1'b1);
              state <= S_DRAIN;
            end else if (r_len == 32'd0) begin
              put(64'd0, 32'd0, ST_OK, 1'b1);
              state <= S_DRAIN;
            end else begin
              off      <= off0;
              left     <= r_len;
              in_list  <= in_list0;
              start    <= 64'd0;
              rem      <= e_pbl_count;
              scanning <= 1'b1;
              ra       <= first0[PBL_AW-1:0];
              state    <= S_FETCH;
            end
          end
        end
        S_FETCH: begin
          t <= t + 32'd1;
          if (t == T_FETCH) begin
            pbl_q <= pbl_entry(ra);
            ra    <= ra + 1'b1;
            state <= S_EMIT;
          end
        end
        S_EMIT:
        if (go) begin
          if (e_type == TYPE_PHYS) begin
            put(e_phys + off, left, ST_OK, 1'b1);
            state <= S_DRAIN;
          end else if (e_type != TYPE_SG) begin  // a page list (on-demand or not)
            if (x_addr == 64'd0) begin
              put(fault_to, 32'd0, ST_FAULT, 1'b1);
              state <= S_DRAIN;
            end else begin
              put(x_addr + in_page, page_n, ST_OK, page_n == left);
              left    <= left - page_n;
              in_list <= in_list + {32'b0, page_n};
              pbl_q   <= pbl_entry(ra);
              ra      <= ra + 1'b1;
              if (page_n == left) state <= S_DRAIN;
            end
          end else if (rem == 32'd0) begin  // the extents end before the range does
            put(64'd0, 32'd0, ST_BOUNDS, 1'b1);
            state <= S_DRAIN;
          end else begin
            start <= start + x_len;
            rem   <= rem - 32'd1;
            pbl_q <= pbl_entry(ra);
            ra    <= ra + 1'b1;
            if (!skip) begin
              put(x_addr + in_ext, ext_n, ST_OK, ext_n == left);
              off      <= off + {32'b0, ext_n};
              left     <= left - ext_n;
              scanning <= 1'b0;
              sw <= SWITCH;
              if (ext_n == left) state <= S_DRAIN;
              else state <= SWITCH != 32'd0 ? S_SWITCH : S_EMIT;
            end
          end
        end
        S_SWITCH: begin
          sw <= sw - 32'd1;
          if (sw == 32'd1) state <= S_EMIT;
        end
        S_DRAIN:
        if (taken_last) begin
          req_ready <= 1'b1;
          state     <= S_IDLE;
        end
        /* verilator coverage_off */
        default: state <= S_IDLE;  // unreachable: every state_t value has its branch
        /* verilator coverage_on */
      endcase
    end
  end

endmodule
`default_nettype wire
