#include "sim/runner.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <systemc>
#include <unordered_map>

#include "models/common/log.h"
#include "sim/cluster.h"
#include "sim/experiment.h"
#include "sim/output_errors.h"
#include "sim/program_loader.h"
#include "sim/ranks.h"
#include "sim/request_trace.h"
#include "sim/run_control.h"
#include "sim/run_trace.h"

namespace rnic {

namespace {

// The order one process makes its statistics groups in before the simulation starts, from
// each rank's (each made only the groups of its own hosts, switches and links, in that order):
// a host's groups before the next host's, hosts before switches before links, as the one
// process builds them (sim/cluster.cc). A group of no host, switch or link is every rank's, and
// comes where the ranks' lists have it.
std::vector<std::string> order_before_start(const std::vector<std::string>& lists,
                                            const nlohmann::ordered_json& topology) {
  std::unordered_map<std::string, size_t> place;
  if (!topology.is_null()) {
    for (const auto& h : topology["hosts"]) place.emplace(h.get<std::string>(), place.size());
    for (const auto& w : topology["switches"]) place.emplace(w.get<std::string>(), place.size());
    for (const auto& l : topology["links"])
      place.emplace(l["name"].get<std::string>(), place.size());
  }
  std::vector<std::vector<std::string>> v(lists.size());
  for (size_t r = 0; r < lists.size(); ++r) {
    size_t at = 0;
    while (at < lists[r].size()) {
      const size_t nl = lists[r].find('\n', at);
      v[r].push_back(lists[r].substr(at, nl - at));
      at = nl + 1;
    }
  }
  constexpr size_t kShared = SIZE_MAX;
  auto key = [&place](const std::string& g) {
    const auto f = place.find(g.substr(0, g.find('.')));
    return f == place.end() ? kShared : f->second;
  };
  std::vector<size_t> head(v.size(), 0);
  std::vector<std::string> out;
  while (true) {
    // The head of the least place among the ranks' heads of a host, switch or link; else the
    // shared group at rank 0's head (every rank's head then).
    size_t best = SIZE_MAX, best_key = kShared;
    for (size_t r = 0; r < v.size(); ++r) {
      if (head[r] >= v[r].size()) continue;
      const size_t k = key(v[r][head[r]]);
      if (best == SIZE_MAX || (k != kShared && (best_key == kShared || k < best_key))) {
        best = r;
        best_key = k;
      }
    }
    if (best == SIZE_MAX) break;
    const std::string g = v[best][head[best]];
    out.push_back(g);
    for (size_t r = 0; r < v.size(); ++r)  // a link between two ranks is in both their lists
      if (head[r] < v[r].size() && v[r][head[r]] == g) ++head[r];
  }
  return out;
}

// Over several processes, what a rank sends rank 0 of its statistics: each group it simulates
// as stats.json's text, and each it shares with another rank (a link between them) as compact
// JSON, to be summed. (Text, not an object: rank 0 would parse it only to write it out again.)
std::string pack_rank_stats(const std::vector<const StatGroup*>& groups,
                            const std::function<int(const std::string&)>& rank_of) {
  ranks::Packer p;
  std::string text;
  for (const StatGroup* g : groups) {
    const bool shared = rank_of(g->name()) < 0;
    text.clear();
    if (shared)
      text = g->json().dump();
    else
      g->append_json(text, 2, 2);
    p.put_sized(g->name()).put(uint8_t(shared)).put_sized(text);
  }
  return std::string(reinterpret_cast<const char*>(p.data()), p.size());
}

// Rank 0, over several processes: stats.json's statistics (the text of the object, as one
// process writes it) from its own groups and every other rank's (pack_rank_stats). Each group
// comes from the rank that simulates the host, switch or link it belongs to (by the name before
// its first '.'); a link between two ranks counts on both (each its own direction's faults):
// its counters are summed.
std::string merge_rank_stats(const std::vector<const StatGroup*>& mine,
                             const std::vector<std::string>& msgs,
                             const std::function<int(const std::string&)>& rank_of,
                             const std::vector<std::string>& before_start) {
  struct Part {
    const StatGroup* own = nullptr;  // rank 0's
    std::string text;                // another rank's
  };
  std::vector<std::unordered_map<std::string, Part>> idx(msgs.size());
  for (const StatGroup* g : mine) idx[0][g->name()].own = g;
  for (size_t k = 1; k < msgs.size(); ++k) {
    ranks::Unpacker u(reinterpret_cast<const uint8_t*>(msgs[k].data()), msgs[k].size());
    while (u.left()) {
      std::string name = u.get_sized<std::string>();
      u.get<uint8_t>();  // (rank_of says which are shared)
      idx[k][std::move(name)].text = u.get_sized<std::string>();
    }
  }
  // Groups made before the simulation started are every rank's, in one order; those made while
  // it ran (an EFE's per-peer group) only where they were: after the others, by name, as
  // StatRegistry::json() lists them in one process.
  std::vector<std::string> names = before_start;
  const std::set<std::string> early(before_start.begin(), before_start.end());
  std::set<std::string> late;
  for (const auto& m : idx)
    for (const auto& [name, part] : m)
      if (!early.count(name)) late.insert(name);
  names.insert(names.end(), late.begin(), late.end());
  std::string out = "{\n";
  bool any = false;
  auto key = [&](const std::string& g) {
    if (any) out += ",\n";
    any = true;
    append_json_key(out, g, 2, 2);
  };
  for (const std::string& g : names) {
    const int rank = rank_of(g);
    if (rank >= 0) {
      const auto f = idx[size_t(rank)].find(g);
      if (f == idx[size_t(rank)].end()) continue;
      key(g);
      if (f->second.own)
        f->second.own->append_json(out, 2, 2);
      else
        out += f->second.text;
      continue;
    }
    nlohmann::ordered_json m;
    for (const auto& ix : idx) {
      const auto f = ix.find(g);
      if (f == ix.end()) continue;
      const nlohmann::ordered_json v =
          f->second.own ? f->second.own->json() : nlohmann::ordered_json::parse(f->second.text);
      if (m.is_null()) {
        m = v;
        continue;
      }
      for (auto st = m.begin(); st != m.end(); ++st)
        if (st.value().contains("value") && v.contains(st.key()))
          st.value()["value"] =
              st.value()["value"].get<uint64_t>() + v[st.key()]["value"].get<uint64_t>();
    }
    if (m.is_null()) continue;
    key(g);
    append_nested(out, m.dump(2), 2, 2);
  }
  if (!any) return "{}";
  out += "\n  }";
  return out;
}

constexpr uint64_t kMinFreeBytes = 1 << 20;
constexpr const char* kOutOfMemory =
    "rnicsim: the simulator ran out of memory on this machine (smaller sizes, fewer QPs or a "
    "shorter run need less)";

// In stats.json's object, where its statistics go as text (control characters: the dump escapes
// them, so its text is nowhere else).
constexpr const char* kStatsMark = "\x01rnicsim-stats\x01";

// Returns "" or why the file could not be written. With `marked`: the dump of kStatsMark in j
// stands for that text.
std::string write_json(const std::filesystem::path& p, const nlohmann::ordered_json& j,
                       const std::string* marked = nullptr) {
  errno = 0;
  std::ofstream f(p);
  if (f) {
    const std::string text = j.dump(2);
    const std::string mark = marked ? nlohmann::ordered_json(kStatsMark).dump() : "";
    const size_t at = marked ? text.find(mark) : std::string::npos;
    if (at == std::string::npos) {
      f << text << "\n";
    } else {
      f.write(text.data(), std::streamsize(at));
      f << *marked;
      f.write(text.data() + at + mark.size(), std::streamsize(text.size() - at - mark.size()));
      f << "\n";
    }
    f.close();
  }
  if (f) return "";
  const std::string why = errno ? std::strerror(errno) : "write error";
  std::error_code ec;
  std::filesystem::remove(p, ec);  // a cut file would read as a result
  return fmt::format("rnicsim: cannot write {}: {}", p.string(), why);
}

nlohmann::ordered_json config_json(SystemConfig& c) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& p : c.params()) {
    switch (p.kind) {
      case ParamKind::kInt:
        j[p.key] = *static_cast<int64_t*>(p.ptr);
        break;
      case ParamKind::kReal:
        j[p.key] = *static_cast<double*>(p.ptr);
        break;
      case ParamKind::kBool:
        j[p.key] = *static_cast<bool*>(p.ptr);
        break;
      case ParamKind::kString:
        j[p.key] = *static_cast<std::string*>(p.ptr);
        break;
    }
  }
  return j;
}

}  // namespace

