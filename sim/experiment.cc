#include "sim/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <iterator>

#include "sim/cluster.h"
#include "sim/host_card.h"
#include "sim/link_capture.h"
#include "sim/numbers.h"
#include "sim/ranks.h"
#include "sim/request_trace.h"
#include "sim/run_trace.h"

namespace rnic {

// Defined in sim/experiments/*.cc.
ExperimentKind mmio_latency_experiment();
ExperimentKind pbl_acquisition_experiment();
ExperimentKind pcie_dma_experiment();
ExperimentKind dma_roundtrip_experiment();

namespace {
std::vector<ExperimentKind>& kinds() {
  static std::vector<ExperimentKind> k = {mmio_latency_experiment(), pbl_acquisition_experiment(),
                                          pcie_dma_experiment(), dma_roundtrip_experiment()};
  return k;
}
}  // namespace

const std::vector<ExperimentKind>& experiment_kinds() { return kinds(); }

namespace {
std::vector<ExperimentKind>& wkinds() {
  static std::vector<ExperimentKind> k;
  return k;
}
std::function<int(ExperimentContext&)>& wrunner() {
  static std::function<int(ExperimentContext&)> r;
  return r;
}
}  // namespace

const std::vector<ExperimentKind>& workload_kinds() { return wkinds(); }
const ExperimentKind* find_workload(const std::string& test) {
  for (const auto& k : wkinds())
    if (k.kind == test) return &k;
  return nullptr;
}
void add_workload_kind(ExperimentKind k) { wkinds().push_back(std::move(k)); }
void set_workload_runner(std::function<int(ExperimentContext&)> run) { wrunner() = std::move(run); }
const std::function<int(ExperimentContext&)>& workload_runner() { return wrunner(); }
namespace {
std::function<void(const Scenario&, const Topology&)>& wchecker() {
  static std::function<void(const Scenario&, const Topology&)> f;
  return f;
}
}  // namespace
void set_workload_checker(std::function<void(const Scenario&, const Topology&)> check) {
  wchecker() = std::move(check);
}
const std::function<void(const Scenario&, const Topology&)>& workload_checker() {
  return wchecker();
}

void add_experiment_kind(ExperimentKind k) {
  for (const auto& e : kinds())
    if (e.kind == k.kind) return;
  kinds().push_back(std::move(k));
}

const ExperimentKind* find_experiment(const std::string& kind) {
  for (const auto& k : experiment_kinds())
    if (k.kind == kind) return &k;
  return nullptr;
}

namespace {

int64_t parse_int(const ExpKey& k, const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) throw InputError(where, "experiment." + k.key, "expected an integer");
  const std::string s = n.Scalar();
  int64_t v = 0;
  if (const std::string why = rnic::parse_int(s, &v); !why.empty())
    throw InputError(where, "experiment." + k.key, why);
  if (double(v) < k.lo || double(v) > k.hi)
    throw InputError(where, "experiment." + k.key,
                     fmt::format("{} is out of range [{}, {}]{}", v, k.lo, k.hi,
                                 k.unit.empty() ? "" : " " + k.unit));
  return v;
}

}  // namespace

void check_experiment_key(const ExpKey& k, const YAML::Node& n, const std::string& where) {
  switch (k.type) {
    case ExpKey::kInt:
      parse_int(k, n, where);
      break;
    case ExpKey::kIntList:
      if (!n.IsSequence() || n.size() == 0)
        throw InputError(where, "experiment." + k.key, "expected a non-empty list of integers");
      for (const auto& e : n) parse_int(k, e, where);
      break;
    case ExpKey::kStringList:
      if (!n.IsSequence() || n.size() == 0)
        throw InputError(where, "experiment." + k.key, "expected a non-empty list");
      for (const auto& e : n) {
        if (!e.IsScalar() ||
            std::find(k.choices.begin(), k.choices.end(), e.Scalar()) == k.choices.end()) {
          std::string list;
          for (const auto& c : k.choices) list += (list.empty() ? "" : ", ") + c;
          throw InputError(
              where, "experiment." + k.key,
              fmt::format("'{}' is not one of {}", e.IsScalar() ? e.Scalar() : "?", list));
        }
      }
      break;
  }
}

