// The first output file that failed to write during a run (a capture on a full device): the
// run control stops the run with it (run_control.h). No SystemC: the writers that report here
// are also used by tools without a simulation.
#pragma once

#include <string>

namespace rnic::output_errors {

// Records `path` and the system's reason, unless an earlier failure is recorded already.
void failed(const std::string& path, const std::string& why);
// "" while none has failed; otherwise "cannot write PATH: WHY (...)".
const std::string& first();
void clear();

}  // namespace rnic::output_errors
