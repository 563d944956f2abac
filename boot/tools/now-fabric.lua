-- Wireshark/tshark dissector for the NOW node fabric (EtherType 0x88B5).
--
-- Decodes the fabric header (net/fabric/wire.h), the keyed trailer, HELLO
-- and AUTO payloads, and the protocols the kernel carries on the fabric:
-- remote memory (net/rmem/proto.h), remote enqueue (net/req/wire.h), the
-- call facility (net/call/call_wire.h) and hybrid deposit's ATM cells
-- (net/deposit/cell.h).  Every field is little-endian, as on the wire.
--
--   tshark -X lua_script:boot/tools/now-fabric.lua -r n0.pcap -Y now
--   wireshark -X lua_script:boot/tools/now-fabric.lua n0.pcap
--
-- (or copy it into ~/.local/lib/wireshark/plugins/).  boot/cluster --pcap
-- DIR writes one capture per node.

local now = Proto("now", "NOW node fabric")

local types = { [1] = "DATA", [2] = "ACK", [3] = "RAW", [4] = "HELLO", [5] = "PROBE", [6] = "AUTO", [7] = "MCAST" }
local protos = { [3] = "rmem", [5] = "req", [6] = "deposit", [8] = "barrier", [9] = "call",
                 [16] = "app-test", [17] = "app-ping", [18] = "app-stages" }
local rmem_ops = { [1] = "WRITE", [2] = "READ_REQ", [3] = "READ_RESP", [4] = "CAS", [5] = "FADD",
                   [6] = "ATOMIC_RESP", [7] = "STATUS" }
local req_ops = { [1] = "ENQ", [2] = "STATUS" }

local f = now.fields
f.version = ProtoField.uint8("now.version", "Version")
f.type = ProtoField.uint8("now.type", "Type", base.DEC, types)
f.proto = ProtoField.uint8("now.proto", "Protocol", base.DEC, protos)
f.flags = ProtoField.uint8("now.flags", "Flags", base.HEX)
f.f_nocrc = ProtoField.bool("now.flags.nocrc", "No CRC", 8, nil, 0x01)
f.f_acknow = ProtoField.bool("now.flags.acknow", "Ack now", 8, nil, 0x02)
f.f_mac = ProtoField.bool("now.flags.keyed", "Keyed (MAC trailer)", 8, nil, 0x04)
f.src = ProtoField.uint16("now.src", "Source node")
f.dst = ProtoField.uint16("now.dst", "Destination node")
f.seq = ProtoField.uint32("now.seq", "Sequence")
f.ack = ProtoField.uint32("now.ack", "Ack")
f.sack = ProtoField.uint32("now.sack", "SACK bits", base.HEX)
f.limit = ProtoField.uint32("now.limit", "Credit limit")
f.len = ProtoField.uint16("now.len", "Payload length")
f.session = ProtoField.uint16("now.session", "Pair tag", base.HEX)
f.crc = ProtoField.uint32("now.crc", "CRC-32C", base.HEX)
f.ctr = ProtoField.uint32("now.trailer.ctr", "Frame counter (low 32 bits)")
f.tag = ProtoField.uint64("now.trailer.tag", "SipHash-2-4 tag", base.HEX)

f.h_nodes = ProtoField.uint16("now.hello.nodes", "Cluster size")
f.h_flags = ProtoField.uint16("now.hello.flags", "Flags", base.HEX)
f.h_mac = ProtoField.ether("now.hello.mac", "MAC")
f.h_known = ProtoField.uint64("now.hello.known", "Bound nodes", base.HEX)
f.h_lossless = ProtoField.uint64("now.hello.lossless", "Lossless nodes", base.HEX)
f.h_inc = ProtoField.uint64("now.hello.inc", "Incarnation", base.HEX)
f.h_echo = ProtoField.uint64("now.hello.echo", "Echoed challenge", base.HEX)
f.h_nonce = ProtoField.uint64("now.hello.nonce", "Challenge", base.HEX)
f.h_frame = ProtoField.uint16("now.hello.frame", "Longest frame taken")
f.h_heard = ProtoField.uint16("now.hello.heard", "Longest frame heard from the receiver")

