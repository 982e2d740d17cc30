// Experiments of the scatter-gather firmware and memory (docs/memory.md): sg_registration,
// phys_scan, reg_cache, sg_transfer, callbacks, odp.
#include "sim/traffic/memory_experiments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include "models/common/sim_time.h"
#include "models/host/verbs/verbs.h"
#include "sim/cluster.h"
#include "sim/experiment.h"
#include "sim/traffic/endpoint.h"

namespace rnic::traffic {

namespace {

// The CQ's next completion, polled for as a busy loop would.
ibv_wc next_wc(ibv_cq* cq) {
  ibv_wc wc{};
  while (ibv_poll_cq(cq, 1, &wc) == 0) rnic_wait_cq(cq, RNIC_WAIT_FOREVER);
  return wc;
}

// N regions of B bytes each, registered as one scatter-gather handle (rnic_reg_sg_mr) and as
// one MR per region (ibv_reg_mr), and deregistered, by one thread of node0's program. The
// regions lie 8 KiB apart in one buffer, each starting 64 B further into its slot than the one
// before, so no two share a page and none is page aligned but the first.
int run_sg_registration(ExperimentContext& ctx) {
  Cluster cl(two_hosts(ctx.cfg), ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  const std::vector<int64_t> counts = ctx.get_ints("regions");
  const std::vector<int64_t> sizes = ctx.get_ints("region_bytes");
  const std::vector<std::string> modes = ctx.get_strings("modes");
  constexpr uint64_t kSlot = 8192;
  int64_t most = 0;
  for (int64_t n : counts) most = std::max(most, n);
  uint64_t base = 0;  // page aligned, in the process's own address space (rnic_malloc)
  int bad = 0;
  std::string table = fmt::format("{:>8} {:>13} {:>17} {:>12} {:>14}\n", "regions", "region_bytes",
                                  "mode", "register_ns", "deregister_ns");
  // One point's row: registered from t0 to t1, deregistered from t1 to t2 (ns).
  auto record = [&](int64_t n, int64_t b, const std::string& mode, double t0, double t1,
                    double t2) {
    const int64_t reg_ns = std::llround(t1 - t0), dereg_ns = std::llround(t2 - t1);
    ctx.rows.push_back({{"regions", n},
                        {"region_bytes", b},
                        {"mode", mode},
                        {"register_ns", reg_ns},
                        {"deregister_ns", dereg_ns}});
    table += fmt::format("{:>8} {:>13} {:>17} {:>12} {:>14}\n", n, b, mode, reg_ns, dereg_ns);
  };
  // Kernel rows: node0's kernel holds `most` buffers of 8 KiB of kernel memory (kmalloc: page
  // aligned, none physically adjacent to the next) and registers the first b bytes of the first
  // n, through the
  // driver's kernel interface: one kernel_lock_sg of all of them, or one kernel_reg_mem each.
  host::Driver& drv = cl.nodes[0]->driver;
  std::vector<uint64_t> kbufs;
  uint32_t kpd = 0;
  const uint32_t kaccess =
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  auto kernel_point = [&](int64_t n, int64_t b, const std::string& mode) {
    if (kbufs.empty()) {
      for (int64_t i = 0; i < most; ++i) kbufs.push_back(drv.kmalloc(kSlot));
      if (drv.alloc_pd(&kpd)) ++bad;
    }
    std::vector<std::pair<uint64_t, uint64_t>> regions;
    for (int64_t i = 0; i < n; ++i) regions.push_back({kbufs[size_t(i)], uint64_t(b)});
    const double t0 = rnic_now_ns();
    std::vector<host::Driver::MrInfo> mrs;
    host::Driver::MrInfo mr;
    if (mode == "kernel_sg") {
      if (drv.kernel_lock_sg(kpd, regions, kaccess, &mr) == 0)
        mrs.push_back(mr);
      else
        ++bad;
    } else {
      for (const auto& [kva, len] : regions) {
        if (drv.kernel_reg_mem(kpd, kva, len, kaccess, &mr) == 0)
          mrs.push_back(mr);
        else
          ++bad;
      }
    }
    const double t1 = rnic_now_ns();
    for (const host::Driver::MrInfo& m : mrs)
      if (drv.kernel_dereg(m) != 0) ++bad;
    const double t2 = rnic_now_ns();
    record(n, b, mode, t0, t1, t2);
  };
  cl.run({[&] {
    base = reinterpret_cast<uint64_t>(rnic_malloc(uint64_t(most) * kSlot + kSlot));
    ibv_device** list = ibv_get_device_list(nullptr);
    ibv_context* ctxv = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    ibv_pd* pd = ibv_alloc_pd(ctxv);
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    for (int64_t b : sizes) {
      for (int64_t n : counts) {
        std::vector<ibv_sge> sges(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
          sges[size_t(i)] = {base + uint64_t(i) * kSlot + uint64_t(i) * 64 % 4096, uint32_t(b), 0};
        for (const std::string& mode : modes) {
          if (mode == "kernel_sg" || mode == "kernel_per_region") {
            kernel_point(n, b, mode);
            continue;
          }
          const double t0 = rnic_now_ns();
          std::vector<ibv_mr*> mrs;
          if (mode == "sg") {
            mrs.push_back(rnic_reg_sg_mr(pd, sges.data(), int(n), access));
          } else {
            for (const ibv_sge& s : sges)
              mrs.push_back(ibv_reg_mr(pd, reinterpret_cast<void*>(s.addr), s.length, access));
          }
          const double t1 = rnic_now_ns();
          for (ibv_mr* m : mrs) {
            if (!m || ibv_dereg_mr(m) != 0) ++bad;
          }
          const double t2 = rnic_now_ns();
          record(n, b, mode, t0, t1, t2);
        }
      }
    }
    ibv_dealloc_pd(pd);
    ibv_close_device(ctxv);
  }});
  ctx.x = "regions";
  ctx.y = {"register_ns", "deregister_ns"};
  ctx.summary = table + (bad ? "sg_registration: a registration or deregistration FAILED" : "");
  return bad ? 1 : 0;
}

// node1's privileged thread registers the physical address space from 0 to the top of its
// memory in windows of `window_mib`, one physical region at a time; node0 reads 64 B at each
// window's start. A window is readable when the Read completes successfully. A Read that fails
// (the requester's Read Response timer, or a Terminate) leaves both QPs in ERROR: the two sides
// then close their endpoints and connect new ones. Adjacent windows of the same outcome merge.
int run_phys_scan(ExperimentContext& ctx) {
  Cluster cl(two_hosts(ctx.cfg), ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  const uint64_t window = uint64_t(ctx.get_int("window_mib")) << 20;
  const uint64_t top = uint64_t(ctx.cfg.host.mem_mib) << 20;
  EndpointConfig ec;
  ec.buf_bytes = 4096;
  ec.timeout = uint8_t(ctx.get_int("timeout"));
  ec.retry_cnt = uint8_t(ctx.get_int("retry_cnt"));
  struct Window {
    uint64_t start, end;
    bool readable;
    ibv_wc_status status;
  };
  std::vector<Window> windows;
  Oob oob;
  Endpoint a, b;
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  int bad = 0;
  cl.run({{0,
           [&] {
             open_connected(a, 0, ec, oob);
             for (uint64_t start = 0; start < top; start += window) {
               const PeerInfo w = oob.get(0);
               ibv_wc wc{};
               if (post_rdma(a.qps[0], IBV_WR_RDMA_READ, start, a.addr(), 64, a.mr->lkey, w.addr,
                             w.rkey) != 0) {
                 ++bad;
                 wc.status = IBV_WC_GENERAL_ERR;
               } else {
                 wc = next_wc(a.cq);
               }
               windows.push_back(
                   {start, std::min(top, start + window), wc.status == IBV_WC_SUCCESS, wc.status});
               PeerInfo done;
               done.len = wc.status == IBV_WC_SUCCESS ? 1 : 0;
               oob.put(1, done);
               if (wc.status != IBV_WC_SUCCESS) {
                 a.close();
                 open_connected(a, 0, ec, oob);
               }
             }
             a.close();
           }},
          {1,
           [&] {
             open_connected(b, 1, ec, oob);
             for (uint64_t start = 0; start < top; start += window) {
               const uint64_t len = std::min(top, start + window) - start;
               ibv_mr* mr = rnic_reg_phys_mr(b.pd, start, len, access);
               if (!mr) {
                 ++bad;
                 oob.put(0, {});
                 oob.get(1);
                 continue;
               }
               PeerInfo w;
               w.addr = start;
               w.rkey = mr->rkey;
               oob.put(0, w);
               const bool ok = oob.get(1).len == 1;
               ibv_dereg_mr(mr);
               if (!ok) {
                 b.close();
                 open_connected(b, 1, ec, oob);
               }
             }
             b.close();
           },
           true}});
  std::string table = fmt::format("{:>18} {:>18} {:>9}\n", "start", "end", "readable");
  for (size_t i = 0; i < windows.size();) {
    size_t j = i;
    while (j + 1 < windows.size() && windows[j + 1].readable == windows[i].readable) ++j;
    ctx.rows.push_back(
        {{"start", windows[i].start}, {"end", windows[j].end}, {"readable", windows[i].readable}});
    table += fmt::format("{:#18x} {:#18x} {:>9}\n", windows[i].start, windows[j].end,
                         windows[i].readable ? "yes" : "no");
    i = j + 1;
  }
  ctx.x = "start";
  ctx.y = {"readable"};
  ctx.summary = table + (bad ? "phys_scan: a registration or post FAILED" : "");
  return bad ? 1 : 0;
}

// A storage-like pattern: node0 keeps a pool of `buffers` buffers of `size` bytes and, `ops`
// times, takes one of them (a fixed pseudo-random sequence), registers it, RDMA-writes it to
// node1, waits for the completion and deregisters it; with the verbs library's registration
// cache off, then on (`cache_entries` idle registrations).
int run_reg_cache(ExperimentContext& ctx) {
  Cluster cl(two_hosts(ctx.cfg), ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  const uint64_t size = uint64_t(ctx.get_int("size"));
  const uint64_t nbuf = uint64_t(ctx.get_int("buffers"));
  const uint64_t ops = uint64_t(ctx.get_int("ops"));
  const size_t entries = size_t(ctx.get_int("cache_entries"));
  EndpointConfig ec;
  ec.buf_bytes = size_t(size);
  Oob oob;
  Endpoint a, b;
  int bad = 0;
  std::vector<void*> pool;  // rnic_malloc'd in node0's process
  std::string table = fmt::format("{:>6} {:>8} {:>8} {:>8} {:>10} {:>10} {:>10}\n", "cache", "hits",
                                  "misses", "evicted", "hit_rate", "us_per_op", "mb_per_s");
  cl.run({[&] {
            open_connected(a, 0, ec, oob);
            const PeerInfo p = oob.get(0);
            if (!warm_up(a, p, uint32_t(size))) ++bad;  // the channel's start is not the cache's
            for (uint64_t i = 0; i < nbuf; ++i) pool.push_back(rnic_malloc(size));
            for (const std::string& mode : ctx.get_strings("modes")) {
              rnic_reg_cache_set(a.ctx, mode == "on" ? entries : 0);
              rnic_reg_cache_stats s0{};
              rnic_reg_cache_query(a.ctx, &s0);
              uint64_t x = 12345;
              const double t0 = rnic_now_ns();
              for (uint64_t i = 0; i < ops; ++i) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                void* buf = pool[(x >> 33) % nbuf];
                ibv_mr* mr = ibv_reg_mr(a.pd, buf, size, IBV_ACCESS_LOCAL_WRITE);
                if (!mr) {
                  ++bad;
                  break;
                }
                if (post_rdma(a.qps[0], IBV_WR_RDMA_WRITE, i, reinterpret_cast<uint64_t>(buf),
                              uint32_t(size), mr->lkey, p.addr, p.rkey) != 0) {
                  ++bad;
                  break;
                }
                const ibv_wc wc = next_wc(a.cq);
                if (wc.status != IBV_WC_SUCCESS || ibv_dereg_mr(mr) != 0) ++bad;
              }
              const double ns = rnic_now_ns() - t0;
              rnic_reg_cache_stats s1{};
              rnic_reg_cache_query(a.ctx, &s1);
              const uint64_t hits = s1.hits - s0.hits, misses = s1.misses - s0.misses;
              const uint64_t evicted = s1.evictions - s0.evictions;
              const double rate = mode == "on" ? double(hits) / double(ops) : 0.0;
              const double mbps = double(ops * size) / (ns / 1e9) / 1e6;
              ctx.rows.push_back({{"cache", mode},
                                  {"buffers", nbuf},
                                  {"size", size},
                                  {"ops", ops},
                                  {"hits", hits},
                                  {"misses", mode == "on" ? misses : ops},
                                  {"evictions", evicted},
                                  {"hit_rate", rate},
                                  {"us_per_op", ns / double(ops) / 1000.0},
                                  {"mb_per_s", mbps}});
              table += fmt::format("{:>6} {:>8} {:>8} {:>8} {:>10.3f} {:>10.3f} {:>10.1f}\n", mode,
                                   hits, mode == "on" ? misses : ops, evicted, rate,
                                   ns / double(ops) / 1000.0, mbps);
            }
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, ec, oob);
            PeerInfo p = b.info();
            oob.put(0, p);
            oob.get(1);
          }});
  ctx.x = "cache";
  ctx.y = {"hit_rate", "mb_per_s", "us_per_op"};
  ctx.summary = table + (bad ? "reg_cache: an operation FAILED" : "");
  return bad ? 1 : 0;
}

// node1 holds `regions` regions of `region_bytes` (8 KiB apart, each 64 B further into its
// page); node0 reads them into, or writes them from, one contiguous buffer: as one RDMA
// operation on one scatter-gather handle, or as one operation per region on one MR each (all
// posted at once). Each point `iters` times: node1 registers (timed), hands the keys over,
// node0 transfers (timed) and node1 deregisters. MB/s with the registration's time included
// and excluded.
int run_sg_transfer(ExperimentContext& ctx) {
  Cluster cl(two_hosts(ctx.cfg), ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  const uint64_t n = uint64_t(ctx.get_int("regions"));
  const uint64_t rb = uint64_t(ctx.get_int("region_bytes"));
  const uint64_t iters = uint64_t(ctx.get_int("iters"));
  const uint64_t total = n * rb;
  constexpr uint64_t kSlot = 8192;
  EndpointConfig ec;
  ec.buf_bytes = size_t(total);
  ec.send_depth = uint32_t(std::max<uint64_t>(n, 1));
  ec.cqe = int(2 * n + 8);
  uint64_t base = 0;  // node1's regions: rnic_malloc'd in its process before it connects
  auto region = [&](uint64_t i) { return base + i * kSlot + i * 64 % 4096; };
  // The kernel modes' regions: node1's kernel memory, one kmalloc'd 8 KiB buffer each (the
  // region at its start), registered by node1's kernel in the PD of node1's QP.
  host::Driver& drv = cl.nodes[1]->driver;
  std::vector<uint64_t> kbufs;
  std::vector<host::Driver::MrInfo> kmrs;
  Oob oob;
  Endpoint a, b;
  int bad = 0;
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  struct Point {
    std::string mode, op;
    double reg_ns = 0, xfer_ns = 0;
  };
  std::vector<Point> points;
  for (const std::string& mode : ctx.get_strings("modes"))
    for (const std::string& op : ctx.get_strings("ops")) points.push_back({mode, op});
  // One repetition of a kernel mode on node1: register (timed), hand node0 the keys, wait for
  // its transfer, deregister.
  auto kernel_iteration = [&](const std::string& mode, double& reg_ns) {
    if (kbufs.empty())
      for (uint64_t i = 0; i < n; ++i) kbufs.push_back(drv.kmalloc(kSlot));
    const double t0 = rnic_now_ns();
    PeerInfo keys;
    host::Driver::MrInfo mr;
    if (mode == "kernel_sg") {
      std::vector<std::pair<uint64_t, uint64_t>> list;
      for (uint64_t i = 0; i < n; ++i) list.push_back({kbufs[size_t(i)], rb});
      if (drv.kernel_lock_sg(b.pd->handle, list, uint32_t(access), &mr) == 0) {
        kmrs.push_back(mr);
        keys.qpns.push_back(mr.lkey);
      } else {
        ++bad;
        keys.qpns.push_back(0);
      }
    } else {
      for (uint64_t i = 0; i < n; ++i) {
        if (drv.kernel_reg_mem(b.pd->handle, kbufs[size_t(i)], rb, uint32_t(access), &mr) == 0) {
          kmrs.push_back(mr);
          keys.qpns.push_back(mr.lkey);
        } else {
          ++bad;
          keys.qpns.push_back(0);
        }
      }
    }
    reg_ns += rnic_now_ns() - t0;
    oob.put(0, keys);
    oob.get(1);
    for (const host::Driver::MrInfo& m : kmrs)
      if (drv.kernel_dereg(m) != 0) ++bad;
    kmrs.clear();
  };
  cl.run({[&] {
            // The channels' start is not the transfer's.
            if (!warm_up(a, open_connected(a, 0, ec, oob), uint32_t(total))) ++bad;
            for (Point& pt : points)
              for (uint64_t it = 0; it < iters; ++it) {
                const PeerInfo keys = oob.get(0);  // addr: count of rkeys in qpns
                const double t0 = rnic_now_ns();
                const bool one = pt.mode == "sg" || pt.mode == "kernel_sg";
                const uint64_t ops = one ? 1 : n;
                for (uint64_t i = 0; i < ops; ++i) {
                  const uint64_t to = one                              ? 0
                                      : pt.mode == "kernel_per_region" ? kbufs[size_t(i)]
                                                                       : region(i);
                  if (post_rdma(a.qps[0], pt.op == "read" ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, i,
                                a.addr() + i * rb, uint32_t(one ? total : rb), a.mr->lkey, to,
                                keys.qpns[size_t(i)]) != 0)
                    ++bad;
                }
                for (uint64_t i = 0; i < ops; ++i)
                  if (next_wc(a.cq).status != IBV_WC_SUCCESS) ++bad;
                pt.xfer_ns += rnic_now_ns() - t0;
                oob.put(1, {});
              }
            oob.put(1, {});
          },
          [&] {
            base = reinterpret_cast<uint64_t>(rnic_malloc(n * kSlot + kSlot));
            open_connected(b, 1, ec, oob);
            for (Point& pt : points)
              for (uint64_t it = 0; it < iters; ++it) {
                if (pt.mode.rfind("kernel_", 0) == 0) {
                  kernel_iteration(pt.mode, pt.reg_ns);
                  continue;
                }
                const double t0 = rnic_now_ns();
                std::vector<ibv_mr*> mrs;
                PeerInfo keys;
                if (pt.mode == "sg") {
                  std::vector<ibv_sge> sges;
                  for (uint64_t i = 0; i < n; ++i) sges.push_back({region(i), uint32_t(rb), 0});
                  mrs.push_back(rnic_reg_sg_mr(b.pd, sges.data(), int(n), access));
                } else {
                  for (uint64_t i = 0; i < n; ++i)
                    mrs.push_back(ibv_reg_mr(b.pd, reinterpret_cast<void*>(region(i)), rb, access));
                }
                pt.reg_ns += rnic_now_ns() - t0;
                for (ibv_mr* m : mrs) {
                  if (!m) {
                    ++bad;
                    keys.qpns.push_back(0);
                  } else {
                    keys.qpns.push_back(m->rkey);
                  }
                }
                oob.put(0, keys);
                oob.get(1);
                for (ibv_mr* m : mrs)
                  if (m && ibv_dereg_mr(m) != 0) ++bad;
              }
            oob.get(1);
          }});
  std::string table = fmt::format("{:>17} {:>6} {:>13} {:>8} {:>10}\n", "mode", "op",
                                  "registration", "bytes", "mb_per_s");
  for (const Point& pt : points)
    for (const char* reg : {"excluded", "included"}) {
      const double ns =
          (pt.xfer_ns + (std::string(reg) == "included" ? pt.reg_ns : 0)) / double(iters);
      const double mbps = double(total) / (ns / 1e9) / 1e6;
      ctx.rows.push_back({{"mode", pt.mode},
                          {"op", pt.op},
                          {"registration", reg},
                          {"bytes", total},
                          {"mb_per_s", mbps}});
      table +=
          fmt::format("{:>17} {:>6} {:>13} {:>8} {:>10.1f}\n", pt.mode, pt.op, reg, total, mbps);
    }
  ctx.x = "mode";
  ctx.y = {"mb_per_s"};
  ctx.summary = table + (bad ? "sg_transfer: an operation FAILED" : "");
  return bad ? 1 : 0;
}

// node0 writes `size` bytes to node1 `ops` times, one at a time, and handles each completion
// (`handler_ns` of work): by busy polling its CQ, or by a completion callback run in a thread
// that sleeps on the CQ's completion channel (rnic_dispatch_callbacks). Per completion: the
// latency from the post to the end of its handling, and the host CPU time spent (the thread's
// and the interrupt handler's).
int run_callbacks(ExperimentContext& ctx) {
  Cluster cl(two_hosts(ctx.cfg), ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  const std::vector<int64_t> sizes = ctx.get_ints("sizes");
  uint64_t most = 64;
  for (int64_t z : sizes) most = std::max(most, uint64_t(z));
  const uint64_t ops = uint64_t(ctx.get_int("ops"));
  const uint64_t handler_ns = uint64_t(ctx.get_int("handler_ns"));
  EndpointConfig ec;
  ec.buf_bytes = size_t(most);
  ec.comp_channel = true;
  Oob oob;
  Endpoint a, b;
  int bad = 0;
  std::string table = fmt::format("{:>9} {:>6} {:>6} {:>11} {:>9}\n", "mode", "size", "ops",
                                  "latency_us", "cpu_us");
  struct Done {
    double t = 0;
    int n = 0;
    uint64_t handler_ns = 0;
    bool ok = true;
  } done;
  cl.run({[&] {
            open_connected(a, 0, ec, oob);
            const PeerInfo p = oob.get(0);
            rnic_cq_set_callback(
                a.cq,
                [](const ibv_wc* wc, void* arg) {
                  auto* d = static_cast<Done*>(arg);
                  rnic_spend_ns(d->handler_ns);
                  d->ok = d->ok && wc->status == IBV_WC_SUCCESS;
                  d->t = rnic_now_ns();
                  ++d->n;
                },
                &done);
            done.handler_ns = handler_ns;
            for (const int64_t sz : sizes)
              for (const std::string& mode : ctx.get_strings("modes")) {
                const uint64_t size = uint64_t(sz);
                double lat = 0;
                const double cpu0 = rnic_cpu_ns(), irq0 = rnic_irq_cpu_ns();
                for (uint64_t i = 0; i < ops; ++i) {
                  if (mode == "callback") ibv_req_notify_cq(a.cq, 0);
                  const double t0 = rnic_now_ns();
                  if (post_rdma(a.qps[0], IBV_WR_RDMA_WRITE, i, a.addr(), uint32_t(size),
                                a.mr->lkey, p.addr, p.rkey) != 0) {
                    ++bad;
                    break;
                  }
                  if (mode == "poll") {
                    const ibv_wc wc = next_wc(a.cq);
                    rnic_spend_ns(handler_ns);
                    if (wc.status != IBV_WC_SUCCESS) ++bad;
                    lat += rnic_now_ns() - t0;
                  } else {
                    const int before = done.n;
                    while (done.n == before)
                      if (rnic_dispatch_callbacks(a.channel) < 0) {
                        ++bad;
                        break;
                      }
                    lat += done.t - t0;
                  }
                }
                const double cpu = rnic_cpu_ns() - cpu0, irq = rnic_irq_cpu_ns() - irq0;
                const double n = double(ops);
                ctx.rows.push_back({{"mode", mode},
                                    {"size", size},
                                    {"ops", ops},
                                    {"latency_us", lat / n / 1000.0},
                                    {"cpu_us", (cpu + irq) / n / 1000.0},
                                    {"thread_cpu_us", cpu / n / 1000.0},
                                    {"irq_cpu_us", irq / n / 1000.0}});
                table += fmt::format("{:>9} {:>6} {:>6} {:>11.3f} {:>9.3f}\n", mode, size, ops,
                                     lat / n / 1000.0, (cpu + irq) / n / 1000.0);
              }
            if (!done.ok) ++bad;
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, ec, oob);
            oob.put(0, b.info());
            oob.get(1);
          }});
  ctx.x = "size";
  ctx.y = {"latency_us", "cpu_us"};
  ctx.summary = table + (bad ? "callbacks: an operation FAILED" : "");
  return bad ? 1 : 0;
}

// On-demand paging. Part 1, node0 -> node1: a Write of each size into node1's memory, `iters`
// times, one at a time, timed from its post to its completion, with node1's memory
//   pinned       a regular MR (its pages faulted in and pinned at registration, not timed);
//   first_touch  a fresh on-demand MR over memory never touched: every page faults (zeroed);
//   resident     a fresh on-demand MR over memory the program wrote: the card faults, the
//                kernel only walks;
//   prefetched   a fresh on-demand MR made present by ibv_advise_mr (not timed) first;
//   warm         one on-demand MR written once before (its pages present).
// Part 2, head of line, node0 -> node1 and node2: QP A writes `hol_bytes` into a fresh
// on-demand MR of node1 (first touch) or, as the baseline, a pinned one; at the same moment QP B
// (to node1 too) and QP C (to node2) write 4 KiB into pinned memory. B and C's latencies.
int run_odp(ExperimentContext& ctx) {
  const Topology t = leaf_spine(ctx.cfg, 3, 3, 1);
  Cluster cl(t, ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  const std::vector<int64_t> sizes = ctx.get_ints("sizes");
  const std::vector<std::string> modes = ctx.get_strings("modes");
  const uint64_t iters = uint64_t(ctx.get_int("iters"));
  const uint64_t hol_bytes = uint64_t(ctx.get_int("hol_bytes"));
  uint64_t most = 4096;
  for (int64_t z : sizes) most = std::max(most, uint64_t(z));
  most = std::max(most, hol_bytes);
  constexpr int kOdp = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND;
  constexpr int kPinned = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  EndpointConfig ec;
  ec.buf_bytes = size_t(most);
  EndpointConfig e2 = ec;
  e2.qps = 2;
  Oob oob, oob2;  // node0 <-> node1, node0 <-> node2
  Endpoint a01, a02, b, c;
  int bad = 0;
  const std::string n1 = cl.nodes[1]->name();
  auto count = [&](const char* g, const char* n) {
    return ctx.stats.group(n1 + "." + g).counter(n, "", "").value;
  };
  std::string table = fmt::format("{:>12} {:>8} {:>11} {:>9} {:>8} {:>8}\n", "mode", "bytes",
                                  "latency_us", "mb_per_s", "faults", "rnrs");
  // One node1 region per request of node0's (box 1: the size and mode; box 0: the region).
  struct Req {
    uint64_t bytes;
    std::string mode;
  };
  std::deque<Req> reqs;
  sc_core::sc_event req_ev;
  bool over = false;
  auto ask = [&](uint64_t bytes, const std::string& mode) {
    reqs.push_back({bytes, mode});
    notify_now(req_ev);
    return oob.get(0);
  };
  auto write_once = [&](Endpoint& e, int qp, const PeerInfo& p, uint64_t bytes) {
    if (post_rdma(e.qps[size_t(qp)], IBV_WR_RDMA_WRITE, 1, e.addr(), uint32_t(bytes), e.mr->lkey,
                  p.addr, p.rkey) != 0)
      return false;
    return next_wc(e.cq).status == IBV_WC_SUCCESS;
  };
  cl.run({[&] {
            const PeerInfo p01 = open_connected(a01, 0, e2, oob);
            const PeerInfo p02 = open_connected(a02, 0, ec, oob2, 2);
            // A channel's slow start is not a cost of memory.
            if (!warm_up(a01, p01, uint32_t(most)) || !warm_up(a02, p02, uint32_t(most))) ++bad;
            for (const int64_t sz : sizes)
              for (const std::string& mode : modes) {
                const uint64_t bytes = uint64_t(sz);
                PeerInfo warm{};
                if (mode == "warm") {
                  warm = ask(bytes, mode);
                  if (!write_once(a01, 0, warm, bytes)) ++bad;
                }
                const uint64_t f1 = count("driver", "odp_faults");
                const uint64_t r1 = count("efe", "tx_rnrs");
                double ns = 0;
                for (uint64_t i = 0; i < iters; ++i) {
                  const PeerInfo p = mode == "warm" ? warm : ask(bytes, mode);
                  const double t0 = rnic_now_ns();
                  if (!write_once(a01, 0, p, bytes)) ++bad;
                  ns += rnic_now_ns() - t0;
                }
                const double n = double(iters);
                const double faults = double(count("driver", "odp_faults") - f1) / n;
                const double rnrs = double(count("efe", "tx_rnrs") - r1) / n;
                const double lat = ns / n / 1000.0;
                const double mbps = double(bytes) / (ns / n / 1e9) / 1e6;
                ctx.rows.push_back({{"workload", "touch"},
                                    {"mode", mode},
                                    {"bytes", bytes},
                                    {"iters", iters},
                                    {"latency_us", lat},
                                    {"mb_per_s", mbps},
                                    {"faults_per_write", faults},
                                    {"rnrs_per_write", rnrs}});
                table += fmt::format("{:>12} {:>8} {:>11.3f} {:>9.1f} {:>8.2f} {:>8.2f}\n", mode,
                                     bytes, lat, mbps, faults, rnrs);
              }
            // Head of line: A's Write and, at the same moment, B's and C's 4 KiB Writes; the
            // three CQs polled in turn until each has its completion.
            table += fmt::format("\n{:>12} {:>10} {:>11}\n", "hol case", "qp", "latency_us");
            for (const std::string hol : {"baseline", "fault"}) {
              double lat_b = 0, lat_c = 0;
              for (uint64_t i = 0; i < iters; ++i) {
                const PeerInfo pa = ask(hol_bytes, hol == "fault" ? "first_touch" : "pinned");
                const PeerInfo pb = ask(4096, "pinned");
                const PeerInfo pc = oob2.get(0);  // node2's region
                const double t0 = rnic_now_ns();
                if (post_rdma(a01.qps[0], IBV_WR_RDMA_WRITE, 1, a01.addr(), uint32_t(hol_bytes),
                              a01.mr->lkey, pa.addr, pa.rkey) != 0 ||
                    post_rdma(a01.qps[1], IBV_WR_RDMA_WRITE, 2, a01.addr(), 4096, a01.mr->lkey,
                              pb.addr, pb.rkey) != 0 ||
                    post_rdma(a02.qps[0], IBV_WR_RDMA_WRITE, 3, a02.addr(), 4096, a02.mr->lkey,
                              pc.addr, pc.rkey) != 0) {
                  ++bad;
                  break;
                }
                int left = 3;
                while (left > 0) {
                  ibv_wc wc{};
                  int got = ibv_poll_cq(a01.cq, 1, &wc);
                  if (!got) got = ibv_poll_cq(a02.cq, 1, &wc);
                  if (!got) {
                    rnic_spend_ns(50);
                    continue;
                  }
                  --left;
                  if (wc.status != IBV_WC_SUCCESS) ++bad;
                  if (wc.wr_id == 2) lat_b += rnic_now_ns() - t0;
                  if (wc.wr_id == 3) lat_c += rnic_now_ns() - t0;
                }
              }
              const double n = double(iters);
              for (const auto& [qp, lat] :
                   {std::pair<const char*, double>{"same_peer", lat_b}, {"other_peer", lat_c}}) {
                ctx.rows.push_back({{"workload", "hol"},
                                    {"case", hol},
                                    {"qp", qp},
                                    {"bytes", 4096},
                                    {"hol_bytes", hol_bytes},
                                    {"iters", iters},
                                    {"latency_us", lat / n / 1000.0}});
                table += fmt::format("{:>12} {:>10} {:>11.3f}\n", hol, qp, lat / n / 1000.0);
              }
            }
            over = true;
            notify_now(req_ev);
            oob2.put(2, {});
          },
          [&] {
            open_connected(b, 1, e2, oob);
            for (;;) {
              while (reqs.empty() && !over) sc_core::wait(req_ev);
              if (reqs.empty()) break;
              const Req r = reqs.front();
              reqs.pop_front();
              void* buf = nullptr;
              ibv_mr* mr = nullptr;
              if (r.mode == "pinned") {
                buf = rnic_malloc_lazy(r.bytes);
                mr = ibv_reg_mr(b.pd, buf, r.bytes, kPinned);
              } else {
                buf = r.mode == "resident" ? rnic_malloc(r.bytes) : rnic_malloc_lazy(r.bytes);
                mr = ibv_reg_mr(b.pd, buf, r.bytes, kOdp);
                ibv_sge s{reinterpret_cast<uint64_t>(buf), uint32_t(r.bytes), mr ? mr->lkey : 0};
                if (mr && r.mode == "prefetched" &&
                    ibv_advise_mr(b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                                  IBV_ADVISE_MR_FLAG_FLUSH, &s, 1) != 0)
                  ++bad;
              }
              if (!mr) {
                ++bad;
                break;
              }
              PeerInfo p = b.info();
              p.addr = reinterpret_cast<uint64_t>(buf);
              p.rkey = mr->rkey;
              oob.put(0, p);
            }
          },
          [&] {
            open_connected(c, 2, ec, oob2, 0);
            // One pinned region for every C Write (the endpoint's own buffer).
            for (uint64_t i = 0; i < 2 * iters; ++i) oob2.put(0, c.info());
            oob2.get(2);
          }});
  ctx.x = "bytes";
  ctx.y = {"latency_us", "mb_per_s"};
  // Two kinds of rows, each its own plot (scripts/plot draws workloads apart).
  const std::string h0 = cl.nodes[0]->name(), h2 = cl.nodes[2]->name();
  ctx.workloads.push_back({{"name", "touch"},
                           {"test", "odp"},
                           {"from", h0},
                           {"to", n1},
                           {"x", "bytes"},
                           {"y", {"latency_us", "mb_per_s"}}});
  ctx.workloads.push_back({{"name", "hol"},
                           {"test", "odp"},
                           {"from", h0},
                           {"to", n1 + ", " + h2},
                           {"x", "case"},
                           {"y", {"latency_us"}}});
  ctx.summary = table + (bad ? "odp: an operation FAILED" : "");
  return bad ? 1 : 0;
}

}  // namespace

void register_memory_experiments() {
  ExperimentKind k;
  k.kind = "sg_registration";
  k.has_links = true;
  k.desc =
      "N regions registered as one scatter-gather handle vs one MR per region: the time to "
      "register and to deregister them";
  k.keys = {
      {"regions",
       ExpKey::kIntList,
       "[1, 2, 4, 8, 16, 32]",
       1,
       256,
       {},
       "regions",
       "regions per point"},
      {"region_bytes",
       ExpKey::kIntList,
       "[1024, 2048, 4096]",
       1,
       4096,
       {},
       "B",
       "bytes of each region"},
      {"modes",
       ExpKey::kStringList,
       "[sg, per_region]",
       0,
       0,
       {"sg", "per_region", "kernel_sg", "kernel_per_region"},
       "",
       "sg: one rnic_reg_sg_mr of all the regions; per_region: one ibv_reg_mr each (a "
       "process's memory); kernel_sg: one kernel_lock_sg of regions of kernel memory; "
       "kernel_per_region: one kernel_reg_mem each"},
  };
  k.run = run_sg_registration;
  add_experiment_kind(std::move(k));

  ExperimentKind ps;
  ps.kind = "phys_scan";
  ps.has_links = true;
  ps.desc =
      "the host's physical address space registered window by window as physical regions and "
      "read remotely: which ranges are readable";
  ps.keys = {
      {"window_mib", ExpKey::kInt, "256", 1, 1 << 20, {}, "MiB", "window registered and read"},
      {"timeout",
       ExpKey::kInt,
       "10",
       0,
       31,
       {},
       "",
       "the reader's QP timeout (4.096 us x 2^timeout per try)"},
      {"retry_cnt", ExpKey::kInt, "1", 0, 7, {}, "", "the reader's QP retry count"},
  };
  ps.run = run_phys_scan;
  add_experiment_kind(std::move(ps));

  ExperimentKind rc;
  rc.kind = "reg_cache";
  rc.has_links = true;
  rc.desc =
      "a storage-like pattern (buffers of a pool registered, written, deregistered) with the "
      "verbs library's registration cache off and on: hit rate and throughput";
  rc.keys = {
      {"buffers", ExpKey::kInt, "32", 1, 4096, {}, "buffers", "buffers in the pool"},
      {"size", ExpKey::kInt, "4096", 1, double(1 << 24), {}, "B", "bytes of each buffer"},
      {"ops", ExpKey::kInt, "1000", 1, 1e7, {}, "", "register, write, deregister rounds per mode"},
      {"cache_entries",
       ExpKey::kInt,
       "64",
       1,
       1 << 20,
       {},
       "MRs",
       "idle registrations the cache keeps (mode on)"},
      {"modes", ExpKey::kStringList, "[off, on]", 0, 0, {"off", "on"}, "", "cache off, on"},
  };
  rc.run = run_reg_cache;
  add_experiment_kind(std::move(rc));

  ExperimentKind st;
  st.kind = "sg_transfer";
  st.has_links = true;
  st.desc =
      "discrete regions read and written remotely as one operation on a scatter-gather handle vs "
      "one operation per region on one MR each, registration included and excluded";
  st.keys = {
      {"regions", ExpKey::kInt, "32", 1, 256, {}, "regions", "regions"},
      {"region_bytes", ExpKey::kInt, "4096", 1, 65536, {}, "B", "bytes of each region"},
      {"iters", ExpKey::kInt, "20", 1, 100000, {}, "", "repetitions per point"},
      {"modes",
       ExpKey::kStringList,
       "[sg, per_region]",
       0,
       0,
       {"sg", "per_region", "kernel_sg", "kernel_per_region"},
       "",
       "sg: one handle, one operation; per_region: one MR and one operation per region (a "
       "process's memory); kernel_sg, kernel_per_region: the same over kernel memory registered "
       "by the kernel (kernel_lock_sg, kernel_reg_mem)"},
      {"ops", ExpKey::kStringList, "[read, write]", 0, 0, {"read", "write"}, "", "RDMA operation"},
  };
  st.run = run_sg_transfer;
  add_experiment_kind(std::move(st));
  register_storage_experiment();

  ExperimentKind cb;
  cb.kind = "callbacks";
  cb.has_links = true;
  cb.desc =
      "completions handled by busy polling vs by a callback in a thread woken by the "
      "completion interrupt: latency and host CPU time per completion";
  cb.keys = {
      {"sizes", ExpKey::kIntList, "[64, 65536]", 1, double(1 << 24), {}, "B", "Write sizes"},
      {"ops", ExpKey::kInt, "200", 1, 1e7, {}, "", "Writes per point, one at a time"},
      {"handler_ns", ExpKey::kInt, "200", 0, 1e7, {}, "ns", "work per completion"},
      {"modes",
       ExpKey::kStringList,
       "[poll, callback]",
       0,
       0,
       {"poll", "callback"},
       "",
       "poll: busy polling the CQ; callback: rnic_dispatch_callbacks on its channel"},
  };
  cb.run = run_callbacks;
  add_experiment_kind(std::move(cb));

  ExperimentKind od;
  od.kind = "odp";
  od.has_links = true;
  od.desc =
      "on-demand paging: Write latency and throughput into memory pinned, touched first by the "
      "card, resident, prefetched and warm; faults and RNRs per Write; the head-of-line cost a "
      "fault puts on another QP to the same peer, and none on a QP to another peer";
  od.keys = {
      {"sizes",
       ExpKey::kIntList,
       "[4096, 65536, 1048576]",
       1,
       double(1 << 26),
       {},
       "B",
       "Write sizes"},
      {"iters", ExpKey::kInt, "10", 1, 100000, {}, "", "Writes per point (each into a fresh MR)"},
      {"modes",
       ExpKey::kStringList,
       "[pinned, first_touch, resident, prefetched, warm]",
       0,
       0,
       {"pinned", "first_touch", "resident", "prefetched", "warm"},
       "",
       "node1's memory: a regular MR; an on-demand MR over memory never touched, over memory "
       "written by the program, made present by ibv_advise_mr first, written once before"},
      {"hol_bytes",
       ExpKey::kInt,
       "65536",
       4096,
       double(1 << 26),
       {},
       "B",
       "the faulting Write of the head-of-line part"},
  };
  od.run = run_odp;
  add_experiment_kind(std::move(od));
}

}  // namespace rnic::traffic
