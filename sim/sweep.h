// `rnicsim sweep SCENARIO --vary KEY=V1,V2,... [--vary ...] [--seeds N] [-j N] [--slurm]
// --out DIR` (docs/scenarios.md, "Sweeps"): every combination of the varied values is a point,
// run as a process of its own (`rnicsim run` of the point's scenario into DIR/points/NNNN), N at
// a time on this machine, or as a Slurm job array (--slurm writes DIR/sweep.sbatch, merge.sbatch
// and submit.sh). A KEY is a parameter (`pcie.mps`: the point runs with --set) or a path into
// the scenario (`workloads.0.size`, `experiment.iters`: list items by index; the last name may
// be new; a varied `size` replaces a workload's `sizes`). Every point is checked as validate checks
// a scenario before any runs (exit 2 naming the point). A point that fails is reported with its
// command and does not stop the others; a point already done with the same scenario and command is
// not run again. DIR/results.json merges the points' rows with the varied keys as columns;
// scripts/plot DIR draws each metric against each varied key.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario.h"

namespace rnic {

struct SweepOptions {
  std::string scenario;
  std::vector<std::string> vary;  // KEY=V1,V2,...
  int seeds = 0;                  // > 0: sim.seed varied over 1..seeds
  int jobs = 1;
  bool slurm = false;
  int point = -1;      // >= 0: run this point only (a Slurm array task)
  bool merge = false;  // only merge the points' results (the Slurm merge step)
  std::string out;
  bool quiet = false;
  RunOptions run;  // passed to every point (preset, sets, rtl, pcap, ...)
};

// Returns the exit code: 0 every point ran, 1 some point failed, 2 bad input (thrown as
// InputError before anything runs).
int run_sweep(const SweepOptions& o);

}  // namespace rnic
