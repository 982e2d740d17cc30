#include "sim/traffic/lat_breakdown.h"

#include <fmt/format.h>

namespace rnic::traffic {

namespace {

// The stage sums of one direction over a point's iterations.
struct Column {
  std::vector<std::string> names;
  std::vector<uint64_t> ps;
  // Whether an iteration's stages are this column's (the first one sets them).
  bool fits(const std::vector<RequestTrace::Stage>& st) const {
    if (st.empty()) return false;
    if (names.empty()) return true;
    if (st.size() != names.size()) return false;
    for (size_t i = 0; i < st.size(); ++i)
      if (names[i] != st[i].name) return false;
    return true;
  }
  void add(const std::vector<RequestTrace::Stage>& st) {
    if (names.empty()) {
      for (const auto& s : st) names.push_back(s.name);
      ps.assign(st.size(), 0);
    }
    for (size_t i = 0; i < st.size(); ++i) ps[i] += st[i].ps;
  }
  uint64_t total() const {
    uint64_t t = 0;
    for (uint64_t p : ps) t += p;
    return t;
  }
};

}  // namespace

nlohmann::ordered_json lat_breakdown(const RequestTrace& rt, const BreakdownJob& job,
                                     std::string* table) {
  const std::vector<uint32_t> a = rt.wrs_of(job.client_node, job.client_qp);
  const std::vector<uint32_t> b =
      job.ping_pong ? rt.wrs_of(job.server_node, job.server_qp) : std::vector<uint32_t>{};
  nlohmann::ordered_json out = {{"workload", job.workload},
                                {"test", job.test},
                                {"from", job.client},
                                {"to", job.server},
                                {"points", nlohmann::ordered_json::array()}};
  const std::string fwd = fmt::format("{} → {}", job.client, job.server);
  const std::string back = fmt::format("{} → {}", job.server, job.client);
  size_t k = 0;  // the WR of the point's first iteration
  for (const BreakdownJob::Point& pt : job.points) {
    Column col[2];
    // Before the client's post, from the sample's start; after the stages' end (the client's
    // poll returning, a receive reposted), to the sample's end.
    uint64_t before = 0, after = 0, turnaround = 0, sum = 0, n = 0, missing = 0;
    for (const auto& [s0, s1] : pt.bounds) {
      const size_t i = k++;
      if (i >= a.size() || (job.ping_pong && i >= b.size())) {
        ++missing;
        continue;
      }
      const RequestTrace::Wr& wa = rt.wrs()[a[i]];
      const uint32_t last = job.ping_pong ? b[i] : a[i];
      const uint64_t end = rt.end_of(last);
      const auto sa = rt.stages(a[i]);
      const auto sb = job.ping_pong ? rt.stages(b[i]) : sa;
      const uint64_t back_post = job.ping_pong ? rt.wrs()[b[i]].post : 0;
      if (sa.empty() || sb.empty() || wa.post < s0 || end > s1 ||
          (job.ping_pong && back_post < rt.end_of(a[i]))) {
        ++missing;
        continue;
      }
      if (!col[0].fits(sa) || (job.ping_pong && !col[1].fits(sb))) {
        ++missing;
        continue;
      }
      col[0].add(sa);
      if (job.ping_pong) col[1].add(sb);
      before += wa.post - s0;
      after += s1 - end;
      if (job.ping_pong) turnaround += back_post - rt.end_of(a[i]);
      sum += s1 - s0;
      ++n;
    }
    const auto mean = [n](uint64_t ps) { return n ? double(ps) / double(n) / 1000.0 : 0.0; };
    const double sample_ns = job.ping_pong ? mean(sum) / 2 : mean(sum);
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    const char* kBefore = "host: sample start → post";
    const char* kAfter =
        job.test == "send_lat" ? "host: poll returns, a receive reposted" : "host: poll returns";
    stages.push_back({{"stage", kBefore}, {"forward_ns", mean(before)}});
    for (size_t i = 0; i < col[0].names.size(); ++i) {
      nlohmann::ordered_json st = {{"stage", col[0].names[i]}, {"forward_ns", mean(col[0].ps[i])}};
      if (job.ping_pong) st["back_ns"] = mean(col[1].ps[i]);
      stages.push_back(st);
    }
    stages.push_back({{"stage", kAfter}, {job.ping_pong ? "back_ns" : "forward_ns", mean(after)}});
    nlohmann::ordered_json p = {{"bytes", pt.bytes}, {"iterations", n}, {"stages", stages}};
    if (job.ping_pong) {
      p["one_way_ns"] = {mean(before + col[0].total()), mean(col[1].total() + after)};
      p["turnaround_ns"] = mean(turnaround);
    }
    p["sample_ns"] = sample_ns;
    p["t_avg_us"] = pt.t_avg_us;
    if (missing) p["iterations_not_traced"] = missing;
    out["points"].push_back(p);

    std::string& t = *table;
    t += fmt::format(
        "\nbreakdown of {} {} B, mean of {} iterations (ns; each stage from one probe to the "
        "next):\n",
        job.test, pt.bytes, n);
    if (job.ping_pong) {
      t += fmt::format("| stage | {} | {} |\n|---|---|---|\n", fwd, back);
      t += fmt::format("| {} | {:.1f} | |\n", kBefore, mean(before));
      for (size_t i = 0; i < col[0].names.size(); ++i)
        t += fmt::format("| {} | {:.1f} | {:.1f} |\n", col[0].names[i], mean(col[0].ps[i]),
                         mean(col[1].ps[i]));
      t += fmt::format("| {} | | {:.1f} |\n", kAfter, mean(after));
      t += fmt::format("| one way | {:.1f} | {:.1f} |\n", mean(before + col[0].total()),
                       mean(col[1].total() + after));
      t += fmt::format("| {}: sees it → posts its reply | {:.1f} | |\n", job.server,
                       mean(turnaround));
      t += fmt::format("| round trip / 2 = the sample | {:.1f} | |\n", sample_ns);
    } else {
      t += fmt::format("| stage | {} → {} → {} |\n|---|---|\n", job.client, job.server, job.client);
      t += fmt::format("| {} | {:.1f} |\n", kBefore, mean(before));
      for (size_t i = 0; i < col[0].names.size(); ++i)
        t += fmt::format("| {} | {:.1f} |\n", col[0].names[i], mean(col[0].ps[i]));
      t += fmt::format("| {} | {:.1f} |\n", kAfter, mean(after));
      t += fmt::format("| the sample | {:.1f} |\n", sample_ns);
    }
    t += fmt::format("(the workload's t_avg: {:.2f} us", pt.t_avg_us);
    t += missing ? fmt::format("; {} iterations not traced to the end)\n", missing) : ")\n";
  }
  return out;
}

}  // namespace rnic::traffic