// A key of a kind's schema, and its value as given (nodes) or the schema's default.
static const ExpKey& key_in(const ExperimentKind& k, const std::string& key) {
  for (const auto& e : k.keys)
    if (e.key == key) return e;
  throw std::logic_error(k.kind + ": key not declared: " + key);
}

static YAML::Node value_in(const ExperimentKind& k, const std::map<std::string, YAML::Node>& nodes,
                           const std::string& key) {
  auto it = nodes.find(key);
  return it != nodes.end() ? it->second : YAML::Load(key_in(k, key).def);
}

static int64_t int_in(const ExperimentKind& k, const std::map<std::string, YAML::Node>& nodes,
                      const std::string& key) {
  return parse_int(key_in(k, key), value_in(k, nodes, key), "default");
}

static std::vector<int64_t> ints_in(const ExperimentKind& k,
                                    const std::map<std::string, YAML::Node>& nodes,
                                    const std::string& key) {
  std::vector<int64_t> v;
  for (const auto& e : value_in(k, nodes, key))
    v.push_back(parse_int(key_in(k, key), e, "default"));
  return v;
}

int64_t workload_int(const WorkloadSpec& w, const std::string& key) {
  return int_in(*find_workload(w.test), w.nodes, key);
}

std::vector<int64_t> workload_ints(const WorkloadSpec& w, const std::string& key) {
  return ints_in(*find_workload(w.test), w.nodes, key);
}

void ExperimentContext::attach(HostCard& sys) {
  if (trace) trace->attach(sys);
}

void ExperimentContext::attach(Cluster& sys) {
  if (trace) trace->attach(sys);
  if (requests) requests->attach(sys);
  topology = {{"hosts", nlohmann::ordered_json::array()},
              {"switches", nlohmann::ordered_json::array()},
              {"links", nlohmann::ordered_json::array()}};
  for (const std::string& n : sys.host_names) topology["hosts"].push_back(n);
  for (const std::string& s : sys.switch_names) topology["switches"].push_back(s);
  for (size_t i = 0; i < sys.links.size(); ++i)
    topology["links"].push_back(
        {{"name", sys.link_names[i]}, {"a", sys.link_ends[i][0]}, {"b", sys.link_ends[i][1]}});
  owner.clear();
  for (size_t i = 0; i < sys.host_names.size(); ++i)
    owner[sys.host_names[i]] = sys.part.host_rank[i];
  for (size_t i = 0; i < sys.switch_names.size(); ++i)
    owner[sys.switch_names[i]] = sys.part.switch_rank[i];
  for (size_t i = 0; i < sys.links.size(); ++i) {
    const int a = owner[sys.link_ends[i][0]], b = owner[sys.link_ends[i][1]];
    owner[sys.link_names[i]] = a == b ? a : -1;
  }
  if (!scenario.outputs.pcap) return;
  if (ranks::parallel()) {
    const std::filesystem::path dir =
        std::filesystem::path(out_dir) / fmt::format(".rank{}", ranks::rank());
    std::filesystem::create_directories(dir);
    for (size_t i = 0; i < sys.links.size(); ++i) {
      if (ranks::rank() == 0)
        captures.push_back(
            (std::filesystem::path(out_dir) / (sys.link_names[i] + ".pcap")).string());
      const int a = owner[sys.link_ends[i][0]], b = owner[sys.link_ends[i][1]];
      if (a != ranks::rank() && b != ranks::rank()) continue;
      auto f =
          std::make_unique<std::ofstream>(dir / (sys.link_names[i] + ".rec"), std::ios::binary);
      std::ofstream* out = f.get();
      sys.link(i).add_wire_tap(
          [out](uint64_t t_ps, const eth::EthLink::Frame& fr, const uint8_t* fcs, int end) {
            ranks::Packer r;
            r.put(t_ps).put(uint32_t(end)).put(uint32_t(fr.size())).put_bytes(fr.data(), fr.size());
            r.put_bytes(fcs, 4);
            out->write(reinterpret_cast<const char*>(r.data()), std::streamsize(r.size()));
          });
      rank_captures.push_back(std::move(f));
    }
    return;
  }
  for (size_t i = 0; i < sys.links.size(); ++i) {
    const std::string path =
        (std::filesystem::path(out_dir) / (sys.link_names[i] + ".pcap")).string();
    capture_writers.push_back(capture_link(sys.link(i), path, scenario.outputs.pcap_fcs));
    captures.push_back(path);
  }
}

