#include "sim/sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/config.h"
#include "sim/numbers.h"
#include "sim/runner.h"

namespace rnic {

namespace fs = std::filesystem;

namespace {

struct Vary {
  std::string key;
  std::vector<std::string> values;
  bool param = false;  // a parameter (--set), else a path into the scenario
};

struct Point {
  size_t index = 0;
  std::vector<std::string> values;  // one per Vary
  std::string dir, scenario_file, scenario_text;
  std::vector<std::string> argv;  // rnicsim run ...
  std::string command;            // argv as a shell line
};

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("rnicsim") : p.string();
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-./=:,@%+") == std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

std::vector<Vary> parse_varies(const SweepOptions& o) {
  std::vector<Vary> v;
  SystemConfig probe;
  std::map<std::string, bool> params;
  for (const auto& p : probe.params()) params[p.key] = true;
  for (const std::string& arg : o.vary) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
      throw InputError("--vary " + arg, "vary", "expected KEY=V1,V2,...");
    Vary x;
    x.key = arg.substr(0, eq);
    if (x.key.rfind("set.", 0) == 0) x.key = x.key.substr(4);
    std::stringstream ss(arg.substr(eq + 1));
    for (std::string val; std::getline(ss, val, ',');) {
      if (val.empty()) throw InputError("--vary " + arg, x.key, "an empty value in the list");
      x.values.push_back(val);
    }
    x.param = params.count(x.key) != 0;
    if (!x.param) {
      const std::string first = x.key.substr(0, x.key.find('.'));
      if (first != "workloads" && first != "experiment" && first != "topology" &&
          first != "faults" && first != "outputs")
        throw InputError(
            "--vary " + arg, x.key,
            "neither a parameter (rnicsim presets lists them) nor a path into the "
            "scenario (workloads.0.size, experiment.iters, topology.links.0.length_m)");
    }
    for (const Vary& y : v)
      if (y.key == x.key) throw InputError("--vary " + arg, x.key, "varied twice");
    v.push_back(std::move(x));
  }
  if (o.seeds > 0) {
    Vary s{"sim.seed", {}, true};
    for (int i = 1; i <= o.seeds; ++i) s.values.push_back(std::to_string(i));
    for (const Vary& y : v)
      if (y.key == "sim.seed") throw InputError("--seeds", "sim.seed", "varied by --vary already");
    v.push_back(std::move(s));
  }
  if (v.empty()) throw InputError("sweep", "vary", "nothing to vary: give --vary KEY=V1,V2,...");
  return v;
}

// Sets the scalar at `path` (dotted; list items by index; the last name may be new) in root.
void set_path(YAML::Node root, const std::string& path, const std::string& value,
              const std::string& where) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  YAML::Node cur = root;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    YAML::Node next;
    if (cur.IsSequence()) {
      int64_t idx = -1;
      if (!parse_int(parts[i], &idx).empty() || idx < 0 || size_t(idx) >= cur.size())
        throw InputError(where, path,
                         fmt::format("'{}' is not an item of a list of {}", parts[i], cur.size()));
      if (last) {
        cur[size_t(idx)] = value;
        return;
      }
      next.reset(cur[size_t(idx)]);
    } else if (cur.IsMap() || (!cur.IsDefined() || cur.IsNull())) {
      if (last) {
        cur[parts[i]] = value;
        // A workload's varied size stands for its list of sizes (size and sizes exclude each
        // other).
        if (parts[i] == "size" && cur.IsMap() && cur["sizes"]) cur.remove("sizes");
        return;
      }
      if (!cur.IsMap() || !cur[parts[i]])
        throw InputError(where, path, fmt::format("the scenario has no '{}' there", parts[i]));
      next.reset(cur[parts[i]]);
    } else {
      throw InputError(where, path, fmt::format("'{}' holds a single value", parts[i - 1]));
    }
    cur.reset(next);
  }
}

