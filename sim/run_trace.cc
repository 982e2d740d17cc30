#include "sim/run_trace.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "sim/cluster.h"
#include "sim/host_card.h"
#include "sim/numbers.h"

namespace rnic {

void parse_trace_window(const std::string& text, const std::string& where, uint64_t* t0_ps,
                        uint64_t* t1_ps, const char* key) {
  *t0_ps = 0;
  *t1_ps = UINT64_MAX;
  if (text.empty()) return;
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw InputError(where, key, fmt::format("'{}' is not T0:T1 (ns)", text));
  auto num = [&](const std::string& s, uint64_t* out) {
    if (s.empty()) return;
    double v = 0;
    if (!parse_real(s, &v).empty() || v < 0 || v * 1000.0 >= 1.8e19)
      throw InputError(where, key, fmt::format("'{}' is not a time in ns (0 .. 1.8e16)", s));
    *out = uint64_t(v * 1000.0);
  };
  num(text.substr(0, colon), t0_ps);
  num(text.substr(colon + 1), t1_ps);
  if (*t1_ps <= *t0_ps)
    throw InputError(where, key, fmt::format("'{}': the window ends before it starts", text));
}

RunTrace::RunTrace(const OutputSpec& o, const std::string& out_dir)
    : path_((std::filesystem::path(out_dir) / "trace.fst").string()) {
  parse_trace_window(o.trace_window, "trace_window", &t0_ps_, &t1_ps_);
  fst_.set_scope_filter(o.trace_scope);
  scope_ = o.trace_scope;
}

void RunTrace::check_scope() const {
  if (!scope_.empty() && fst_.signals() == 0)
    throw InputError("options", "trace_scope",
                     fmt::format("'{}' matches no instance's signals (a glob over \"scope.name\", "
                                 "e.g. 'node0.*' or '*.mac.*')",
                                 scope_));
}

void RunTrace::attach(HostCard& sys) {
  sys.trace(fst_);
  check_scope();
  write_gtkw();
  window(sys.background);
}

void RunTrace::attach(Cluster& sys) {
  sys.trace(fst_);
  check_scope();
  write_gtkw();
  window(sys.background);
}

void RunTrace::write_gtkw() {
  const std::filesystem::path p(path_);
  gtkw_path_ = (p.parent_path() / "trace.gtkw").string();
  fst_.write_gtkw(gtkw_path_, p.filename().string());
}

void RunTrace::window(Background& bg) {
  bg.at(t0_ps_, [this](uint64_t) {
    fst_.open(path_);
    opened_ = true;
  });
  if (t1_ps_ != UINT64_MAX) bg.at(t1_ps_, [this](uint64_t) { fst_.close(); });
}

}  // namespace rnic
