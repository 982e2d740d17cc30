// The SRP-style storage experiment (docs/memory.md, "A storage path over RDMA"): an initiator
// in node0's kernel hands a command naming its buffers to a target in node1's kernel, which
// moves the data by RDMA and answers; the initiator completes the command in its completion
// handler.
#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <iterator>
#include <vector>

#include "models/host/host_wait.h"
#include "models/host/verbs/verbs.h"
#include "sim/cluster.h"
#include "sim/experiment.h"
#include "sim/traffic/endpoint.h"
#include "sim/traffic/memory_experiments.h"

namespace rnic::traffic {

namespace {

constexpr uint64_t kBlock = 4096;     // one buffer of the initiator's scatter list
constexpr uint64_t kSlot = 8192;      // kmalloc'd per buffer: no two physically adjacent
constexpr uint64_t kMsgBytes = 1024;  // a command or response message

// A command on the wire: what the target moves, where, and a tag.
struct Entry {
  uint32_t rkey, len;
  uint64_t to;
};
struct Command {
  uint32_t op;  // 0 read (the target writes the initiator's buffers), 1 write (it reads them)
  uint32_t n;
  uint64_t tag;
  Entry e[32];
};
static_assert(sizeof(Command) <= kMsgBytes, "a command fits its message");

// Each command's probes (ns): the initiator starts it, has registered its buffers, the target
// has the command, the target has moved the data, the initiator's completion handling of the
// response has returned, the initiator has deregistered.
struct Probes {
  double start, registered, received, moved, answered, done;
};

// The bytes of block i of command c (kStore: the target's store).
constexpr uint64_t kStore = ~0ull;
std::vector<uint8_t> pattern(uint64_t c, uint64_t i) {
  std::vector<uint8_t> v(kBlock);
  for (uint64_t k = 0; k < kBlock; ++k) v[k] = uint8_t((c * 131 + i * 31 + k * 7) >> (k % 3));
  return v;
}

ibv_send_wr send_wr(uint64_t id, ibv_sge* s, ibv_wr_opcode op) {
  ibv_send_wr w{};
  w.wr_id = id;
  w.sg_list = s;
  w.num_sge = 1;
  w.opcode = op;
  w.send_flags = IBV_SEND_SIGNALED;
  return w;
}

// One completion of `cq`, through the channel's handler path.
ibv_wc next_completion(ibv_cq* cq, ibv_comp_channel* ch) {
  ibv_wc wc{};
  while (ibv_poll_cq(cq, 1, &wc) == 0) {
    ibv_req_notify_cq(cq, 0);
    if (ibv_poll_cq(cq, 1, &wc) == 1) break;
    ibv_cq* got = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(ch, &got, &ctx) == 0) ibv_ack_cq_events(got, 1);
  }
  return wc;
}

int run_storage(ExperimentContext& ctx) {
  Cluster cl(two_hosts(ctx.cfg), ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  const std::vector<int64_t> sizes = ctx.get_ints("sizes");
  const std::vector<int64_t> depths = ctx.get_ints("depths");
  const std::vector<std::string> strategies = ctx.get_strings("strategies");
  const std::vector<std::string> ops = ctx.get_strings("ops");
  const uint64_t commands = uint64_t(ctx.get_int("commands"));
  uint64_t most = 0, deepest = 1;
  for (int64_t s : sizes) most = std::max(most, uint64_t(s));
  for (int64_t d : depths) deepest = std::max(deepest, uint64_t(d));
  const uint64_t max_bufs = most / kBlock;
  host::Driver& idrv = cl.nodes[0]->driver;
  host::PhysMem& imem = cl.nodes[0]->host.mem;
  int wrong = 0;  // blocks whose data is not what the command moved
  // Each endpoint's buffer: a command message and a response message per slot (a command
  // outstanding), then the target's store.
  const uint64_t msgs = 2 * deepest * kMsgBytes;
  EndpointConfig ec;
  ec.buf_bytes = size_t(most + msgs);
  ec.comp_channel = true;
  ec.cqe = int(std::max<uint64_t>(256, 4 * (deepest + max_bufs)));
  Oob oob;
  Endpoint a, b;
  int bad = 0;
  struct Point {
    std::string op, strategy;
    uint64_t depth, size;
    std::vector<Probes> p;
  };
  std::vector<Point> points;
  for (const std::string& op : ops)
    for (const std::string& st : strategies)
      for (int64_t d : depths)
        for (int64_t s : sizes)
          points.push_back({op, st, uint64_t(d), uint64_t(s), std::vector<Probes>(commands)});
  const uint32_t access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  constexpr uint64_t kRespId = 1, kCmdId = 2, kRespSendId = 3, kTargetCmd = 1000, kData = 10;
  struct Done {
    std::deque<uint64_t> responses;  // recv slots with a response, in arrival order
    int failed = 0;
  } done;
  cl.run({[&] {
            const host::KernelThread kernel;
            // The channels' start is not the strategies' (the target's buffer is only read).
            if (!warm_up(a, open_connected(a, 0, ec, oob), uint32_t(ec.buf_bytes))) ++bad;
            // The initiator's buffers, per slot: kernel memory, and for the preregistered
            // strategy one MR each, made once.
            std::vector<std::vector<uint64_t>> bufs(deepest);
            for (auto& v : bufs)
              for (uint64_t i = 0; i < max_bufs; ++i) v.push_back(idrv.kmalloc(kSlot));
            std::vector<std::vector<host::Driver::MrInfo>> pre(
                deepest, std::vector<host::Driver::MrInfo>(max_bufs));
            bool have_pre = false;
            std::vector<std::vector<host::Driver::MrInfo>> mrs(deepest);
            // The initiator's completion callback (a kernel thread's: run from the completion
            // interrupt): a response ends its command.
            rnic_cq_set_callback(
                a.cq,
                [](const ibv_wc* wc, void* arg) {
                  Done& d = *static_cast<Done*>(arg);
                  if (wc->status != IBV_WC_SUCCESS) ++d.failed;
                  if (wc->wr_id >= kRespId << 16) d.responses.push_back(wc->wr_id & 0xFFFF);
                },
                &done);
            if (ibv_req_notify_cq(a.cq, 0)) ++bad;
            for (Point& pt : points) {
              const uint64_t n = pt.size / kBlock;
              if (pt.strategy == "preregistered" && !have_pre) {
                for (uint64_t s = 0; s < deepest; ++s)
                  for (uint64_t i = 0; i < max_bufs; ++i)
                    if (idrv.kernel_reg_mem(a.pd->handle, bufs[s][i], kBlock, access, &pre[s][i]))
                      ++bad;
                have_pre = true;
              }
              // Command c uses slot c % depth: its buffers, its command message and the
              // receive for its response.
              auto start = [&](uint64_t c) {
                const uint64_t s = c % pt.depth;
                ibv_sge rs{a.addr() + (deepest + s) * kMsgBytes, uint32_t(kMsgBytes), a.mr->lkey};
                ibv_recv_wr r{(kRespId << 16) | s, nullptr, &rs, 1};
                ibv_recv_wr* bad_r = nullptr;
                if (ibv_post_recv(a.qps[0], &r, &bad_r)) ++bad;
                Probes& q = pt.p[c];
                q.start = rnic_now_ns();
                mrs[s].clear();
                Command cmd{};
                cmd.op = pt.op == "read" ? 0 : 1;
                cmd.tag = c;
                if (pt.strategy == "sg_handle") {
                  std::vector<std::pair<uint64_t, uint64_t>> list;
                  for (uint64_t i = 0; i < n; ++i) list.push_back({bufs[s][i], kBlock});
                  host::Driver::MrInfo m;
                  if (idrv.kernel_lock_sg(a.pd->handle, list, access, &m)) ++bad;
                  mrs[s].push_back(m);
                  cmd.n = 1;
                  cmd.e[0] = {m.lkey, uint32_t(pt.size), 0};
                } else {
                  cmd.n = uint32_t(n);
                  for (uint64_t i = 0; i < n; ++i) {
                    host::Driver::MrInfo m =
                        pt.strategy == "preregistered" ? pre[s][i] : host::Driver::MrInfo{};
                    if (pt.strategy == "per_buffer") {
                      if (idrv.kernel_reg_mem(a.pd->handle, bufs[s][i], kBlock, access, &m)) ++bad;
                      mrs[s].push_back(m);
                    }
                    cmd.e[i] = {m.lkey, uint32_t(kBlock), bufs[s][i]};
                  }
                }
                // A write command's data: this command's pattern in the buffers (set by the
                // model, outside the timed path's costs).
                if (pt.op == "write")
                  for (uint64_t i = 0; i < n; ++i)
                    imem.write(bufs[s][i] - host::Driver::kDirectMap, pattern(c, i).data(), kBlock);
                q.registered = rnic_now_ns();
                if (rnic_mem_write(static_cast<uint8_t*>(a.buf) + s * kMsgBytes, &cmd, sizeof cmd))
                  ++bad;
                ibv_sge ss{a.addr() + s * kMsgBytes, uint32_t(sizeof cmd), a.mr->lkey};
                ibv_send_wr w = send_wr(kCmdId, &ss, IBV_WR_SEND);
                ibv_send_wr* bad_w = nullptr;
                if (ibv_post_send(a.qps[0], &w, &bad_w)) ++bad;
              };
              uint64_t issued = 0;
              for (uint64_t finished = 0; finished < commands; ++finished) {
                while (issued < commands && issued - finished < pt.depth) start(issued++);
                // The oldest command outstanding completes in the CQ's callback, when its
                // response arrives (the target answers in command order).
                while (done.responses.empty())
                  if (rnic_dispatch_callbacks(a.channel) < 0) ++bad;
                const uint64_t s = done.responses.front();
                done.responses.pop_front();
                uint64_t c = 0;
                if (rnic_mem_read(static_cast<uint8_t*>(a.buf) + (deepest + s) * kMsgBytes, &c,
                                  sizeof c))
                  ++bad;
                if (c >= commands || c % pt.depth != s) {
                  ++bad;
                  continue;
                }
                Probes& q = pt.p[c];
                q.answered = rnic_now_ns();  // the handler is done with the response
                for (const host::Driver::MrInfo& m : mrs[s])
                  if (idrv.kernel_dereg(m)) ++bad;
                q.done = rnic_now_ns();
                // A read command's data: the target's store, block by block.
                std::vector<uint8_t> got(kBlock);
                for (uint64_t i = 0; pt.op == "read" && i < n; ++i) {
                  imem.read(bufs[s][i] - host::Driver::kDirectMap, got.data(), kBlock);
                  if (got != pattern(kStore, i)) ++wrong;
                }
              }
            }
            for (uint64_t s = 0; have_pre && s < deepest; ++s)
              for (uint64_t i = 0; i < max_bufs; ++i)
                if (idrv.kernel_dereg(pre[s][i])) ++bad;
            oob.put(1, {});
          },
          [&] {
            const host::KernelThread kernel;
            open_connected(b, 1, ec, oob);
            uint8_t* const store = static_cast<uint8_t*>(b.buf) + msgs;
            for (uint64_t i = 0; i < max_bufs; ++i)
              if (rnic_mem_write(store + i * kBlock, pattern(kStore, i).data(), kBlock)) ++bad;
            // A receive per slot for the commands; each is posted again once its command is
            // handled. Commands are handled one at a time, in order.
            auto post_cmd_recv = [&](uint64_t s) {
              ibv_sge rs{b.addr() + s * kMsgBytes, uint32_t(kMsgBytes), b.mr->lkey};
              ibv_recv_wr r{kTargetCmd + s, nullptr, &rs, 1};
              ibv_recv_wr* bad_r = nullptr;
              if (ibv_post_recv(b.qps[0], &r, &bad_r)) ++bad;
            };
            for (uint64_t s = 0; s < deepest; ++s) post_cmd_recv(s);
            std::deque<uint64_t> arrived;  // command slots received while data moved
            const uint64_t data_at = b.addr() + msgs;
            for (Point& pt : points)
              for (uint64_t k = 0; k < commands; ++k) {
                while (arrived.empty()) {
                  const ibv_wc got = next_completion(b.cq, b.channel);
                  if (got.status != IBV_WC_SUCCESS) ++bad;
                  if (got.wr_id >= kTargetCmd) arrived.push_back(got.wr_id - kTargetCmd);
                }
                const uint64_t s = arrived.front();
                arrived.pop_front();
                const double received = rnic_now_ns();
                Command cmd{};
                if (rnic_mem_read(static_cast<uint8_t*>(b.buf) + s * kMsgBytes, &cmd, sizeof cmd))
                  ++bad;
                if (cmd.tag >= commands || cmd.n > 32) {
                  ++bad;
                  continue;
                }
                Probes& q = pt.p[cmd.tag];
                q.received = received;
                // The data: from or to the target's store (its registered buffer, after the
                // messages).
                uint64_t at = data_at;
                for (uint32_t i = 0; i < cmd.n; ++i) {
                  ibv_sge ds{at, cmd.e[i].len, b.mr->lkey};
                  ibv_send_wr w =
                      send_wr(kData + i, &ds, cmd.op == 0 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ);
                  w.wr.rdma.remote_addr = cmd.e[i].to;
                  w.wr.rdma.rkey = cmd.e[i].rkey;
                  ibv_send_wr* bad_w = nullptr;
                  if (ibv_post_send(b.qps[0], &w, &bad_w)) ++bad;
                  at += cmd.e[i].len;
                }
                for (uint32_t moved = 0; moved < cmd.n;) {
                  const ibv_wc wc = next_completion(b.cq, b.channel);
                  if (wc.status != IBV_WC_SUCCESS) ++bad;
                  if (wc.wr_id >= kTargetCmd)
                    arrived.push_back(wc.wr_id - kTargetCmd);  // the next command
                  else if (wc.wr_id >= kData)
                    ++moved;  // not an earlier response's Send
                }
                q.moved = rnic_now_ns();
                std::vector<uint8_t> got(kBlock);
                for (uint64_t i = 0; cmd.op == 1 && i < pt.size / kBlock; ++i) {
                  if (rnic_mem_read(store + i * kBlock, got.data(), kBlock)) ++bad;
                  if (got != pattern(cmd.tag, i)) ++wrong;
                }
                if (cmd.op == 1)  // the store again as it was, for the next read
                  for (uint64_t i = 0; i < pt.size / kBlock; ++i)
                    if (rnic_mem_write(store + i * kBlock, pattern(kStore, i).data(), kBlock))
                      ++bad;
                // The response names the command; it goes from the slot's response message.
                uint8_t* resp = static_cast<uint8_t*>(b.buf) + (deepest + s) * kMsgBytes;
                if (rnic_mem_write(resp, &cmd.tag, sizeof cmd.tag)) ++bad;
                ibv_sge ss{b.addr() + (deepest + s) * kMsgBytes, 64, b.mr->lkey};
                ibv_send_wr w = send_wr(kRespSendId, &ss, IBV_WR_SEND);
                ibv_send_wr* bad_w = nullptr;
                if (ibv_post_send(b.qps[0], &w, &bad_w)) ++bad;
                post_cmd_recv(s);
              }
            oob.get(1);
          }});
  // Rows: per point the command latency and its stages (consecutive probes, so they add up to
  // each command's latency); IOPS and throughput over the point's span, from its first
  // command's start to its last one's end.
  static const char* kStages[] = {"register_us", "command_us", "target_us", "response_us",
                                  "deregister_us"};
  std::string table = fmt::format("{:>6} {:>14} {:>5} {:>7} {:>9} {:>8} {:>11}", "op", "strategy",
                                  "depth", "bytes", "iops", "mb_per_s", "latency_us");
  for (const char* st : kStages) table += fmt::format(" {:>13}", st);
  table += "\n";
  int mismatched = 0;
  for (const Point& pt : points) {
    // Commands start in order: the span begins with the first one's start.
    double stage[5] = {}, lat = 0, last = 0;
    const double first = pt.p.empty() ? 0 : pt.p.front().start;
    for (const Probes& q : pt.p) {
      last = std::max(last, q.done);
      const double parts[5] = {q.registered - q.start, q.received - q.registered,
                               q.moved - q.received, q.answered - q.moved, q.done - q.answered};
      double sum = 0;
      for (int i = 0; i < 5; ++i) {
        stage[i] += parts[i];
        sum += parts[i];
        if (parts[i] < 0) ++mismatched;
      }
      if (std::abs(sum - (q.done - q.start)) > 1e-6) ++mismatched;
      lat += q.done - q.start;
    }
    const double k = double(std::max<size_t>(pt.p.size(), 1));
    const double total_s = (last - first) / 1e9;
    nlohmann::ordered_json row{
        {"op", pt.op},
        {"strategy", pt.strategy},
        {"depth", pt.depth},
        {"bytes", pt.size},
        {"commands", pt.p.size()},
        {"iops", total_s > 0 ? double(pt.p.size()) / total_s : 0.0},
        {"mb_per_s", total_s > 0 ? double(pt.size * pt.p.size()) / total_s / 1e6 : 0.0},
        {"latency_us", lat / k / 1000}};
    for (int i = 0; i < 5; ++i) row[kStages[i]] = stage[i] / k / 1000;
    table += fmt::format("{:>6} {:>14} {:>5} {:>7} {:>9.0f} {:>8.1f} {:>11.2f}", pt.op, pt.strategy,
                         pt.depth, pt.size, double(row["iops"]), double(row["mb_per_s"]),
                         double(row["latency_us"]));
    for (int i = 0; i < 5; ++i) table += fmt::format(" {:>13.2f}", stage[i] / k / 1000);
    table += "\n";
    ctx.rows.push_back(std::move(row));
  }
  ctx.x = "bytes";
  ctx.y = {"mb_per_s", "latency_us"};
  ctx.stack.assign(std::begin(kStages), std::end(kStages));
  ctx.summary = table + (bad ? "storage: an operation FAILED\n" : "") +
                (wrong ? fmt::format("storage: {} blocks hold the wrong data\n", wrong) : "") +
                (mismatched ? "storage: a command's stages do not add up to its latency\n" : "");
  bad += done.failed;
  return bad || mismatched || wrong ? 1 : 0;
}

}  // namespace

void register_storage_experiment() {
  ExperimentKind k;
  k.kind = "storage";
  k.has_links = true;
  k.desc =
      "SRP-style storage commands from a kernel initiator to a kernel target: registration "
      "strategies against command size, latency taken apart stage by stage";
  k.keys = {
      {"sizes",
       ExpKey::kIntList,
       "[4096, 32768, 131072]",
       4096,
       131072,
       {},
       "B",
       "command sizes (multiples of 4 KiB: 4 KiB buffers, up to 32)"},
      {"commands", ExpKey::kInt, "20", 1, 1000000, {}, "", "commands per point"},
      {"depths",
       ExpKey::kIntList,
       "[1]",
       1,
       32,
       {},
       "",
       "commands outstanding at once (each its own buffers; the target handles them in order)"},
      {"strategies",
       ExpKey::kStringList,
       "[per_buffer, sg_handle, preregistered]",
       0,
       0,
       {"per_buffer", "sg_handle", "preregistered"},
       "",
       "per_buffer: one kernel_reg_mem per 4 KiB buffer per command; sg_handle: one "
       "kernel_lock_sg per command; preregistered: every buffer registered once at start"},
      {"ops",
       ExpKey::kStringList,
       "[read, write]",
       0,
       0,
       {"read", "write"},
       "",
       "read: the target RDMA Writes the buffers; write: it RDMA Reads them"},
  };
  k.run = run_storage;
  add_experiment_kind(std::move(k));
}

}  // namespace rnic::traffic
