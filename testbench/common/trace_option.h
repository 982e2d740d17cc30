// `--trace fst` on a test binary's command line: benches that support it write a waveform
// (Verilated internals and model channels in one FST file) named after the test.
#pragma once

#include <string>

namespace rnic::tb {

// "" (no tracing) or "fst"; set by the test binaries' main from their command line.
std::string& trace_format();

}  // namespace rnic::tb
