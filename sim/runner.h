// Runs a loaded scenario: elaborates and simulates its experiment, writes OUT/stats.json and
// OUT/results.json, prints the human summary. Returns the exit code (DESIGN.md §6).
#pragma once

#include <string>

#include "sim/scenario.h"

namespace rnic {

int run_scenario(Scenario& s, const std::string& out_dir, bool quiet);
// `rnicsim presets`: every parameter with its value in each preset.
void print_presets();
// `rnicsim schema`: the parameter and experiment-key tables of docs/scenarios.md, in Markdown.
void print_schema();

}  // namespace rnic
