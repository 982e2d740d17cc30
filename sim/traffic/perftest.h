// perftest-style traffic generators (rnicsim perf write_bw|write_lat|read_bw|read_lat|send_bw|
// send_lat|atomic_bw|atomic_lat): two nodes, node0 the client, node1 the server, run as verbs programs. Each is an
// experiment kind (so a scenario's `experiment:` may select it too) with perftest's options as
// keys, perftest's output table, and one results.json row per message size. docs/performance.md
// says how each test runs and where it differs from perftest.
#pragma once

#include <cstdint>
#include <string>

namespace rnic {
class Cluster;
}

namespace rnic::traffic {

// Adds the eight kinds to the experiment registry (main() calls it once).
void register_perftests();

// One of the eight tests between hosts `client` and `server` of a built cluster (a QP pair of their
// own), run as `rnicsim perf` runs it with its defaults (tx_depth 128, cq_mod 100, one QP):
// a latency test's t_typical in us, a bandwidth test's BW average in MiB/s.
double perf_pair(Cluster& cl, int client, int server, const std::string& test, uint64_t size,
                 uint64_t iters);

}  // namespace rnic::traffic