void ExperimentContext::merge_rank_captures() {
  rank_captures.clear();  // closed
  ranks::all_gather("");  // every rank's are
  if (ranks::rank() != 0 || topology.is_null()) return;
  // One record of a rank's file at a time: (time, end, frame, FCS), as attach wrote them.
  struct Rec {
    uint64_t t_ps = 0;
    uint32_t end = 0;
    std::vector<uint8_t> frame;
    std::array<uint8_t, 4> fcs{};
    bool read(std::ifstream& in) {
      uint32_t len = 0;
      if (!in.read(reinterpret_cast<char*>(&t_ps), sizeof t_ps) ||
          !in.read(reinterpret_cast<char*>(&end), sizeof end) ||
          !in.read(reinterpret_cast<char*>(&len), sizeof len))
        return false;
      frame.resize(len);
      return bool(in.read(reinterpret_cast<char*>(frame.data()), len)) &&
             bool(in.read(reinterpret_cast<char*>(fcs.data()), 4));
    }
  };
  const std::filesystem::path out(out_dir);
  const size_t n = size_t(ranks::size());
  for (const auto& l : topology["links"]) {
    const std::string name = l["name"].get<std::string>();
    // Each rank's records are in time order: merged by time, one time's by rank (the order one
    // process writes them in: the writer orders them by end), one record of each at a time.
    std::vector<std::ifstream> in(n);
    std::vector<Rec> head(n);
    std::vector<bool> more(n);
    for (size_t r = 0; r < n; ++r) {
      in[r].open(out / fmt::format(".rank{}", r) / (name + ".rec"), std::ios::binary);
      more[r] = in[r] && head[r].read(in[r]);
    }
    PcapWriter w((out / (name + ".pcap")).string(), scenario.outputs.pcap_fcs);
    for (;;) {
      size_t best = n;
      for (size_t r = 0; r < n; ++r)
        if (more[r] && (best == n || head[r].t_ps < head[best].t_ps)) best = r;
      if (best == n) break;
      const Rec& x = head[best];
      w.write(x.t_ps, x.frame.data(), x.frame.size(), x.fcs.data(), int(x.end));
      more[best] = head[best].read(in[best]);
    }
  }
  std::error_code ec;
  for (int r = 0; r < ranks::size(); ++r)
    std::filesystem::remove_all(out / fmt::format(".rank{}", r), ec);
}

int64_t ExperimentContext::get_int(const std::string& key) const {
  return int_in(*find_experiment(scenario.experiment.kind), scenario.experiment.nodes, key);
}

std::vector<int64_t> ExperimentContext::get_ints(const std::string& key) const {
  return ints_in(*find_experiment(scenario.experiment.kind), scenario.experiment.nodes, key);
}

std::vector<std::string> ExperimentContext::get_strings(const std::string& key) const {
  std::vector<std::string> v;
  for (const auto& e :
       value_in(*find_experiment(scenario.experiment.kind), scenario.experiment.nodes, key))
    v.push_back(e.Scalar());
  return v;
}

}  // namespace rnic
