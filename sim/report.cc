#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace rnic {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string cell(const Json& v) {
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  if (v.is_string()) return esc(v.get<std::string>());
  return esc(v.dump());
}

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = uint8_t(in[i]) << 16 | uint8_t(in[i + 1]) << 8 | uint8_t(in[i + 2]);
    out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], k[v & 63]};
  }
  if (i + 1 == in.size()) {
    const uint32_t v = uint8_t(in[i]) << 16;
    out += {k[v >> 18], k[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    const uint32_t v = uint8_t(in[i]) << 16 | uint8_t(in[i + 1]) << 8;
    out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], '='};
  }
  return out;
}

// The rows as a table, columns in their first appearance.
std::string table(const std::vector<const Json*>& rows) {
  std::vector<std::string> cols;
  for (const Json* r : rows)
    for (const auto& [k, v] : r->items())
      if (k != "workload" && std::find(cols.begin(), cols.end(), k) == cols.end())
        cols.push_back(k);
  std::string h = "<table><tr>";
  for (const auto& c : cols) h += "<th>" + esc(c) + "</th>";
  h += "</tr>\n";
  for (const Json* r : rows) {
    h += "<tr>";
    for (const auto& c : cols) h += "<td>" + (r->contains(c) ? cell((*r)[c]) : "") + "</td>";
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

// One metric against x as an SVG line (a bar per row when x has one value); a log2 axis for
// message sizes.
std::string chart(const std::vector<const Json*>& rows, const std::string& x,
                  const std::string& y) {
  std::vector<std::pair<double, double>> pts;
  for (const Json* r : rows)
    if (r->contains(x) && r->contains(y) && (*r)[x].is_number() && (*r)[y].is_number())
      pts.push_back({(*r)[x].get<double>(), (*r)[y].get<double>()});
  if (pts.empty()) return "";
  std::sort(pts.begin(), pts.end());
  const bool logx = x == "bytes" && pts.front().first > 0;
  auto fx = [logx](double v) { return logx ? std::log2(v) : v; };
  double x0 = fx(pts.front().first), x1 = fx(pts.back().first), y1 = 0;
  for (const auto& p : pts) y1 = std::max(y1, p.second);
  if (y1 <= 0) y1 = 1;
  constexpr double W = 520, H = 260, L = 70, B = 40, T = 24;
  auto px = [&](double v) { return x1 > x0 ? L + (fx(v) - x0) / (x1 - x0) * (W - L - 20) : W / 2; };
  auto py = [&](double v) { return H - B - v / y1 * (H - B - T); };
  std::string s = fmt::format(
      R"(<figure><svg class="chart" width="{}" height="{}" viewBox="0 0 {} {}">)"
      R"(<text x="{}" y="16" class="t">{} vs {}</text>)"
      R"(<line x1="{}" y1="{}" x2="{}" y2="{}" class="ax"/><line x1="{}" y1="{}" x2="{}" y2="{}" class="ax"/>)",
      W, H, W, H, L, esc(y), esc(x), L, H - B, W - 10, H - B, L, T, L, H - B);
  s += fmt::format(R"(<text x="{}" y="{}" class="l" text-anchor="end">{:.4g}</text>)", L - 4, T + 4,
                   y1);
  s += fmt::format(R"(<text x="{}" y="{}" class="l" text-anchor="end">0</text>)", L - 4, H - B);
  s += fmt::format(R"(<text x="{}" y="{}" class="l" text-anchor="middle">{}{}</text>)", (L + W) / 2,
                   H - 6, esc(x), logx ? " (log2)" : "");
  if (pts.size() == 1 || x1 <= x0) {
    for (size_t i = 0; i < pts.size(); ++i) {
      const double bx = L + 20 + double(i) * 40;
      s += fmt::format(R"(<rect x="{}" y="{}" width="30" height="{}" class="bar"/>)", bx,
                       py(pts[i].second), H - B - py(pts[i].second));
      s += fmt::format(R"(<text x="{}" y="{}" class="l">{:.4g}</text>)", bx, py(pts[i].second) - 4,
                       pts[i].second);
    }
  } else {
    std::string d;
    for (const auto& p : pts)
      d += fmt::format("{}{:.1f},{:.1f}", d.empty() ? "M" : " L", px(p.first), py(p.second));
    s += R"(<path d=")" + d + R"(" class="line"/>)";
    for (const auto& p : pts)
      s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3"/>)", px(p.first), py(p.second));
    s += fmt::format(R"(<text x="{}" y="{}" class="l">{:.6g}</text>)", L, H - B + 14,
                     pts.front().first);
    s += fmt::format(R"(<text x="{}" y="{}" class="l" text-anchor="end">{:.6g}</text>)", W - 20,
                     H - B + 14, pts.back().first);
  }
  return s + "</svg></figure>\n";
}

// Hosts on the bottom row, switches that hold hosts above them, other switches on top.
std::string topology(const Json& t) {
  if (!t.is_object()) return "<p>No topology recorded for this run (a run on one host).</p>\n";
  std::vector<std::string> hosts, sws;
  for (const auto& h : t["hosts"]) hosts.push_back(h.get<std::string>());
  for (const auto& s : t["switches"]) sws.push_back(s.get<std::string>());
  std::map<std::string, int> row;
  for (const auto& h : hosts) row[h] = 2;
  for (const auto& s : sws) row[s] = 0;
  for (const auto& l : t["links"]) {
    const std::string a = l["a"], b = l["b"];
    if (row.count(a) && row[a] == 2 && row.count(b) && row[b] == 0) row[b] = 1;
    if (row.count(b) && row[b] == 2 && row.count(a) && row[a] == 0) row[a] = 1;
  }
  std::map<int, std::vector<std::string>> rows;
  for (const auto& h : hosts) rows[2].push_back(h);
  for (const auto& s : sws) rows[row[s]].push_back(s);
  size_t widest = 1;
  for (const auto& [r, v] : rows) widest = std::max(widest, v.size());
  const double W = std::max(400.0, double(widest) * 90), H = 40.0 + 90.0 * double(rows.size());
  std::map<std::string, std::pair<double, double>> at;
  int y = 0;  // the rows present, top down
  for (const auto& [r, v] : rows) {
    for (size_t i = 0; i < v.size(); ++i)
      at[v[i]] = {W * (double(i) + 0.5) / double(v.size()), 40 + y * 90.0};
    ++y;
  }
  std::string s = fmt::format(R"(<svg class="topo" width="{}" height="{}" viewBox="0 0 {} {}">)",
                              std::min(W, 1100.0), std::min(W, 1100.0) * H / W, W, H);
  for (const auto& l : t["links"]) {
    const auto& a = at[l["a"].get<std::string>()];
    const auto& b = at[l["b"].get<std::string>()];
    s += fmt::format(
        R"(<line x1="{:.0f}" y1="{:.0f}" x2="{:.0f}" y2="{:.0f}" class="link"><title>{}</title></line>)",
        a.first, a.second, b.first, b.second, esc(l["name"].get<std::string>()));
  }
  for (const auto& [name, p] : at) {
    const bool host = row[name] == 2;
    s += fmt::format(
        R"(<rect x="{:.0f}" y="{:.0f}" width="80" height="26" rx="4" class="{}"/><text x="{:.0f}" y="{:.0f}" text-anchor="middle" class="n">{}</text>)",
        p.first - 40, p.second - 13, host ? "host" : "switch", p.first, p.second + 5, esc(name));
  }
  return s + "</svg>\n";
}

bool is_error_kind(const std::string& k) {
  static const char* words[] = {"retrans",  "nack",       "rnr",       "timeout", "lost",
                                "corrupt",  "error",      "drop",      "fail",    "terminate",
                                "overflow", "out_of_seq", "duplicate", "refused", "flushed"};
  for (const char* w : words)
    if (k.find(w) != std::string::npos) return true;
  return false;
}

}  // namespace

