`default_nettype none
// Streaming CRC-32 unit: one message per s_ tagged stream, one CRC per m_ result.
//
// Reflected CRC (IEEE 802.3 FCS with POLY 32'h04C11DB7, CRC-32C with POLY 32'h1EDC6F41), initial
// value all ones, result inverted. Every beat carries BYTES bytes except the last, which carries
// s_cnt bytes (0..BYTES; 0 only makes sense for an empty message). Byte 0 of s_data is bits
// [7:0] and is the first byte of the stream.
//
// Timing: one beat per cycle; the result is valid 1 cycle after the last beat is accepted and
// stays until m_ready. s_ready is low only while a result waits and m_ready is low.
module crc32 #(
    // bytes per beat
    parameter int BYTES = 8,
    // generator polynomial, normal (MSB-first) form
    parameter logic [31:0] POLY = 32'h04C11DB7,
    // width of the byte count of the last beat
    localparam int CNT_W = $clog2(BYTES + 1),
    localparam int DATA_W = 8 * BYTES
) (
    input  wire               clk,
    input  wire               rst,

    // message in
    input  wire               s_valid,
    output wire               s_ready,
    input  wire  [DATA_W-1:0] s_data,
    input  wire               s_last,
    input  wire  [ CNT_W-1:0] s_cnt,

    // CRC out
    output wire               m_valid,
    input  wire               m_ready,
    output wire  [      31:0] m_crc
);

  initial begin
    if (BYTES < 1 || BYTES > 64) $error("crc32: BYTES must be 1..64");
  end

  // Evaluated at elaboration only (POLY_R), so no run can cover it.
  /* verilator coverage_off */
  function automatic logic [31:0] reflect32(input logic [31:0] v);
    for (int i = 0; i < 32; i++) reflect32[i] = v[31-i];
  endfunction
  /* verilator coverage_on */

  localparam logic [31:0] POLY_R = reflect32(POLY);

  // Four bytes at a time through four 256-entry tables of the polynomial's remainders (ROMs):
  // table_rom[v] is byte v's, and table_k[v] that of byte v followed by k zero bytes, so a
  // 32-bit word folds in one step of four lookups (slicing by four). The bytes of a beat that
  // do not fill a word (the last beat's, or a beat narrower than a word) fold one at a time
  // through table_rom. Computed at the clock edge only, from the registered state.
  logic [31:0] table_rom[256], table_1[256], table_2[256], table_3[256];
  initial begin
    for (int v = 0; v < 256; v++) begin
      logic [31:0] t;
      t = 32'(v);
      for (int b = 0; b < 8; b++) t = (t >> 1) ^ (t[0] ? POLY_R : 32'd0);
      table_rom[v] = t;
    end
    for (int v = 0; v < 256; v++) begin
      table_1[v] = (table_rom[v] >> 8) ^ table_rom[table_rom[v][7:0]];
      table_2[v] = (table_1[v] >> 8) ^ table_rom[table_1[v][7:0]];
      table_3[v] = (table_2[v] >> 8) ^ table_rom[table_2[v][7:0]];
    end
  end

  logic [31:0] state_reg;
  logic        out_valid_reg;
  logic [31:0] out_crc_reg;

  wire accept = s_valid && s_ready;

  assign s_ready = !out_valid_reg || m_ready;
  assign m_valid = out_valid_reg;
`ifdef CRC32_MUTATE
  assign m_crc = out_crc_reg ^ 32'h0000_0001;  // deliberate defect for the lockstep check
`else
  assign m_crc = out_crc_reg;
`endif

  always_ff @(posedge clk) begin
    logic [31:0] c;
    logic [DATA_W+31:0] d;  // s_data and a word of zeros past it: every word select in range
    if (rst) begin
      state_reg <= 32'hFFFF_FFFF;
      out_valid_reg <= 1'b0;
      out_crc_reg <= 32'd0;
    end else begin
      out_valid_reg <= out_valid_reg && !m_ready;
      if (accept) begin
        c = state_reg;
        d = {32'd0, s_data};
        for (int i = 0; i < BYTES; i += 4) begin
          if (i + 4 <= BYTES && (!s_last || i + 4 <= int'(s_cnt))) begin
            c = c ^ d[8*i+:32];
            c = table_3[c[7:0]] ^ table_2[c[15:8]] ^ table_1[c[23:16]] ^ table_rom[c[31:24]];
          end else begin
            for (int j = i; j < i + 4 && j < BYTES; j++)
              if (!s_last || j < int'(s_cnt)) c = (c >> 8) ^ table_rom[c[7:0]^d[8*j+:8]];
          end
        end
        state_reg <= c;
        if (s_last) begin
          out_crc_reg <= ~c;
          out_valid_reg <= 1'b1;
          state_reg <= 32'hFFFF_FFFF;
        end
      end
    end
  end

endmodule

`default_nettype wire
