// `--breakdown`: a latency workload's iterations taken apart stage by stage from the request
// trace's probes (RequestTrace::stages), each stage from one probe point to the next, so that
// the stages add up to each sample exactly. Per message size: each stage's mean over the
// iterations, per direction (write_lat, send_lat: the client's message to the server and the
// server's back, with the server's turnaround between; read_lat: the Read's whole round trip).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/request_trace.h"

namespace rnic::traffic {

struct BreakdownJob {
  std::string workload, test, client, server;
  int client_node = 0, server_node = 1;
  uint32_t client_qp = 0, server_qp = 0;
  bool ping_pong = true;  // write_lat, send_lat; false: read_lat
  // Per size: its bytes, the mean sample the workload reported (us), and each iteration's
  // start and end as the client measured them (ps): its first and last stage end there.
  struct Point {
    uint64_t bytes = 0;
    double t_avg_us = 0;
    std::vector<std::pair<uint64_t, uint64_t>> bounds;
  };
  std::vector<Point> points;
};

// The breakdown's JSON (one entry of OUT/breakdown.json's "workloads") and, in *table, the
// table printed under the workload's results.
nlohmann::ordered_json lat_breakdown(const RequestTrace& rt, const BreakdownJob& job,
                                     std::string* table);

}  // namespace rnic::traffic
