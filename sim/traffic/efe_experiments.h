// Experiments of the EFE network (docs/efe.md): loss_goodput.
#pragma once

namespace rnic::traffic {

// Adds the kinds to the experiment registry (main() calls it once).
void register_efe_experiments();

}  // namespace rnic::traffic
