// Experiments on one host and its card over PCIe: the ExpEther paper's software-environment
// measurements (MMIO read latency, PBL acquisition) and a DMA round trip.
#include <fmt/format.h>

#include <numeric>

#include "models/common/sim_time.h"
#include "sim/experiment.h"
#include "sim/host_card.h"

namespace rnic {

namespace {
double ns_since(uint64_t t0_ps) { return double(now_ps() - t0_ps) / 1000.0; }
}  // namespace

// A user process reads one byte of its mapped QP page (BAR2) N times, then asks the driver to
// read the same register N times through an ioctl.
ExperimentKind mmio_latency_experiment() {
  ExperimentKind k;
  k.kind = "mmio_latency";
  k.desc = "1-byte MMIO read of the card: user-mapped vs through the driver (ioctl)";
  k.keys = {{"reads", ExpKey::kInt, "1000", 1, 1e7, {}, "reads", "reads per path"},
            {"paths",
             ExpKey::kStringList,
             "[user, kernel]",
             0,
             0,
             {"user", "kernel"},
             "",
             "paths to measure"}};
  k.run = [](ExperimentContext& ctx) {
    HostCard sys(ctx.cfg, ctx.stats);
    ctx.attach(sys);
    const int64_t n = ctx.get_int("reads");
    const uint64_t reg_off = reg::kQpStatus;  // QP 0's page, readable from both paths
    std::map<std::string, double> mean;
    int bad = 0;
    for (const std::string& path : ctx.get_strings("paths")) {
      double total = 0;
      run_host_thread(sys, path.c_str(), [&] {
        for (int64_t i = 0; i < n; ++i) {
          const uint64_t t0 = now_ps();
          std::vector<uint8_t> v = path == "user" ? sys.rc.mmio_read(sys.bar2 + reg_off, 1)
                                                  : sys.os.read_reg(sys.bar2, reg_off, 1);
          total += ns_since(t0);
          if (v.size() != 1 || v[0] != 0) ++bad;  // QP 0's status register reads 0 in bits 7:0
        }
      });
      mean[path] = total / double(n);
      ctx.rows.push_back({{"path", path}, {"reads", n}, {"latency_ns", mean[path]}});
    }
    ctx.x = "path";
    ctx.y = {"latency_ns"};
    if (mean.count("user") && mean.count("kernel"))
      ctx.summary = fmt::format(
          "user-level read {:.1f} ns, kernel (ioctl) read {:.1f} ns: {:.1f}% reduction",
          mean["user"], mean["kernel"], 100.0 * (mean["kernel"] - mean["user"]) / mean["kernel"]);
    return bad ? 1 : 0;
  };
  return k;
}

// For each buffer size: malloc (scattered pages, resident), mlock, then the driver's get_pbl
// ioctl; then mlock of a fresh buffer of the same size whose pages were never touched.
ExperimentKind pbl_acquisition_experiment() {
  ExperimentKind k;
  k.kind = "pbl_acquisition";
  k.desc = "mlock and PBL acquisition (page walk) time against buffer size, doubling";
  k.keys = {
      {"min_bytes", ExpKey::kInt, "4096", 4096, double(1ull << 40), {}, "B", "smallest buffer"},
      {"max_bytes",
       ExpKey::kInt,
       "1073741824",
       4096,
       double(1ull << 40),
       {},
       "B",
       "largest buffer"}};
  k.run = [](ExperimentContext& ctx) {
    HostCard sys(ctx.cfg, ctx.stats);
    ctx.attach(sys);
    host::Process proc(sys.mem, ctx.cfg.host, uint64_t(ctx.cfg.sim.seed), 1);
    const uint64_t lo = uint64_t(ctx.get_int("min_bytes")), hi = uint64_t(ctx.get_int("max_bytes"));
    // The fresh buffers live in a second process (so the first's address layout, and its
    // figures, are as before). Each buffer is freed after its measurement: the 1 GiB ones fit
    // a 2 GiB host one at a time.
    host::Process other(sys.mem, ctx.cfg.host, uint64_t(ctx.cfg.sim.seed) + 1, 2);
    int bad = 0;
    run_host_thread(sys, "pbl", [&] {
      for (uint64_t b = lo; b <= hi; b *= 2) {
        const uint64_t va = proc.malloc(b);
        uint64_t t0 = now_ps();
        const uint64_t pinned = sys.os.mlock(proc, va, b);
        const double mlock_ns = ns_since(t0);
        t0 = now_ps();
        const auto pbl = sys.os.get_pbl(proc, va, b);
        const double pbl_ns = ns_since(t0);
        if (!pbl.ok || pbl.pages.size() != pinned) ++bad;
        proc.free(va, b);
        // A fresh buffer, never touched: mlock faults each page in (and zeroes it) first.
        const uint64_t fresh = other.malloc_untouched(b);
        t0 = now_ps();
        if (sys.os.mlock(other, fresh, b) != pinned) ++bad;
        const double untouched_ns = ns_since(t0);
        other.free(fresh, b);
        ctx.rows.push_back({{"bytes", b},
                            {"pages", pbl.pages.size()},
                            {"pbl_ns", pbl_ns},
                            {"mlock_ns", mlock_ns},
                            {"mlock_untouched_ns", untouched_ns},
                            {"walk_reads", pbl.walk_reads}});
      }
    });
    ctx.x = "bytes";
    ctx.y = {"pbl_ns", "mlock_ns", "mlock_untouched_ns"};
    for (const auto& r : ctx.rows)
      if (r["bytes"] == 1048576)
        ctx.summary = fmt::format("1 MiB: PBL acquisition {:.2f} us, mlock {:.2f} us",
                                  double(r["pbl_ns"]) / 1000, double(r["mlock_ns"]) / 1000);
    return bad ? 1 : 0;
  };
  return k;
}

// A buffer goes host -> card -> host: the card reads each page of the source buffer by DMA
// (from its PBL) and writes it to the destination buffer; the destination must equal the source.
ExperimentKind dma_roundtrip_experiment() {
  ExperimentKind k;
  k.kind = "dma_roundtrip";
  k.desc = "host buffer read by the card's DMA and written back to another buffer, checked";
  k.keys = {{"sizes",
             ExpKey::kIntList,
             "[4096, 65536, 1048576]",
             1,
             double(1 << 30),
             {},
             "B",
             "buffer sizes"}};
  k.run = [](ExperimentContext& ctx) {
    HostCard sys(ctx.cfg, ctx.stats);
    ctx.attach(sys);
    host::Process proc(sys.mem, ctx.cfg.host, uint64_t(ctx.cfg.sim.seed), 1);
    int bad = 0;
    for (int64_t size : ctx.get_ints("sizes")) {
      const uint64_t b = uint64_t(size);
      const uint64_t src = proc.malloc(b), dst = proc.malloc(b);
      std::vector<uint8_t> pattern(b);
      for (uint64_t i = 0; i < b; ++i) pattern[i] = uint8_t(i * 131 + (i >> 12) + 7);
      proc.write_virt(src, pattern.data(), b);
      double read_ns = 0;
      uint64_t write_start = 0;
      run_host_thread(sys, "roundtrip", [&] {
        sys.os.mlock(proc, src, b);
        sys.os.mlock(proc, dst, b);
        const auto sp = sys.os.get_pbl(proc, src, b), dp = sys.os.get_pbl(proc, dst, b);
        // Card side: read every source page, then write it to the destination page.
        std::vector<std::vector<uint8_t>> pages(sp.pages.size());
        size_t left = pages.size();
        sc_core::sc_event all_read;
        uint64_t t0 = now_ps();
        for (size_t i = 0; i < sp.pages.size(); ++i) {
          const uint32_t n = uint32_t(std::min<uint64_t>(host::kPageSize, b - i * host::kPageSize));
          sys.card.dmac.read(sp.pages[i], n, [&, i](DmacStatus st, std::vector<uint8_t>&& d) {
            if (st != DmacStatus::kOk) ++bad;
            pages[i] = std::move(d);
            if (--left == 0) notify_immediate(all_read);
          });
        }
        sc_core::wait(all_read);
        read_ns = ns_since(t0);
        write_start = now_ps();
        for (size_t i = 0; i < pages.size(); ++i)
          sys.card.dmac.write(dp.pages[i], std::move(pages[i]));
      });
      // Posted writes: done when the last one is in host memory.
      const double write_ns = double(sys.rc.last_write_ps() - write_start) / 1000.0;
      std::vector<uint8_t> back(b);
      proc.read_virt(dst, back.data(), b);
      const bool match = back == pattern;
      if (!match) ++bad;
      ctx.rows.push_back({{"bytes", b},
                          {"read_ns", read_ns},
                          {"write_ns", write_ns},
                          {"read_gbps", 8.0 * double(b) / read_ns},
                          {"write_gbps", 8.0 * double(b) / write_ns},
                          {"match", match}});
    }
    ctx.x = "bytes";
    ctx.y = {"read_gbps", "write_gbps"};
    ctx.summary = bad ? "DMA round trip: MISMATCH"
                      : "DMA round trip: destination equals source for every size";
    return bad ? 1 : 0;
  };
  return k;
}

}  // namespace rnic
