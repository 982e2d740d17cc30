-- rnicsim.lua: Wireshark dissector for rnicsim captures (WIRE.md).
-- Decodes the EFE header (EtherType 0x88B5) and hands a DATA frame's payload to Wireshark's
-- own DDP/RDMAP dissector (iwarp_ddp_rdmap).
--   tshark -X lua_script:scripts/wireshark/rnicsim.lua --disable-protocol rpcordma -r out/link0.pcap
-- (rpcordma's heuristic would otherwise claim Send payloads.)

local efe = Proto("efe", "rnicsim Ether Forwarding Engine")

local types = { [0] = "DATA", [1] = "ACK", [2] = "NACK", [3] = "RNR" }
local f = efe.fields
f.version = ProtoField.uint8("efe.version", "Version", base.DEC, nil, 0xF0)
f.type = ProtoField.uint8("efe.type", "Type", base.DEC, types, 0x0F)
f.ar = ProtoField.bool("efe.ar", "AR (ACK requested)", 8, nil, 0x80)
f.ce = ProtoField.bool("efe.ce", "CE (congestion experienced)", 8, nil, 0x40)
f.ece = ProtoField.bool("efe.ece", "ECE (congestion echo)", 8, nil, 0x20)
f.rtx = ProtoField.bool("efe.rtx", "RTX (retransmission)", 8, nil, 0x10)
f.rq = ProtoField.bool("efe.rq", "RQ (reflected QPN: a reset for a QP that is not there)", 8, nil, 0x08)
f.sy = ProtoField.bool("efe.sy", "SY (resynchronise: the channel starts afresh at this SEQ)", 8, nil, 0x04)
f.qd = ProtoField.bool("efe.qd", "QD (bytes 12-14: the echoed frame's forward queueing delay)", 8, nil, 0x02)
f.ut = ProtoField.bool("efe.ut", "UT (byte 15: the path's utilisation, a switch's stamp or its echo)", 8, nil, 0x01)
f.util = ProtoField.uint8("efe.util", "Path utilisation (1/64ths)", base.DEC)
f.fwd_q = ProtoField.uint24("efe.fwd_queueing_ns", "Forward queueing delay (ns)", base.DEC)
f.length = ProtoField.uint16("efe.length", "Payload length", base.DEC)
f.seq = ProtoField.uint32("efe.seq", "SEQ", base.DEC)
f.ack = ProtoField.uint32("efe.ack", "ACK", base.DEC)
f.qpn = ProtoField.uint24("efe.qpn", "Destination QPN", base.HEX)
f.rsvd2 = ProtoField.uint8("efe.reserved2", "Reserved", base.HEX)
f.ts = ProtoField.uint32("efe.ts", "TS (ns)", base.DEC)
f.failed_qpn = ProtoField.uint32("efe.failed_qpn", "QPN that failed with the channel", base.HEX)
f.nack_first = ProtoField.uint32("efe.nack.first", "Missing from SEQ", base.DEC)
f.nack_end = ProtoField.uint32("efe.nack.end", "Missing until SEQ (exclusive)", base.DEC)

local ef_short = ProtoExpert.new("efe.short", "Frame shorter than the EFE header", expert.group.MALFORMED,
                                 expert.severity.ERROR)
local ef_length = ProtoExpert.new("efe.bad_length", "EFE length past the end of the frame",
                                  expert.group.MALFORMED, expert.severity.ERROR)
efe.experts = { ef_short, ef_length }

local ddp_rdmap = Dissector.get("iwarp_ddp_rdmap")

function efe.dissector(buf, pinfo, tree)
  pinfo.cols.protocol = "EFE"
  local t = tree:add(efe, buf(0, math.min(20, buf:len())))
  if buf:len() < 20 then
    t:add_proto_expert_info(ef_short)
    return
  end
  t:add(f.version, buf(0, 1))
  t:add(f.type, buf(0, 1))
  t:add(f.ar, buf(1, 1))
  t:add(f.ce, buf(1, 1))
  t:add(f.ece, buf(1, 1))
  t:add(f.rtx, buf(1, 1))
  t:add(f.rq, buf(1, 1))
  t:add(f.sy, buf(1, 1))
  t:add(f.qd, buf(1, 1))
  t:add(f.ut, buf(1, 1))
  t:add(f.length, buf(2, 2))
  t:add(f.seq, buf(4, 4))
  t:add(f.ack, buf(8, 4))
  if buf(1, 1):bitfield(6, 1) == 1 then
    t:add(f.fwd_q, buf(12, 3))
  else
    t:add(f.qpn, buf(12, 3))
  end
  if buf(1, 1):bitfield(7, 1) == 1 then
    t:add(f.util, buf(15, 1)):append_text(string.format(" (%.3f)", buf(15, 1):uint() / 64))
  else
    t:add(f.rsvd2, buf(15, 1))
  end
  t:add(f.ts, buf(16, 4))
  local ftype = buf(0, 1):bitfield(4, 4)
  local len = buf(2, 2):uint()
  local name = types[ftype] or "?"
  local flags = ""
  for _, b in ipairs({ { 0, "AR" }, { 3, "RTX" }, { 4, "RQ" }, { 5, "SY" } }) do
    if buf(1, 1):bitfield(b[1], 1) == 1 then flags = flags .. " " .. b[2] end
  end
  pinfo.cols.info = string.format("EFE %s seq=%d ack=%d%s", name, buf(4, 4):uint(), buf(8, 4):uint(), flags)
  if 20 + len > buf:len() then
    t:add_proto_expert_info(ef_length)
    return
  end
  if ftype == 2 and len >= 8 then
    -- A selective NACK's missing ranges (docs/decisions.md): first and end SEQ, 8 bytes each.
    local rs = {}
    for i = 0, len - 8, 8 do
      local r = t:add(efe, buf(20 + i, 8), "Missing range")
      r:add(f.nack_first, buf(20 + i, 4))
      r:add(f.nack_end, buf(24 + i, 4))
      rs[#rs + 1] = string.format("%d-%d", buf(20 + i, 4):uint(), buf(24 + i, 4):uint() - 1)
    end
    pinfo.cols.info = tostring(pinfo.cols.info) .. " missing " .. table.concat(rs, ",")
  elseif ftype == 0 and buf(12, 3):uint() == 0xFFFFFF and len == 0 then
    -- An announcement of no QP: a keepalive probe (efe.keepalive_ns, docs/decisions.md).
    pinfo.cols.info = tostring(pinfo.cols.info) .. " keepalive"
  elseif ftype == 0 and buf(12, 3):uint() == 0xFFFFFF then
    -- The EFE's own frame after a channel failure (docs/decisions.md): the QPNs that failed.
    local qpns = {}
    for i = 0, len - 4, 4 do
      t:add(f.failed_qpn, buf(20 + i, 4))
      qpns[#qpns + 1] = string.format("%d", buf(20 + i, 4):uint())
    end
    pinfo.cols.info = tostring(pinfo.cols.info) .. " failed QPs " .. table.concat(qpns, ",")
  elseif ftype == 0 and len > 0 then
    -- The payload stops at `length`: Ethernet padding is not DDP.
    ddp_rdmap:call(buf(20, len):tvb(), pinfo, tree)
  end
end

DissectorTable.get("ethertype"):add(0x88B5, efe)