std::vector<std::string> run_args(const RunOptions& r) {
  std::vector<std::string> a;
  if (!r.preset.empty()) a.insert(a.end(), {"--preset", r.preset});
  for (const auto& s : r.sets) a.insert(a.end(), {"--set", s});
  if (!r.rtl.empty()) {
    std::string l;
    for (const auto& b : r.rtl) l += (l.empty() ? "" : ",") + b;
    a.insert(a.end(), {"--rtl", l});
  }
  if (!r.trace.empty()) a.insert(a.end(), {"--trace", r.trace});
  if (!r.trace_window.empty()) a.insert(a.end(), {"--trace-window", r.trace_window});
  if (!r.trace_scope.empty()) a.insert(a.end(), {"--trace-scope", r.trace_scope});
  if (!r.timeline.empty()) a.insert(a.end(), {"--timeline", r.timeline});
  if (r.pcap) a.push_back("--pcap");
  if (!r.seed.empty()) a.insert(a.end(), {"--seed", r.seed});
  return a;
}

// Every point: its values, scenario text and command; each checked as validate would.
std::vector<Point> make_points(const SweepOptions& o, const std::vector<Vary>& v, bool check) {
  std::ifstream in(o.scenario);
  if (!in) throw InputError(o.scenario, "(file)", "cannot open the scenario file");
  const std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  {
    RunOptions none;
    load_scenario(o.scenario, none);  // the scenario itself is valid
  }
  size_t total = 1;
  for (const Vary& x : v) total *= x.values.size();
  if (total > 100000)
    throw InputError("sweep", "vary", fmt::format("{} points: at most 100000", total));
  const std::string exe = self_exe();
  std::vector<Point> points;
  for (size_t i = 0; i < total; ++i) {
    Point p;
    p.index = i;
    size_t rest = i;
    for (size_t k = v.size(); k-- > 0;) {  // the last key varies fastest
      p.values.insert(p.values.begin(), v[k].values[rest % v[k].values.size()]);
      rest /= v[k].values.size();
    }
    p.dir = (fs::path(o.out) / "points" / fmt::format("{:04}", i)).string();
    std::string label;
    for (size_t k = 0; k < v.size(); ++k)
      label += fmt::format("{}{}={}", label.empty() ? "" : ", ", v[k].key, p.values[k]);
    const std::string where = fmt::format("sweep point {} ({})", i, label);
    YAML::Node root = YAML::Load(base);
    RunOptions run = o.run;
    for (size_t k = 0; k < v.size(); ++k) {
      if (v[k].param)
        run.sets.push_back(v[k].key + "=" + p.values[k]);
      else
        set_path(root, v[k].key, p.values[k], where);
    }
    YAML::Emitter e;
    e << root;
    p.scenario_text = std::string("# ") + where + " of " + o.scenario + "\n" + e.c_str() + "\n";
    p.scenario_file = (fs::path(p.dir) / "scenario.yaml").string();
    p.argv = {exe, "run", p.scenario_file, "--out", p.dir, "--quiet"};
    for (const auto& a : run_args(run)) p.argv.push_back(a);
    p.command = shell_line(p.argv);
    fs::create_directories(p.dir);
    std::ofstream(p.scenario_file) << p.scenario_text;
    try {
      if (check) {
        Scenario s = load_scenario(p.scenario_file, run);
        check_scenario(s, true);
      }
    } catch (const InputError& err) {
      throw InputError(where + ": " + err.where, err.key, err.reason);
    }
    points.push_back(std::move(p));
  }
  return points;
}

std::string digest(const Point& p) {
  return fmt::format("{:016x}", std::hash<std::string>{}(p.scenario_text + "\n" + p.command));
}

bool done_already(const Point& p) {
  std::ifstream in(fs::path(p.dir) / "point.json");
  if (!in) return false;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    return j.value("exit", -1) == 0 && j.value("digest", "") == digest(p) &&
           fs::exists(fs::path(p.dir) / "results.json");
  } catch (const std::exception&) {
    return false;
  }
}

void write_point(const Point& p, const std::vector<Vary>& v, int code, double wall_s) {
  nlohmann::ordered_json j;
  j["index"] = p.index;
  for (size_t k = 0; k < v.size(); ++k) j["vary"][v[k].key] = p.values[k];
  j["exit"] = code;
  j["command"] = p.command;
  j["digest"] = digest(p);
  j["wall_s"] = wall_s;
  std::ofstream(fs::path(p.dir) / "point.json") << j.dump(2) << "\n";
}