// Each block of the registry, in its order, with the implementation it ran.
nlohmann::ordered_json implementations_json(const Implementations& impl) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& b : blocks()) j[b.name] = impl.rtl(b.name) ? "rtl" : "model";
  return j;
}

void check_scenario(const Scenario& s, bool validating) {
  const bool workloads = !s.workloads.empty();
  if (!s.has_experiment && !workloads)
    throw InputError(s.file, "workloads",
                     "this scenario has nothing to run: give `workloads:` or an `experiment:`");
  const ExperimentKind* kind = workloads ? nullptr : find_experiment(s.experiment.kind);
  if (s.outputs.pcap && kind && !kind->has_links)
    throw InputError(
        s.file, "pcap",
        fmt::format("experiment '{}' builds no Ethernet link to capture", s.experiment.kind));
  if (workloads) {
    const Topology topo = build_topology(s);
    if (workload_checker()) workload_checker()(s, topo);
  }
  // Each program file loads (in a child process: its static constructors cannot harm this one).
  // One whose loading ends its process is refused by validate; run runs it and reports it as
  // that program's failure, with the outputs.
  std::set<std::string> checked;
  for (const WorkloadSpec& w : s.workloads) {
    if (w.program.empty() || w.exec || !checked.insert(w.program).second) continue;
    bool ends_at_load = false;
    const std::string why = check_program(w.program, &ends_at_load);
    if (!why.empty() && (!ends_at_load || validating))
      throw InputError(w.where, "workloads.program", why);
  }
}