f.a_expect = ProtoField.uint16("now.auto.expect", "Expected nodes (0: auto)")
f.a_nview = ProtoField.uint16("now.auto.nview", "View size (0: searching)")
f.a_heard = ProtoField.uint16("now.auto.heard", "Stations heard")
f.a_mac = ProtoField.ether("now.auto.mac", "MAC")
f.a_inc = ProtoField.uint64("now.auto.inc", "Incarnation", base.HEX)
f.a_member = ProtoField.ether("now.auto.member", "Member")

f.r_op = ProtoField.uint8("now.rmem.op", "Op", base.DEC, rmem_ops)
f.r_flags = ProtoField.uint8("now.rmem.flags", "Flags", base.HEX)
f.r_seg = ProtoField.uint16("now.rmem.seg", "Segment")
f.r_gen = ProtoField.uint32("now.rmem.gen", "Generation")
f.r_off = ProtoField.uint32("now.rmem.off", "Offset")
f.r_count = ProtoField.uint32("now.rmem.count", "Count")
f.r_tag = ProtoField.uint32("now.rmem.tag", "Tag")
f.r_status = ProtoField.int32("now.rmem.status", "Status")

f.q_op = ProtoField.uint8("now.req.op", "Op", base.DEC, req_ops)
f.q_flags = ProtoField.uint8("now.req.flags", "Flags", base.HEX)
f.q_gen = ProtoField.uint32("now.req.gen", "Generation")
f.q_addr = ProtoField.uint64("now.req.addr", "Queue address", base.HEX)
f.q_word = ProtoField.uint32("now.req.word", "Word", base.HEX)
f.q_tag = ProtoField.uint32("now.req.tag", "Tag")

f.c_op = ProtoField.uint8("now.call.op", "Op")
f.c_kind = ProtoField.uint8("now.call.kind", "Kind")
f.c_len = ProtoField.uint16("now.call.len", "Body length")
f.c_tag = ProtoField.uint32("now.call.tag", "Tag")
f.c_status = ProtoField.uint32("now.call.status", "Status")

f.cell = ProtoField.bytes("now.cell", "ATM cell")
f.cell_vci = ProtoField.uint16("now.cell.vci", "VCI")
f.cell_pt = ProtoField.uint8("now.cell.pt", "Payload type")

local HDR = 32

local function dissect_rmem(buf, tree)
	if buf:len() < 24 then return end
	local t = tree:add(now, buf(0, 24), "Remote memory")
	t:add_le(f.r_op, buf(0, 1))
	t:add_le(f.r_flags, buf(1, 1))
	t:add_le(f.r_seg, buf(2, 2))
	t:add_le(f.r_gen, buf(4, 4))
	t:add_le(f.r_off, buf(8, 4))
	t:add_le(f.r_count, buf(12, 4))
	t:add_le(f.r_tag, buf(16, 4))
	t:add_le(f.r_status, buf(20, 4))
	return rmem_ops[buf(0, 1):uint()]
end

local function dissect_req(buf, tree)
	if buf:len() < 28 then return end
	local t = tree:add(now, buf(0, 28), "Remote enqueue")
	t:add_le(f.q_op, buf(0, 1))
	t:add_le(f.q_flags, buf(1, 1))
	t:add_le(f.q_gen, buf(4, 4))
	t:add_le(f.q_addr, buf(8, 8))
	t:add_le(f.q_word, buf(16, 4))
	t:add_le(f.q_tag, buf(20, 4))
	return "REQ " .. (req_ops[buf(0, 1):uint()] or "?")
end

local function dissect_call(buf, tree)
	if buf:len() < 12 then return end
	local t = tree:add(now, buf(0, 12), "Call")
	t:add_le(f.c_op, buf(0, 1))
	t:add_le(f.c_kind, buf(1, 1))
	t:add_le(f.c_len, buf(2, 2))
	t:add_le(f.c_tag, buf(4, 4))
	t:add_le(f.c_status, buf(8, 4))
	return "call"
end