pid_t start(const Point& p) {
  fflush(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  for (const auto& [fd, name] : {std::pair{1, "stdout.txt"}, std::pair{2, "stderr.txt"}}) {
    const int f = ::open((fs::path(p.dir) / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (f >= 0) dup2(f, fd);
  }
  std::vector<char*> argv;
  for (const auto& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

int exit_code(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string last_line(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

nlohmann::ordered_json typed(const std::string& s) {
  int64_t i;
  double d;
  if (parse_int(s, &i).empty()) return i;
  if (parse_real(s, &d).empty()) return d;
  return s;
}

// Merges every point's rows into OUT/results.json; returns how many points have results.
size_t merge(const SweepOptions& o, const std::vector<Vary>& v, const std::vector<Point>& points) {
  nlohmann::ordered_json res;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  nlohmann::ordered_json pts = nlohmann::ordered_json::array();
  size_t with = 0;
  for (const Point& p : points) {
    nlohmann::ordered_json pj;
    pj["index"] = p.index;
    for (size_t k = 0; k < v.size(); ++k) pj[v[k].key] = typed(p.values[k]);
    pj["dir"] = p.dir;
    pj["command"] = p.command;
    std::ifstream pin(fs::path(p.dir) / "point.json");
    int code = -1;
    if (pin) {
      try {
        code = nlohmann::json::parse(pin).value("exit", -1);
      } catch (const std::exception&) {
      }
    }
    pj["exit"] = code;
    pts.push_back(pj);
    std::ifstream in(fs::path(p.dir) / "results.json");
    if (!in) continue;
    nlohmann::ordered_json r;
    try {
      r = nlohmann::ordered_json::parse(in);
    } catch (const std::exception&) {
      continue;
    }
    ++with;
    if (res.empty()) {
      res["experiment"] = "sweep of " + r.value("experiment", o.scenario);
      res["preset"] = r.value("preset", "");
      res["axes"] = r["axes"];
      if (r.contains("workloads")) res["workloads"] = r["workloads"];
    }
    for (const auto& row : r.value("rows", nlohmann::ordered_json::array())) {
      nlohmann::ordered_json out;
      for (size_t k = 0; k < v.size(); ++k) out[v[k].key] = typed(p.values[k]);
      for (const auto& [key, val] : row.items()) out[key] = val;
      rows.push_back(out);
    }
  }
  if (res.empty()) {
    res["experiment"] = "sweep of " + o.scenario;
    res["axes"] = {{"x", ""}, {"y", nlohmann::ordered_json::array()}};
  }
  nlohmann::ordered_json vary = nlohmann::ordered_json::array();
  for (const Vary& x : v) vary.push_back(x.key);
  res["sweep"] = {{"scenario", o.scenario}, {"vary", vary}, {"points", pts}};
  res["rows"] = rows;
  std::ofstream(fs::path(o.out) / "results.json") << res.dump(2) << "\n";
  return with;
}

void write_slurm(const SweepOptions& o, const std::vector<Point>& points) {
  std::vector<std::string> base = {self_exe(), "sweep", fs::absolute(o.scenario).string()};
  for (const auto& x : o.vary) base.insert(base.end(), {"--vary", x});
  if (o.seeds > 0) base.insert(base.end(), {"--seeds", std::to_string(o.seeds)});
  base.insert(base.end(), {"--out", fs::absolute(o.out).string()});
  for (const auto& a : run_args(o.run)) base.push_back(a);
  const std::string cwd = fs::current_path().string();
  const fs::path dir = fs::absolute(o.out);
  std::vector<std::string> task = base, merge_cmd = base;
  task.insert(task.end(), {"--point", "$SLURM_ARRAY_TASK_ID"});
  merge_cmd.push_back("--merge");
  std::string task_line = shell_line(task);
  // The task id is the shell's to expand.
  const std::string quoted = shell_quote("$SLURM_ARRAY_TASK_ID");
  task_line.replace(task_line.rfind(quoted), quoted.size(), "\"$SLURM_ARRAY_TASK_ID\"");
  std::ofstream(dir / "sweep.sbatch")
      << "#!/bin/bash\n"
      << "# One Slurm array task per point of the sweep (rnicsim sweep --slurm).\n"
      << "#SBATCH --job-name=rnicsim-sweep\n"
      << fmt::format("#SBATCH --array=0-{}\n", points.size() - 1) << "#SBATCH --cpus-per-task=1\n"
      << fmt::format("#SBATCH --output={}/points/slurm-%a.out\n", dir.string())
      << "set -euo pipefail\n"
      << "cd " << shell_quote(cwd) << "\n"
      << task_line << "\n";
  std::ofstream(dir / "merge.sbatch")
      << "#!/bin/bash\n"
      << "# Merges the sweep's points into results.json once every array task has ended.\n"
      << "#SBATCH --job-name=rnicsim-sweep-merge\n"
      << fmt::format("#SBATCH --output={}/slurm-merge.out\n", dir.string()) << "set -euo pipefail\n"
      << "cd " << shell_quote(cwd) << "\n"
      << shell_line(merge_cmd) << "\n";
  std::ofstream(dir / "submit.sh")
      << "#!/bin/bash\n"
      << "# Submits the sweep's array job, then its merge to run after every task has ended.\n"
      << "set -euo pipefail\n"
      << "cd \"$(dirname \"$0\")\"\n"
      << "jid=$(sbatch --parsable sweep.sbatch)\n"
      << "jid=${jid%%;*}\n"
      << "sbatch --dependency=afterany:\"$jid\" merge.sbatch\n"
      << "echo \"submitted array job $jid and its merge\"\n";
  fs::permissions(dir / "submit.sh", fs::perms::owner_exec, fs::perm_options::add);
}

}  // namespace

int run_sweep(const SweepOptions& o) {
  const std::vector<Vary> v = parse_varies(o);
  const bool out_existed = fs::exists(o.out);
  check_out_dir(o.out);
  std::vector<Point> points;
  try {
    // An array task or the merge step: the points were checked when the sweep was written.
    points = make_points(o, v, o.point < 0 && !o.merge);
  } catch (const InputError&) {
    // Refused before anything ran: no folder it made is left behind.
    std::error_code ec;
    if (!out_existed) fs::remove_all(o.out, ec);
    throw;
  }
  if (o.slurm) {
    write_slurm(o, points);
    fmt::print(
        "sweep: {} points; submit them with bash {}/submit.sh (sweep.sbatch: one array "
        "task per point; merge.sbatch: results.json once they have ended)\n",
        points.size(), o.out);
    return 0;
  }
  if (o.merge) {
    const size_t with = merge(o, v, points);
    fmt::print("sweep: merged {} of {} points into {}/results.json\n", with, points.size(), o.out);
    return with == points.size() ? 0 : 1;
  }
  std::vector<const Point*> todo;
  if (o.point >= 0) {
    if (size_t(o.point) >= points.size())
      throw InputError("--point", "point",
                       fmt::format("{} is not a point (0 .. {})", o.point, points.size() - 1));
    todo.push_back(&points[size_t(o.point)]);
  } else {
    for (const Point& p : points)
      if (!done_already(p)) todo.push_back(&p);
    if (!o.quiet && todo.size() < points.size())
      fmt::print("sweep: {} of {} points done already (same scenario and command): skipped\n",
                 points.size() - todo.size(), points.size());
  }
  // Up to jobs points at a time, each a process of its own.
  std::map<pid_t, std::pair<const Point*, std::chrono::steady_clock::time_point>> running;
  size_t next = 0, finished = 0, failed = 0;
  const size_t jobs = size_t(std::max(1, o.jobs));
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && running.size() < jobs) {
      const Point* p = todo[next++];
      fs::remove(fs::path(p->dir) / "point.json");
      const pid_t pid = start(*p);
      if (pid < 0) {
        fmt::print(stderr, "rnicsim: sweep: cannot start point {}: {}\n", p->index,
                   std::strerror(errno));
        ++failed;
        continue;
      }
      running[pid] = {p, std::chrono::steady_clock::now()};
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Point& p = *it->second.first;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.second).count();
    running.erase(it);
    const int code = exit_code(status);
    write_point(p, v, code, wall);
    ++finished;
    if (code != 0) {
      ++failed;
      fmt::print(stderr, "rnicsim: sweep point {} failed with exit {}: {}\n  {}\n", p.index, code,
                 last_line((fs::path(p.dir) / "stderr.txt").string()), p.command);
    } else if (!o.quiet) {
      fmt::print("sweep: point {} done ({}/{}, {:.1f} s)\n", p.index, finished, todo.size(), wall);
    }
  }
  if (o.point >= 0) return failed ? 1 : 0;
  const size_t with = merge(o, v, points);
  if (!o.quiet)
    fmt::print(
        "sweep: {} points, {} failed; wrote {}/results.json ({} with results); figures: "
        "scripts/plot {}\n",
        points.size(), failed, o.out, with, o.out);
  return failed ? 1 : 0;
}

}  // namespace rnic