void check_out_dir(const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir(out_dir);
  for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p, ec) && !fs::is_directory(p, ec))
      throw InputError("--out " + out_dir, "out",
                       fmt::format("'{}' is a file, not a folder", p.string()));
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec)
    throw InputError("--out " + out_dir, "out", fmt::format("cannot create it: {}", ec.message()));
  const fs::path probe = dir / ".rnicsim_write_test";
  {
    errno = 0;
    std::ofstream f(probe);
    f << "x";
    f.close();
    if (!f)
      throw InputError("--out " + out_dir, "out",
                       fmt::format("cannot write in it: {}",
                                   errno ? std::strerror(errno) : "permissions or a full device"));
  }
  fs::remove(probe, ec);
  // Room for the JSON outputs at least (the largest shipped run's are under 1 MiB); a capture
  // or waveform that fills the device later stops the run naming the file (exit 1).
  struct statvfs v {};
  if (statvfs(out_dir.c_str(), &v) == 0 && uint64_t(v.f_bavail) * v.f_frsize < kMinFreeBytes)
    throw InputError("--out " + out_dir, "out",
                     fmt::format("its device has {} KiB free, less than the {} KiB the outputs "
                                 "need at least",
                                 uint64_t(v.f_bavail) * v.f_frsize / 1024, kMinFreeBytes / 1024));
}

// rnicsim's own outputs of an earlier run in the folder go, so none is left beside this run's as
// if it were new (other files are the user's and stay).
void clear_outputs(const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out_dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n == "stats.json" || n == "results.json" || n == "trace.fst" ||
        (e.path().extension() == ".pcap" && e.is_regular_file()))
      fs::remove(e.path(), ec);
  }
}

// A firmware so slow that set-up (every registration, CQ and QP is a command) takes long in
// simulated time, and longer in wall time while the driver polls: said before it starts.
void note_slow_firmware(const SystemConfig& c) {
  const FirmwareConfig& f = c.firmware;
  const int64_t handler = std::max({f.cq_cycles, f.qp_cycles, f.mr_cycles});
  const double ms = double(f.dispatch_cycles + handler) / double(f.clk_mhz) / 1000.0;
  if (ms < 1.0) return;
  fmt::print(stderr,
             "rnicsim: note: a firmware command takes up to {:.1f} ms of simulated time here "
             "(firmware.dispatch_cycles {} + {} handler cycles at firmware.clk_mhz {}); set-up "
             "runs several per endpoint, so it is long{}\n",
             ms, f.dispatch_cycles, handler, f.clk_mhz,
             c.host.cmd_wait == "poll"
                 ? ", and the driver polls meanwhile (host.cmd_wait interrupt sleeps instead)"
                 : "");
}

