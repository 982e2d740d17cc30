#include "models/common/stats.h"

#include <algorithm>
#include <cmath>
#include <systemc>
#include <unordered_set>

#include "models/common/scheduler.h"

namespace rnic {

Histogram::Histogram(std::string name, std::string unit, std::string desc,
                     std::vector<double> edges)
    : name_(std::move(name)),
      unit_(std::move(unit)),
      desc_(std::move(desc)),
      edges_(std::move(edges)),
      buckets_(edges_.size() + 1, 0) {}

std::vector<double> Histogram::linear_edges(double first, double width, int n) {
  std::vector<double> e;
  for (int i = 0; i < n; ++i) e.push_back(first + width * i);
  return e;
}

std::vector<double> Histogram::log2_edges(double first, int n) {
  std::vector<double> e;
  for (int i = 0; i < n; ++i) e.push_back(first * std::ldexp(1.0, i));
  return e;
}

void Histogram::sample(double v) {
  const size_t b = size_t(std::upper_bound(edges_.begin(), edges_.end(), v) - edges_.begin());
  ++buckets_[b];
  if (count_ == 0 || v < min_) min_ = v;
  if (count_ == 0 || v > max_) max_ = v;
  ++count_;
  sum_ += v;
}

void Histogram::clear() {
  std::fill(buckets_.begin(), buckets_.end(), 0);
  count_ = 0;
  sum_ = min_ = max_ = 0;
}

nlohmann::ordered_json Histogram::json() const {
  nlohmann::ordered_json j;
  j["unit"] = unit_;
  j["desc"] = desc_;
  j["count"] = count_;
  j["min"] = min_;
  j["max"] = max_;
  j["mean"] = count_ ? sum_ / double(count_) : 0.0;
  j["edges"] = edges_;
  j["buckets"] = buckets_;
  return j;
}

Counter& StatGroup::counter(const std::string& name, const std::string& unit,
                            const std::string& desc) {
  for (auto& c : counters_)
    if (c.name == name) return c;
  counters_.push_back({name, unit, desc, 0});
  return counters_.back();
}

Histogram& StatGroup::histogram(const std::string& name, const std::string& unit,
                                const std::string& desc, std::vector<double> edges) {
  for (auto& h : histograms_)
    if (h.name() == name) return h;
  histograms_.emplace_back(name, unit, desc, std::move(edges));
  return histograms_.back();
}

TimeSeries& StatGroup::series(const std::string& name, const std::string& unit,
                              const std::string& desc, std::function<double()> source) {
  series_.push_back({name, unit, desc, std::move(source), {}});
  return series_.back();
}

void StatGroup::sample(uint64_t now_ps) {
  for (auto& s : series_) s.samples.emplace_back(now_ps, s.source());
}

void StatGroup::reset() {
  for (auto& c : counters_) c.value = 0;
  for (auto& h : histograms_) h.clear();
}

namespace {
nlohmann::ordered_json series_json(const TimeSeries& s) {
  nlohmann::ordered_json t = nlohmann::ordered_json::array(), v = nlohmann::ordered_json::array();
  for (const auto& [ps, x] : s.samples) {
    t.push_back(double(ps) / 1000.0);
    v.push_back(x);
  }
  return {{"unit", s.unit}, {"desc", s.desc}, {"t_ns", t}, {"values", v}};
}
}  // namespace

nlohmann::ordered_json StatGroup::json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& c : counters_)
    j[c.name] = {{"value", c.value}, {"unit", c.unit}, {"desc", c.desc}};
  for (const auto& h : histograms_) j[h.name()] = h.json();
  for (const auto& s : series_) j[s.name] = series_json(s);
  return j;
}

namespace {

void append_string(std::string& out, const std::string& s) {
  // Plain printable ASCII goes as it is; anything else as the JSON library escapes it.
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      out += nlohmann::ordered_json(s).dump();
      return;
    }
  }
  out += '"';
  out += s;
  out += '"';
}

}  // namespace

void append_json_key(std::string& out, const std::string& key, int indent, int depth) {
  out.append(size_t(indent * depth), ' ');
  append_string(out, key);
  out += ": ";
}

void append_nested(std::string& out, const std::string& text, int indent, int depth) {
  const std::string pad(size_t(indent * depth), ' ');
  size_t at = 0;
  for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    out.append(text, at, nl + 1 - at);
    out += pad;
  }
  out.append(text, at, std::string::npos);
}

void StatGroup::append_json(std::string& out, int indent, int depth) const {
  // A name given twice (a series of a counter's name) keeps the object's first place and last
  // value, as json() does: that group goes through json(). (Counters' names are unique, and so
  // are histograms'.)
  bool twice = false;
  if (!histograms_.empty() || !series_.empty()) {
    std::vector<const std::string*> names;
    for (const auto& c : counters_) names.push_back(&c.name);
    for (const auto& h : histograms_) names.push_back(&h.name());
    for (const auto& t : series_) names.push_back(&t.name);
    std::sort(names.begin(), names.end(),
              [](const std::string* a, const std::string* b) { return *a < *b; });
    for (size_t i = 1; i < names.size(); ++i) twice |= *names[i] == *names[i - 1];
  }
  if (twice || (counters_.empty() && histograms_.empty() && series_.empty()))
    return append_nested(out, json().dump(indent), indent, depth);
  out += "{\n";
  bool first = true;
  auto next = [&](const std::string& name) {
    if (!first) out += ",\n";
    first = false;
    append_json_key(out, name, indent, depth + 1);
  };
  for (const auto& c : counters_) {
    next(c.name);
    out += "{\n";
    append_json_key(out, "value", indent, depth + 2);
    out += std::to_string(c.value);
    out += ",\n";
    append_json_key(out, "unit", indent, depth + 2);
    append_string(out, c.unit);
    out += ",\n";
    append_json_key(out, "desc", indent, depth + 2);
    append_string(out, c.desc);
    out += '\n';
    out.append(size_t(indent * (depth + 1)), ' ');
    out += '}';
  }
  for (const auto& h : histograms_) {
    next(h.name());
    append_nested(out, h.json().dump(indent), indent, depth + 1);
  }
  for (const auto& t : series_) {
    next(t.name);
    append_nested(out, series_json(t).dump(indent), indent, depth + 1);
  }
  out += '\n';
  out.append(size_t(indent * depth), ' ');
  out += '}';
}

