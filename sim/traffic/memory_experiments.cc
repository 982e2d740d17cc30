// Experiments of the scatter-gather firmware and memory (docs/memory.md): sg_registration.
#include "sim/traffic/memory_experiments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/host/verbs/verbs.h"
#include "sim/cluster.h"
#include "sim/experiment.h"

namespace rnic::traffic {

namespace {

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
  std::vector<uint8_t> buf(size_t(most) * kSlot + kSlot);
  const uint64_t base = (reinterpret_cast<uint64_t>(buf.data()) + 4095) & ~uint64_t(4095);
  int bad = 0;
  std::string table = fmt::format("{:>8} {:>13} {:>11} {:>12} {:>14}\n", "regions", "region_bytes",
                                  "mode", "register_ns", "deregister_ns");
  cl.run({[&] {
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
          const int64_t reg_ns = std::llround(t1 - t0), dereg_ns = std::llround(t2 - t1);
          ctx.rows.push_back({{"regions", n},
                              {"region_bytes", b},
                              {"mode", mode},
                              {"register_ns", reg_ns},
                              {"deregister_ns", dereg_ns}});
          table += fmt::format("{:>8} {:>13} {:>11} {:>12} {:>14}\n", n, b, mode, reg_ns, dereg_ns);
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
       {"sg", "per_region"},
       "",
       "sg: one rnic_reg_sg_mr of all the regions; per_region: one ibv_reg_mr each"},
  };
  k.run = run_sg_registration;
  add_experiment_kind(std::move(k));
}

}  // namespace rnic::traffic
