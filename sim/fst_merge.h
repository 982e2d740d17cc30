// One waveform from the parts of a run over several processes: each rank writes the FST file of
// the hosts it simulates, and rank 0 merges them into OUT/trace.fst (docs/debugging.md).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace rnic {

// Writes `out`: every variable of the `parts` (FST files with disjoint hierarchies and one time
// unit), with their value changes in time order. Variables are declared in the order of
// `order(top scope)` (a variable's first scope name; equal keys: the parts' order, then each
// part's), scopes as nested as in the part. Attributes are left out. Each part's changes are
// spilled to a file beside `out` (OUT.partN, removed after) and merged from there, one change of
// each part at a time (the FST writer buffers what it has not yet written, as a run's own writer
// does). Throws std::runtime_error naming the file that cannot be read or written.
void merge_fst(const std::vector<std::string>& parts, const std::string& out,
               const std::function<size_t(const std::string&)>& order);

}  // namespace rnic