int run_scenario(Scenario& s, const std::string& out_dir, bool quiet) {
  check_scenario(s);
  // Over several processes rank 0 writes the outputs and prints; the others only simulate.
  const bool writer = ranks::rank() == 0;
  if (!writer) quiet = true;
  if (writer) note_slow_firmware(s.config);
  const bool out_existed = std::filesystem::exists(out_dir);
  if (writer) {
    check_out_dir(out_dir);
    clear_outputs(out_dir);
  }
  const bool workloads = !s.workloads.empty();
  if (workloads && s.experiment.name.empty())
    s.experiment.name = s.name.empty() ? "workloads" : s.name;
  const ExperimentKind* kind = workloads ? nullptr : find_experiment(s.experiment.kind);
  if (ranks::parallel()) {
    // What runs over several processes: the experiments marked parallel, the traffic
    // generators' workloads and programs of the user's.
    if (!workloads && !kind->parallel)
      throw InputError(
          "mpirun", "experiment.kind " + kind->kind,
          "runs in one process only (the experiments that run over several: "
          "scale, incast, loss_goodput, efe_vs_tcp, and workloads); run it without mpirun");
  }
  StatRegistry stats;
  ExperimentContext ctx{s, s.config, stats};
  ctx.quiet = quiet;
  ctx.out_dir = out_dir;
  std::unique_ptr<RunTrace> trace;
  if (s.outputs.trace == "fst") {
    trace = std::make_unique<RunTrace>(s.outputs, out_dir);
    ctx.trace = trace.get();
  }
  std::unique_ptr<RequestTrace> requests;
  if (!s.outputs.timeline.empty() || s.outputs.breakdown) {
    requests = std::make_unique<RequestTrace>();
    ctx.requests = requests.get();
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& p : s.config.params()) log::debug("config {} = {}", p.key, s.config.get(p.key));
  int rc = 0;
  std::string stopped, stopped_detail;
  run_control::set_quiet(quiet);
  run_control::install_sigint_handler();
  output_errors::clear();
  try {
    rc = workloads ? workload_runner()(ctx) : kind->run(ctx);
  } catch (const HungError& e) {
    rc = 3;
    stopped = fmt::format("rnicsim: watchdog: {}", e.what());
  } catch (const InterruptedError&) {
    rc = 130;
    stopped = "rnicsim: interrupted; the outputs hold what was gathered so far";
  } catch (const RunFailed& e) {
    rc = 1;
    stopped = fmt::format("rnicsim: {}", e.what());
    stopped_detail = e.detail;
  } catch (const InputError&) {
    // Refused once the system was built (before anything ran; exit 2): a folder made for this
    // run is not left behind empty.
    std::error_code ec;
    ctx.capture_writers.clear();
    for (const std::string& c : ctx.captures) std::filesystem::remove(c, ec);
    if (!out_existed) std::filesystem::remove(out_dir, ec);  // only if empty
    throw;
  } catch (const std::bad_alloc&) {
    rc = 1;
    stopped = kOutOfMemory;
  } catch (const sc_core::sc_report& e) {
    // SystemC's own errors (its reports are thrown, not printed: main.cc); a thread's stack
    // that cannot be allocated is memory running out.
    rc = 1;
    stopped = std::string(e.get_msg_type()).find("stack") != std::string::npos ||
                      std::string(e.get_msg()).find("stack") != std::string::npos
                  ? kOutOfMemory
                  : fmt::format("rnicsim: SystemC stopped the run: {}", e.get_msg());
  } catch (const std::exception& e) {
    rc = 1;
    stopped = fmt::format("rnicsim: the run failed: {}", e.what());
  }
  run_control::clear_progress_line();
  ctx.capture_writers.clear();  // the captures closed, whole, before the outputs are listed
  if (ranks::parallel() && s.outputs.pcap) ctx.merge_rank_captures();
  if (requests) requests->gather();  // (over several processes, at rank 0)
  const std::string trace_err = trace ? trace->close() : "";
  std::string timeline_err;
  if (requests && !s.outputs.timeline.empty() && writer) {  // (rank 0 has every rank's records)
    uint64_t t0 = 0, t1 = 0;
    parse_trace_window(s.outputs.timeline_window, "timeline_window", &t0, &t1, "timeline_window");
    timeline_err = requests->write_timeline(s.outputs.timeline, t0, t1);
    if (!timeline_err.empty()) timeline_err = "rnicsim: timeline: " + timeline_err;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  nlohmann::ordered_json st;
  st["rnicsim"] = {{"scenario", s.file},
                   {"preset", s.preset},
                   {"seed", s.config.sim.seed},
                   {"experiment", s.experiment.name},
                   {"implementations", implementations_json(s.impl)}};
  if (!s.outputs.timeline.empty()) st["rnicsim"]["timeline"] = s.outputs.timeline;
  st["sim_time_ns"] = sc_core::sc_time_stamp().to_seconds() * 1e9;
  if (!ctx.topology.is_null()) st["topology"] = ctx.topology;
  st["config"] = config_json(s.config);
  // The statistics go into stats.json as text, where `st` holds the mark (a large run's would be
  // a large object, slow to build, dump and free).
  std::string stats_text;
  if (ranks::parallel()) {
    // Each rank sends the groups of what it simulates (and of links it shares with another).
    auto rank_of = [&ctx](const std::string& g) {
      const auto o = ctx.owner.find(g.substr(0, g.find('.')));
      return o == ctx.owner.end() ? 0 : o->second;
    };
    const std::vector<const StatGroup*> mine = stats.listed([&](const std::string& g) {
      const int r = rank_of(g);
      return r < 0 || r == ranks::rank();
    });
    const std::vector<std::string> msgs =
        ranks::gather(writer ? "" : pack_rank_stats(mine, rank_of));
    std::string names;
    for (const std::string& n : stats.names_before_start()) names += n + '\n';
    const std::vector<std::string> name_lists = ranks::gather(names);
    if (writer)
      stats_text =
          merge_rank_stats(mine, msgs, rank_of, order_before_start(name_lists, ctx.topology));
  } else if (writer) {
    stats.append_json(stats_text, 2, 1);
  }
  st["stats"] = kStatsMark;
  if (stats.truncated()) {
    st["time_series_truncated"] = true;
    fmt::print(stderr,
               "rnicsim: the time series stop after {} samples (sim.stats_interval_ns is short for "
               "this run: raise it to sample all of it)\n",
               StatRegistry::kMaxSamples);
  }
  st["wall_s"] = wall;
  if (!stopped.empty()) st["stopped"] = {{"exit", rc}, {"why", stopped}};
  if (!stopped_detail.empty()) st["stopped"]["state"] = stopped_detail;
  if (!writer) return rc;
  const std::string st_err =
      write_json(std::filesystem::path(out_dir) / "stats.json", st, &stats_text);

  nlohmann::ordered_json res;
  res["experiment"] = s.experiment.name;
  res["preset"] = s.preset;
  res["axes"] = {{"x", ctx.x}, {"y", ctx.y}};
  if (!ctx.stack.empty()) res["axes"]["stack"] = ctx.stack;
  res["rows"] = ctx.rows;
  if (!ctx.workloads.empty()) res["workloads"] = ctx.workloads;
  if (!stopped.empty()) res["stopped"] = {{"exit", rc}, {"why", stopped}};
  const std::string res_err = write_json(std::filesystem::path(out_dir) / "results.json", res);
  const std::string bd_err =
      ctx.breakdown.is_null()
          ? ""
          : write_json(std::filesystem::path(out_dir) / "breakdown.json", ctx.breakdown);

  if (!stopped.empty()) fmt::print(stderr, "{}\n", stopped);
  // Outputs that could not be written: said, and the run fails (it is not what was asked).
  for (const std::string& e : {st_err, res_err, timeline_err, bd_err, trace_err}) {
    if (e.empty()) continue;
    fmt::print(stderr, "{}\n", e);
    if (rc == 0) rc = 1;
  }
  if (!st_err.empty() || !res_err.empty()) return rc;
  if (!quiet) {
    fmt::print(
        "{} ({}, preset {}): {} rows, simulated {:.3f} us in {:.2f} s wall\n", s.experiment.name,
        workloads
            ? fmt::format("{} workload{}", s.workloads.size(), s.workloads.size() > 1 ? "s" : "")
            : s.experiment.kind,
        s.preset, ctx.rows.size(), sc_core::sc_time_stamp().to_seconds() * 1e6, wall);
    if (!ctx.summary.empty()) fmt::print("{}\n", ctx.summary);
    fmt::print("blocks: {}\n", s.impl.summary());
    fmt::print("wrote {}/stats.json and {}/results.json\n", out_dir, out_dir);
    if (!ctx.breakdown.is_null()) fmt::print("wrote {}/breakdown.json\n", out_dir);
    for (const auto& f : ctx.captures)
      fmt::print("wrote {} (Wireshark: -X lua_script:scripts/wireshark/rnicsim.lua)\n", f);
    if (!ctx.rows.empty()) fmt::print("figures: scripts/plot {}\n", out_dir);
    if (requests && !s.outputs.timeline.empty())
      fmt::print("wrote {} ({} work requests; open it in ui.perfetto.dev)\n", s.outputs.timeline,
                 requests->wrs().size());
    if (trace && trace->opened())
      fmt::print("wrote {} ({} model signals)\n", trace->path(), trace->signals());
    else if (trace)
      fmt::print("no waveform: the trace window starts after the run ended\n");
  }
  return rc;
}

void print_presets() {
  std::vector<SystemConfig> cfgs;
  for (const auto& p : presets()) cfgs.push_back(preset_config(p.name, "presets"));
  for (const auto& p : presets()) fmt::print("{:12} {}\n", p.name, p.summary);
  fmt::print("\n{:28}", "key");
  for (const auto& p : presets()) fmt::print(" {:>12}", p.name);
  fmt::print("  {:8} {}\n", "unit", "description");
  auto params = cfgs[0].params();
  for (size_t i = 0; i < params.size(); ++i) {
    fmt::print("{:28}", params[i].key);
    for (auto& c : cfgs) fmt::print(" {:>12}", c.get(params[i].key));
    fmt::print("  {:8} {}\n", params[i].unit, params[i].desc);
  }
}

void print_schema() {
  std::vector<SystemConfig> cfgs;
  for (const auto& p : presets()) cfgs.push_back(preset_config(p.name, "schema"));
  fmt::print(
      "### Parameters (`set:` and `--set`)\n\n| key | unit | rnic-10g (default) | rnic-100g | "
      "expether-1g | range | description |\n|---|---|---|---|---|---|---|\n");
  auto params = cfgs[0].params();
  for (const auto& p : params) {
    std::string range;
    if (!p.choices.empty()) {
      for (const auto& c : p.choices) range += (range.empty() ? "" : ", ") + c;
    } else if (!p.allowed.empty()) {
      for (auto a : p.allowed) range += (range.empty() ? "" : ", ") + std::to_string(a);
    } else if (p.kind == ParamKind::kInt || p.kind == ParamKind::kReal) {
      range = fmt::format("{} .. {}", p.lo, p.hi);
    }
    fmt::print("| `{}` | {} | {} | {} | {} | {} | {} |\n", p.key, p.unit, cfgs[0].get(p.key),
               cfgs[1].get(p.key), cfgs[2].get(p.key), range, p.desc);
  }
  auto kinds = experiment_kinds();
  for (const auto& k : workload_kinds()) kinds.push_back(k);
  const size_t n_experiments = experiment_kinds().size();
  for (size_t i = 0; i < kinds.size(); ++i) {
    const ExperimentKind& k = kinds[i];
    if (i < n_experiments)
      fmt::print(
          "\n### `experiment: {{kind: {}}}`\n\n{}.\n\n| key | unit | default | range | "
          "description |\n|---|---|---|---|---|\n",
          k.kind, k.desc);
    else
      fmt::print(
          "\n### `workloads: [{{test: {}}}]`\n\n{}. Beside `name`, `test`, `from`, `to` and "
          "`start_us`:\n\n| key | unit | default | range | description |\n|---|---|---|---|---|\n",
          k.kind, k.desc);
    for (const auto& e : k.keys) {
      std::string range;
      if (e.type == ExpKey::kStringList) {
        for (const auto& c : e.choices) range += (range.empty() ? "list of " : ", ") + c;
      } else {
        range = fmt::format("{}{} .. {}", e.type == ExpKey::kIntList ? "list of " : "", e.lo, e.hi);
      }
      fmt::print("| `{}` | {} | `{}` | {} | {} |\n", e.key, e.unit, e.def, range, e.desc);
    }
  }
}

}  // namespace rnic
