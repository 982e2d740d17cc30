#include "sim/run_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "sim/cluster.h"
#include "sim/fst_merge.h"
#include "sim/host_card.h"
#include "sim/numbers.h"
#include "sim/ranks.h"

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
  if (ranks::parallel())
    part_ =
        (std::filesystem::path(out_dir) / fmt::format(".rank{}.trace.fst", ranks::rank())).string();
}

void RunTrace::check_scope() const {
  if (!scope_.empty() && signals_ == 0)
    throw InputError("options", "trace_scope",
                     fmt::format("'{}' matches no instance's signals (a glob over \"scope.name\", "
                                 "e.g. 'node0.*' or '*.mac.*')",
                                 scope_));
}

void RunTrace::attach(HostCard& sys) {
  sys.trace(fst_);
  signals_ = fst_.signals();
  check_scope();
  write_gtkw(fst_.sigs());
  window(sys.background);
}

void RunTrace::attach(Cluster& sys) {
  hosts_ = sys.host_names;
  if (!ranks::parallel()) {
    sys.trace(fst_);
    signals_ = fst_.signals();
    check_scope();
    write_gtkw(fst_.sigs());
    window(sys.background);
    return;
  }
  // Each rank registers its own hosts' signals; the save file lists every rank's, host by host
  // as one process registers them.
  ranks::Packer m;
  for (size_t i = 0; i < sys.nodes.size(); ++i) {
    const size_t first = fst_.signals();
    sys.trace_node(i, fst_);
    for (size_t k = first; k < fst_.signals(); ++k) {
      const FstTrace::Sig& g = fst_.sigs()[k];
      m.put(uint64_t(i)).put_sized(g.scope).put_sized(g.name).put(int32_t(g.bits));
    }
  }
  std::vector<std::pair<uint64_t, FstTrace::Sig>> all;
  for (const std::string& text : ranks::all_gather(std::string(m.data(), m.data() + m.size()))) {
    ranks::Unpacker u(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    while (u.left()) {
      const auto node = u.get<uint64_t>();
      FstTrace::Sig g;
      g.scope = u.get_sized<std::string>();
      g.name = u.get_sized<std::string>();
      g.bits = u.get<int32_t>();
      all.emplace_back(node, std::move(g));
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  signals_ = all.size();
  check_scope();
  std::vector<FstTrace::Sig> sigs;
  for (auto& a : all) sigs.push_back(std::move(a.second));
  if (ranks::rank() == 0) write_gtkw(sigs);
  window(sys.background);
}

void RunTrace::write_gtkw(const std::vector<FstTrace::Sig>& sigs) {
  const std::filesystem::path p(path_);
  gtkw_path_ = (p.parent_path() / "trace.gtkw").string();
  FstTrace::write_gtkw(sigs, gtkw_path_, p.filename().string());
  gtkw_sigs_ = sigs;
}

std::string RunTrace::add_rtl_groups() {
  if (gtkw_path_.empty() || !std::filesystem::exists(path_)) return "";
  try {
    const FstTrace::Groups rtl = fst_rtl_scopes(path_);
    if (!rtl.empty())
      FstTrace::write_gtkw(gtkw_sigs_, gtkw_path_, std::filesystem::path(path_).filename().string(),
                           rtl);
  } catch (const std::runtime_error& e) {
    return fmt::format("rnicsim: the waveform's save file: {}", e.what());
  }
  return "";
}

void RunTrace::window(Background& bg) {
  bg.at(t0_ps_, [this](uint64_t) {
    fst_.open(part_.empty() ? path_ : part_);
    opened_ = true;
  });
  if (t1_ps_ != UINT64_MAX) bg.at(t1_ps_, [this](uint64_t) { fst_.close(); });
}

std::string RunTrace::close() {
  fst_.close();
  if (part_.empty()) return opened_ ? add_rtl_groups() : "";
  // Every rank's file is whole once each has closed its own (one with no variable, whose hosts'
  // signals the scope left out, has nothing to give).
  const std::vector<std::string> opened = ranks::all_gather(opened_ && !fst_.empty() ? "1" : "");
  if (ranks::rank() != 0) return "";
  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  std::vector<std::string> parts;
  for (size_t r = 0; r < opened.size(); ++r)
    if (!opened[r].empty()) parts.push_back((dir / fmt::format(".rank{}.trace.fst", r)).string());
  std::string err;
  if (!parts.empty()) {
    try {
      // As one process declares them: every host's model signals (a scope per level, the host's
      // first), then the RTL's of every host (one scope "host.path.to.block" a block).
      merge_fst(parts, path_, [this](const std::string& top) {
        const std::string host = top.substr(0, top.find('.'));
        const size_t i = size_t(std::find(hosts_.begin(), hosts_.end(), host) - hosts_.begin());
        return host == top ? i : hosts_.size() + i;  // (no host's: after all of these)
      });
    } catch (const std::runtime_error& e) {
      err = fmt::format("rnicsim: the waveform: {}", e.what());
    }
  }
  std::error_code ec;
  for (size_t r = 0; r < opened.size(); ++r)
    std::filesystem::remove(dir / fmt::format(".rank{}.trace.fst", r), ec);
  if (err.empty() && !parts.empty()) err = add_rtl_groups();
  return err;
}

}  // namespace rnic
