#include "sim/traffic/efe_experiments.h"

#include <fmt/format.h>

#include <algorithm>

#include "models/host/verbs/verbs.h"
#include "sim/cluster.h"
#include "sim/experiment.h"
#include "sim/traffic/endpoint.h"

namespace rnic::traffic {

namespace {

uint64_t counter_sum(StatRegistry& s, const std::vector<std::string>& groups, const char* name) {
  uint64_t v = 0;
  for (const std::string& g : groups) v += s.group(g).counter(name, "", "").value;
  return v;
}

// loss_goodput: node0 writes to node1 over one 10 GbE link whose frame loss steps through
// loss_ppm; per point, the goodput of `iters` RDMA Writes of `size` (first post to last
// completion), the EFE's retransmissions and the completions that were not successes.
int run_loss_goodput(ExperimentContext& ctx) {
  Cluster cl(two_hosts(ctx.cfg), ctx.cfg, ctx.stats, ctx.scenario.impl);
  ctx.attach(cl);
  const uint64_t size = uint64_t(ctx.get_int("size"));
  const uint64_t iters = uint64_t(ctx.get_int("iters"));
  const uint64_t depth = uint64_t(ctx.get_int("tx_depth"));
  EndpointConfig ec;
  ec.buf_bytes = size_t(size);
  ec.send_depth = uint32_t(depth);
  Endpoint a, b;
  Oob oob;
  PeerInfo peer;  // node1's buffer, as node0 learned it
  bool connected = false;
  ctx.x = "loss";
  ctx.y = {"goodput_gbps", "retransmissions", "completion_errors"};
  std::string table = fmt::format("{:>10} {:>14} {:>16} {:>18}\n", "loss", "goodput_gbps",
                                  "retransmissions", "completion_errors");
  for (int64_t ppm : ctx.get_ints("loss_ppm")) {
    const double loss = double(ppm) / 1e6;
    cl.link(0).set_loss(loss);
    const uint64_t retx0 = counter_sum(ctx.stats, {"node0.efe", "node1.efe"}, "retransmissions");
    double t0 = 0, t1 = 0;
    uint64_t errors = 0;
    cl.run({[&] {
              if (!connected) {
                a.open(ec);
                oob.put(1, a.info());
                peer = oob.get(0);
                a.connect(peer);
                oob.get(0);
              }
              ibv_sge sge{a.addr(), uint32_t(size), a.mr->lkey};
              uint64_t posted = 0, done = 0;
              t0 = rnic_now_ns();
              while (done < iters) {
                while (posted < iters && posted - done < depth) {
                  ibv_send_wr wr{};
                  wr.wr_id = posted;
                  wr.sg_list = &sge;
                  wr.num_sge = 1;
                  wr.opcode = IBV_WR_RDMA_WRITE;
                  wr.send_flags = IBV_SEND_SIGNALED;
                  wr.wr.rdma.remote_addr = peer.addr;
                  wr.wr.rdma.rkey = peer.rkey;
                  ibv_send_wr* bad = nullptr;
                  if (ibv_post_send(a.qps[0], &wr, &bad)) throw std::runtime_error("ibv_post_send");
                  ++posted;
                }
                ibv_wc wc[16];
                const int n = ibv_poll_cq(a.cq, 16, wc);
                for (int i = 0; i < n; ++i) errors += wc[i].status != IBV_WC_SUCCESS;
                done += uint64_t(std::max(n, 0));
                if (n == 0 && !rnic_wait_cq(a.cq, 100'000'000))
                  throw std::runtime_error("no completion for 100 ms");
              }
              t1 = rnic_now_ns();
            },
            [&] {
              if (connected) return;
              b.open(ec);
              const PeerInfo p = oob.get(1);
              oob.put(0, b.info());
              b.connect(p);
              oob.put(0, {});
            }});
    connected = true;
    const uint64_t retx =
        counter_sum(ctx.stats, {"node0.efe", "node1.efe"}, "retransmissions") - retx0;
    const double gbps = double(size * iters) * 8 / (t1 - t0);
    ctx.rows.push_back({{"loss", loss},
                        {"goodput_gbps", gbps},
                        {"retransmissions", retx},
                        {"completion_errors", errors}});
    table += fmt::format("{:>10} {:>14.3f} {:>16} {:>18}\n", loss, gbps, retx, errors);
  }
  ctx.summary = table;
  return 0;
}

}  // namespace

void register_efe_experiments() {
  ExperimentKind k;
  k.kind = "loss_goodput";
  k.has_links = true;
  k.desc =
      "RDMA Write goodput between two hosts over one link as its frame loss steps up: the EFE's "
      "retransmission at work";
  k.keys = {
      {"loss_ppm",
       ExpKey::kIntList,
       "[0, 1000, 10000, 20000, 50000]",
       0,
       500000,
       {},
       "ppm",
       "frame loss of the link, parts per million, one point each"},
      {"size", ExpKey::kInt, "65536", 1, double(1u << 30), {}, "B", "message size"},
      {"iters", ExpKey::kInt, "300", 1, 1e8, {}, "", "RDMA Writes per point"},
      {"tx_depth", ExpKey::kInt, "128", 1, 511, {}, "WRs", "Writes in flight"},
  };
  k.run = run_loss_goodput;
  add_experiment_kind(std::move(k));
}

}  // namespace rnic::traffic
