// Runs a loaded scenario: elaborates and simulates its experiment, writes OUT/stats.json and
// OUT/results.json, prints the human summary. Returns the exit code (DESIGN.md §6).
#pragma once

#include <string>

#include "sim/scenario.h"

namespace rnic {

// Every check a run makes before it simulates (validate runs them too): something to run, a
// capture only where there are links, the topology's assembly, each program file loading as a
// program (sim/program_loader.h). `validating`: a program whose loading ends its process is
// refused too (a run runs it and reports it as the program's failure).
void check_scenario(const Scenario& s, bool validating = false);
void check_out_dir(const std::string& out_dir);
int run_scenario(Scenario& s, const std::string& out_dir, bool quiet);
// `rnicsim presets`: every parameter with its value in each preset.
void print_presets();
// `rnicsim schema`: the parameter and experiment-key tables of docs/scenarios.md, in Markdown.
void print_schema();

}  // namespace rnic
