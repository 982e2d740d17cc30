// perftest-style traffic generators (rnicsim perf write_bw|write_lat|read_bw|read_lat|send_bw|
// send_lat): two nodes, node0 the client, node1 the server, run as verbs programs. Each is an
// experiment kind (so a scenario's `experiment:` may select it too) with perftest's options as
// keys, perftest's output table, and one results.json row per message size. docs/performance.md
// says how each test runs and where it differs from perftest.
#pragma once

namespace rnic::traffic {

// Adds the six kinds to the experiment registry (main() calls it once).
void register_perftests();

}  // namespace rnic::traffic