StatGroup& StatRegistry::group(const std::string& name) {
  StatGroup*& g = by_name_[name];
  if (!g) {
    g = &groups_.emplace_back(name);
    if (sc_core::sc_is_running()) late_.push_back(g);
  }
  return *g;
}

void StatRegistry::on_settle(const void* owner, std::function<void()> f) {
  settle_.emplace_back(owner, std::move(f));
}

void StatRegistry::drop_settle(const void* owner) {
  settle_.erase(std::remove_if(settle_.begin(), settle_.end(),
                               [owner](const auto& e) { return e.first == owner; }),
                settle_.end());
  lazy_.erase(std::remove_if(lazy_.begin(), lazy_.end(),
                             [owner](const Lazy& e) { return e.owner == owner; }),
              lazy_.end());
  idle_.erase(std::remove_if(idle_.begin(), idle_.end(),
                             [owner](const IdleTimer& e) { return e.owner == owner; }),
              idle_.end());
}

void StatRegistry::on_lazy(const void* owner, std::function<uint64_t()> next,
                           std::function<void()> run) {
  lazy_.push_back({owner, std::move(next), std::move(run)});
}

uint64_t StatRegistry::next_lazy() const {
  uint64_t t = UINT64_MAX;
  for (const Lazy& e : lazy_) t = std::min(t, e.next());
  return t;
}

void StatRegistry::run_lazy() const {
  for (const Lazy& e : lazy_) e.run();
}

void StatRegistry::on_idle_timer(const void* owner, std::function<uint64_t()> next,
                                 std::function<void(uint64_t)> fire) {
  idle_.push_back({owner, std::move(next), std::move(fire)});
}

uint64_t StatRegistry::next_idle_timer() const {
  uint64_t t = UINT64_MAX;
  for (const IdleTimer& e : idle_) t = std::min(t, e.next());
  return t;
}

void StatRegistry::fire_idle_timers(uint64_t t_ps) const {
  for (const IdleTimer& e : idle_) {
    const uint64_t due = e.next();
    if (due <= t_ps) e.fire(due);
  }
}

void StatRegistry::idle_timer_moved(uint64_t t_ps) const {
  if (t_ps >= idle_horizon_) return;
  idle_horizon_ = t_ps;
  idle_paused_ = true;
  Scheduler::get().lower_horizon(t_ps);
  sc_core::sc_pause();
}

void StatRegistry::settle() const {
  for (const auto& e : settle_) e.second();
}

std::vector<const StatGroup*> StatRegistry::listed(
    const std::function<bool(const std::string&)>& keep) const {
  settle();
  std::vector<const StatGroup*> late = late_;
  std::sort(late.begin(), late.end(),
            [](const StatGroup* a, const StatGroup* b) { return a->name() < b->name(); });
  const std::unordered_set<const StatGroup*> is_late(late_.begin(), late_.end());
  std::vector<const StatGroup*> v;
  for (const auto& g : groups_)
    if (!is_late.count(&g) && (!keep || keep(g.name()))) v.push_back(&g);
  for (const StatGroup* g : late)
    if (!keep || keep(g->name())) v.push_back(g);
  return v;
}

nlohmann::ordered_json StatRegistry::json(
    const std::function<bool(const std::string&)>& keep) const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const StatGroup* g : listed(keep))  // (names are unique: by_name_)
    append_new_key(j, g->name(), g->json());
  return j;
}

void StatRegistry::append_json(std::string& out, int indent, int depth,
                               const std::function<bool(const std::string&)>& keep) const {
  const std::vector<const StatGroup*> order = listed(keep);
  if (order.empty()) {
    out += "{}";
    return;
  }
  out += "{\n";
  for (size_t i = 0; i < order.size(); ++i) {
    if (i) out += ",\n";
    append_json_key(out, order[i]->name(), indent, depth + 1);
    order[i]->append_json(out, indent, depth + 1);
  }
  out += '\n';
  out.append(size_t(indent * depth), ' ');
  out += '}';
}

std::vector<std::string> StatRegistry::names_before_start() const {
  const std::unordered_set<const StatGroup*> is_late(late_.begin(), late_.end());
  std::vector<std::string> v;
  for (const auto& g : groups_)
    if (!is_late.count(&g)) v.push_back(g.name());
  return v;
}

void StatRegistry::sample(uint64_t now_ps) {
  if (samples_ >= kMaxSamples) return;
  settle();
  ++samples_;
  for (auto& g : groups_) g.sample(now_ps);
}

uint64_t StatGroup::activity() const {
  if (!progress_) return 0;
  uint64_t a = 0;
  for (const auto& c : counters_)
    if (c.progress) a += c.value;
  for (const auto& h : histograms_) a += h.count();
  return a;
}

uint64_t StatRegistry::activity() const {
  uint64_t a = 0;
  for (const auto& g : groups_) a += g.activity();
  return a;
}

void StatRegistry::reset() {
  settle();
  for (auto& g : groups_) g.reset();
  samples_ = 0;
}

}  // namespace rnic
