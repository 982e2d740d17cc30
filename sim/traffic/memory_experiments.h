// Experiments of the scatter-gather firmware and memory (docs/memory.md): sg_registration,
// phys_scan.
#pragma once

namespace rnic::traffic {

// Adds the kinds to the experiment registry (main() calls it once).
void register_memory_experiments();

}  // namespace rnic::traffic