int write_report(const std::string& dir) {
  const fs::path d(dir);
  Json res, st;
  for (auto [name, j] : {std::pair{"results.json", &res}, std::pair{"stats.json", &st}}) {
    std::ifstream f(d / name);
    if (!f) {
      fmt::print(stderr, "rnicsim: report: no {} in {} (give the --out folder of a run)\n", name,
                 dir);
      return 1;
    }
    try {
      *j = Json::parse(f);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rnicsim: report: {}: {}\n", (d / name).string(), e.what());
      return 1;
    }
  }
  const Json meta = st.value("rnicsim", Json::object());
  std::string h = R"(<!DOCTYPE html><html><head><meta charset="utf-8"><title>rnicsim: )" +
                  esc(res.value("experiment", "run")) + R"(</title><style>
body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
th{background:#eee}pre{background:#f6f6f6;padding:1em;overflow:auto;max-height:30em}
.chart .ax{stroke:#444}.chart .line{fill:none;stroke:#1f77b4;stroke-width:2}.chart circle{fill:#1f77b4}
.chart .bar{fill:#1f77b4}.chart .t{font-size:13px;font-weight:bold}.chart .l{font-size:11px}
figure{display:inline-block;margin:0 1em 1em 0}.topo .link{stroke:#888;stroke-width:2}
.topo .host{fill:#dbe9f6;stroke:#1f77b4}.topo .switch{fill:#fde2c8;stroke:#d2691e}.topo .n{font-size:12px}
.stopped{color:#b00;font-weight:bold}</style></head><body>
)";
  h += fmt::format(
      "<h1>{}</h1>\n<p>preset <b>{}</b>, seed {}, simulated {:.3f} µs in {:.2f} s of "
      "wall time; blocks: {}</p>\n",
      esc(res.value("experiment", "run")), esc(res.value("preset", "")),
      meta.value("seed", Json()).dump(), st.value("sim_time_ns", 0.0) / 1000.0,
      st.value("wall_s", 0.0), esc(meta.value("implementations", Json()).dump()));
  if (res.contains("stopped"))
    h += fmt::format("<p class=\"stopped\">The run stopped (exit {}): {}</p>\n",
                     res["stopped"].value("exit", 0),
                     esc(res["stopped"].value("why", std::string())));

  h += "<h2>Scenario</h2>\n";
  const std::string scen = meta.value("scenario", std::string());
  std::ifstream sf(scen);
  if (!scen.empty() && sf) {
    std::stringstream ss;
    ss << sf.rdbuf();
    h += "<p>" + esc(scen) + "</p><pre>" + esc(ss.str()) + "</pre>\n";
  } else {
    h += "<p>" + (scen.empty() ? std::string("rnicsim perf (no scenario file)") : esc(scen)) +
         "</p>\n";
  }
  h += "<h2>Topology</h2>\n" + topology(st.value("topology", Json()));

  // Each workload's rows (an experiment's rows as one).
  h += "<h2>Results</h2>\n";
  const Json axes = res.value("axes", Json::object());
  std::map<std::string, std::vector<const Json*>> by;
  std::vector<std::string> order;
  const Json rows = res.value("rows", Json::array());
  const Json workloads = res.value("workloads", Json::array());
  for (const Json& r : rows) {
    const std::string w = r.value("workload", std::string());
    if (!by.count(w)) order.push_back(w);
    by[w].push_back(&r);
  }
  for (const std::string& w : order) {
    std::string x = axes.value("x", std::string("bytes"));
    Json ys = axes.value("y", Json::array());
    for (const Json& wl : workloads)
      if (wl.value("name", std::string()) == w) {
        x = wl.value("x", x);
        ys = wl.value("y", ys);
        h += fmt::format("<h3>{}: {} from {} to {}</h3>\n", esc(w), esc(wl.value("test", "")),
                         esc(wl.value("from", "")), esc(wl.value("to", "")));
        if (wl.contains("competing"))
          h += "<p>Measured under competing traffic: " + esc(wl["competing"].dump()) +
               " ran on its hosts at the same time.</p>\n";
        if (wl.value("failed", false))
          h += "<p class=\"stopped\">failed: " + esc(wl.value("error", std::string())) + "</p>\n";
      }
    if (w.empty()) h += "<h3>" + esc(res.value("experiment", "rows")) + "</h3>\n";
    h += table(by[w]);
    for (const Json& y : ys)
      if (y.is_string()) h += chart(by[w], x, y.get<std::string>());
  }
  const fs::path plots = d / "plots";
  if (fs::is_directory(plots)) {
    std::vector<fs::path> pngs;
    for (const auto& e : fs::directory_iterator(plots))
      if (e.path().extension() == ".png") pngs.push_back(e.path());
    std::sort(pngs.begin(), pngs.end());
    if (!pngs.empty()) h += "<h3>scripts/plot's figures</h3>\n";
    for (const fs::path& p : pngs) {
      std::ifstream f(p, std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      h += fmt::format(
          R"(<figure><img alt="{}" src="data:image/png;base64,{}" width="480"><figcaption>{}</figcaption></figure>)",
          esc(p.filename().string()), base64(ss.str()), esc(p.filename().string()));
    }
  }

  // Counters of errors and retransmissions by kind, summed over blocks; time series by peak.
  std::map<std::string, std::pair<double, std::vector<std::string>>> errs;
  struct Series {
    std::string name, unit;
    double peak, mean;
  };
  std::vector<Series> series;
  const Json stats = st.value("stats", Json::object());
  for (const auto& [group, entries] : stats.items()) {
    for (const auto& [name, v] : entries.items()) {
      if (v.contains("value") && v["value"].is_number() && v["value"].get<double>() > 0 &&
          is_error_kind(name)) {
        auto& e = errs[name];
        e.first += v["value"].get<double>();
        e.second.push_back(fmt::format("{} {}", group, v["value"].dump()));
      }
      if (v.contains("values") && v["values"].is_array() && !v["values"].empty()) {
        double peak = 0, sum = 0;
        for (const auto& x : v["values"]) {
          peak = std::max(peak, x.get<double>());
          sum += x.get<double>();
        }
        series.push_back({group + "." + name, v.value("unit", std::string()), peak,
                          sum / double(v["values"].size())});
      }
    }
  }
  h += "<h2>Errors and retransmissions</h2>\n";
  if (errs.empty()) {
    h += "<p>None: no error, drop or retransmission counter moved.</p>\n";
  } else {
    h += "<table><tr><th>kind</th><th>total</th><th>where</th></tr>\n";
    for (const auto& [k, e] : errs) {
      std::string where;
      for (const auto& w : e.second) where += (where.empty() ? "" : ", ") + esc(w);
      h += fmt::format("<tr><td>{}</td><td>{:.0f}</td><td style=\"text-align:left\">{}</td></tr>\n",
                       esc(k), e.first, where);
    }
    h += "</table>\n";
  }
  h += "<h2>Busiest queues and links</h2>\n";
  std::stable_sort(series.begin(), series.end(), [](const Series& a, const Series& b) {
    return a.unit != b.unit ? a.unit < b.unit : a.peak > b.peak;
  });
  std::map<std::string, int> per_unit;
  h += "<table><tr><th>time series</th><th>unit</th><th>peak</th><th>mean</th></tr>\n";
  for (const Series& s : series)
    if (per_unit[s.unit]++ < 8)
      h += fmt::format(
          "<tr><td "
          "style=\"text-align:left\">{}</td><td>{}</td><td>{:.6g}</td><td>{:.6g}</td></tr>\n",
          esc(s.name), esc(s.unit), s.peak, s.mean);
  h += "</table>\n";

  h += "<h2>Files</h2>\n<ul>\n";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(d))
    if (e.is_regular_file()) files.push_back(e.path().filename());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const std::string n = f.string(), ext = f.extension().string();
    const char* what = ext == ".pcap"
                           ? " (capture: wireshark -X lua_script:scripts/wireshark/rnicsim.lua)"
                       : ext == ".fst" ? " (waveform: gtkwave)"
                                       : "";
    if (n != "report.html") h += fmt::format("<li><a href=\"{0}\">{0}</a>{1}</li>\n", esc(n), what);
  }
  const std::string tl = meta.value("timeline", std::string());
  if (!tl.empty()) {
    std::error_code ec;
    const fs::path rel = fs::relative(fs::absolute(tl), fs::absolute(d), ec);
    h += fmt::format("<li><a href=\"{0}\">{0}</a> (timeline: open it at ui.perfetto.dev)</li>\n",
                     esc(ec ? tl : rel.string()));
  }
  h += "</ul>\n<p id=\"rendered\"></p>\n<script>\n"
       "document.getElementById('rendered').textContent = 'rendered: ' +\n"
       "  document.querySelectorAll('svg.chart').length + ' figures, ' +\n"
       "  document.querySelectorAll('table').length + ' tables, ' +\n"
       "  document.querySelectorAll('svg.topo rect').length + ' nodes drawn';\n"
       "</script>\n</body></html>\n";
  const fs::path out = d / "report.html";
  std::ofstream o(out);
  o << h;
  o.close();
  if (!o) {
    fmt::print(stderr, "rnicsim: report: cannot write {}\n", out.string());
    return 1;
  }
  fmt::print("wrote {}\n", out.string());
  return 0;
}

}  // namespace rnic
