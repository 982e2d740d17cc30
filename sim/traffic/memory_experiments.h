// Experiments of the scatter-gather firmware and memory (docs/memory.md): sg_registration,
// phys_scan.
#pragma once

namespace rnic::traffic {

// Adds the kinds to the experiment registry (main() calls it once).
void register_memory_experiments();
// The SRP-style storage experiment (storage_experiment.cc); register_memory_experiments calls it.
void register_storage_experiment();

}  // namespace rnic::traffic
