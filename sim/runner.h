// Runs a loaded scenario: elaborates and simulates its experiment, writes OUT/stats.json and
// OUT/results.json, prints the human summary. Returns the exit code (DESIGN.md §6).
#pragma once

#include <string>

#include "sim/scenario.h"

namespace rnic {

// Every check a run makes before it simulates (validate runs them too): something to run, a
// capture only where there are links, the topology's assembly, an output folder that can be
// written.
void check_scenario(const Scenario& s);
void check_out_dir(const std::string& out_dir);
int run_scenario(Scenario& s, const std::string& out_dir, bool quiet);
// `rnicsim presets`: every parameter with its value in each preset.
void print_presets();
// `rnicsim schema`: the parameter and experiment-key tables of docs/scenarios.md, in Markdown.
void print_schema();

}  // namespace rnic
