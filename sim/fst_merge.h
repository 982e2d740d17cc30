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

// The variables of an FST file under a scope named `rtl` (where each adapter puts its Verilated
// block: its ports there, its internals below), by scope in the file's order, each named as
// GTKWave's save file names it: scope.name and, for a vector, its declared [msb:lsb]; the loop
// indices Verilator declares in unnamed blocks (scopes `unnamedblk<N>`, and those in them) left
// out. Throws
// std::runtime_error if the file cannot be read.
std::vector<std::pair<std::string, std::vector<std::string>>> fst_rtl_scopes(
    const std::string& path);

}  // namespace rnic