local function dissect_cells(buf, tree)
	local n = 0
	for off = 0, buf:len() - 53, 53 do
		local c = tree:add(f.cell, buf(off, 53))
		-- UNI header: GFC(4) VPI(8) VCI(16) PT(3) CLP(1) HEC(8)
		local h = buf(off, 4):uint()
		c:add(f.cell_vci, buf(off + 1, 3), bit.band(bit.rshift(h, 4), 0xffff))
		c:add(f.cell_pt, buf(off + 3, 1), bit.band(bit.rshift(h, 1), 7))
		n = n + 1
	end
	return n .. " cell" .. (n == 1 and "" or "s")
end

function now.dissector(buf, pinfo, tree)
	if buf:len() < HDR then return 0 end
	pinfo.cols.protocol = "NOW"
	local t = tree:add(now, buf(0, HDR), "NOW fabric")
	local ty = buf(1, 1):uint()
	local proto = buf(2, 1):uint()
	local flags = buf(3, 1):uint()
	local len = buf(24, 2):le_uint()
	t:add(f.version, buf(0, 1))
	t:add(f.type, buf(1, 1))
	t:add(f.proto, buf(2, 1))
	local ft = t:add(f.flags, buf(3, 1))
	ft:add(f.f_nocrc, buf(3, 1))
	ft:add(f.f_acknow, buf(3, 1))
	ft:add(f.f_mac, buf(3, 1))
	t:add_le(f.src, buf(4, 2))
	t:add_le(f.dst, buf(6, 2))
	t:add_le(f.seq, buf(8, 4))
	t:add_le(f.ack, buf(12, 4))
	t:add_le(f.sack, buf(16, 4))
	t:add_le(f.limit, buf(20, 4))
	t:add_le(f.len, buf(24, 2))
	t:add_le(f.session, buf(26, 2))
	t:add_le(f.crc, buf(28, 4))
	local src, dst = buf(4, 2):le_uint(), buf(6, 2):le_uint()
	local info = (types[ty] or ("type " .. ty))
	if src ~= 0xffff and dst ~= 0xffff then
		info = info .. string.format(" n%d->n%d", src, dst)
	elseif src ~= 0xffff then
		info = info .. string.format(" n%d->all", src)
	end
	if ty == 1 then info = info .. " seq=" .. buf(8, 4):le_uint() end
	local plen = math.min(len, buf:len() - HDR)
	if plen > 0 then
		local p = buf(HDR, plen)
		local what
		if ty == 4 and plen >= 52 then
			local h = t:add(now, p, "HELLO")
			h:add_le(f.h_nodes, p(0, 2))
			h:add_le(f.h_flags, p(2, 2))
			h:add(f.h_mac, p(4, 6))
			h:add_le(f.h_frame, p(10, 2))
			h:add_le(f.h_known, p(12, 8))
			h:add_le(f.h_lossless, p(20, 8))
			h:add_le(f.h_inc, p(28, 8))
			h:add_le(f.h_echo, p(36, 8))
			h:add_le(f.h_nonce, p(44, 8))
			if plen >= 54 then h:add_le(f.h_heard, p(52, 2)) end
		elseif ty == 6 and plen >= 24 then
			local a = t:add(now, p, "AUTO")
			a:add_le(f.a_expect, p(0, 2))
			a:add_le(f.a_nview, p(2, 2))
			a:add_le(f.a_heard, p(4, 2))
			a:add(f.a_mac, p(8, 6))
			a:add_le(f.a_inc, p(16, 8))
			local nview = p(2, 2):le_uint()
			for i = 0, nview - 1 do
				if 24 + 6 * i + 6 <= plen then a:add(f.a_member, p(24 + 6 * i, 6)) end
			end
			what = nview == 0 and "searching" or ("view of " .. nview)
		elseif proto == 3 then
			what = dissect_rmem(p:tvb(), t)
		elseif proto == 5 then
			what = dissect_req(p:tvb(), t)
		elseif proto == 9 then
			what = dissect_call(p:tvb(), t)
		elseif proto == 6 then
			what = dissect_cells(p:tvb(), t)
		end
		if what then info = info .. " " .. what end
	end
	if bit.band(flags, 4) ~= 0 and buf:len() >= HDR + len + 12 then
		t:add_le(f.ctr, buf(HDR + len, 4))
		t:add_le(f.tag, buf(HDR + len + 4, 8))
	end
	pinfo.cols.info = info
	return buf:len()
end

DissectorTable.get("ethertype"):add(0x88b5, now)
