// `rnicsim report DIR`: DIR/report.html, one self-contained page of a finished run (its
// results.json and stats.json): the scenario, the topology drawn, each workload's table and
// figures (drawn as SVG from the rows; scripts/plot's PNGs embedded when DIR/plots has them),
// errors and retransmissions by kind, the busiest queues and links, and links to the run's
// captures, timeline and waveform.
#pragma once

#include <string>

namespace rnic {

// Writes DIR/report.html; returns 0, or 1 with a message on stderr (no results.json or
// stats.json in DIR, or the page cannot be written).
int write_report(const std::string& dir);

}  // namespace rnic
