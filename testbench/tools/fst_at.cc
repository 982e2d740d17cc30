// fst_at: the values of a waveform's signals at one time, without a viewer (docs/debugging.md).
//
//   fst_at FILE.fst TIME_NS [GLOB ...]
//   fst_at FILE.fst changes [GLOB ...]
//
// Prints "scope.name = value" (decimal; x or z bits as they are) for every variable whose
// "scope.name" matches one of the globs (fnmatch; all when none is given), as it stands at
// TIME_NS (the last change at or before it; a time outside the file's span reads at its nearest
// end). With `changes` instead of a time it prints every value change of those variables, "TIME_NS
// scope.name = value" in time order (at one time, in the order the file declares them). Exit 2
// on bad arguments or an unreadable file, 1 when no variable matches.
#include <fnmatch.h>
#include <gtkwave/fstapi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

std::string decimal(const char* bits) {
  std::string b = bits ? bits : "";
  if (b.empty()) return "?";
  if (b.find_first_not_of("01") != std::string::npos) return b;  // x, z: as they are
  if (b.size() > 64) return "0b" + b;
  unsigned long long v = 0;
  for (char c : b) v = (v << 1) | unsigned(c == '1');
  return std::to_string(v);
}

struct Change {
  uint64_t t;
  fstHandle handle;
  std::string value;
};

void on_change(void* user, uint64_t t, fstHandle h, const unsigned char* value) {
  static_cast<std::vector<Change>*>(user)->push_back(
      {t, h, value ? reinterpret_cast<const char*>(value) : ""});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fst_at FILE.fst TIME_NS|changes [GLOB ...]\n");
    return 2;
  }
  const bool changes = std::string(argv[2]) == "changes";
  char* end = nullptr;
  const double ns = changes ? 0 : std::strtod(argv[2], &end);
  if (!changes && (!end || *end || ns < 0)) {
    std::fprintf(stderr, "fst_at: '%s' is not a time in ns\n", argv[2]);
    return 2;
  }
  void* r = fstReaderOpen(argv[1]);
  if (!r) {
    std::fprintf(stderr, "fst_at: %s: cannot read it as FST\n", argv[1]);
    return 2;
  }
  // Time in the file's unit (10^timescale s).
  const int scale = fstReaderGetTimescale(r);
  const uint64_t t = uint64_t(std::llround(ns * std::pow(10.0, -9 - scale)));
  std::vector<std::string> globs(argv + 3, argv + argc);
  std::vector<std::string> scope;
  std::vector<std::pair<std::string, fstHandle>> vars;
  while (fstHier* h = fstReaderIterateHier(r)) {
    if (h->htyp == FST_HT_SCOPE) scope.push_back(h->u.scope.name);
    if (h->htyp == FST_HT_UPSCOPE && !scope.empty()) scope.pop_back();
    if (h->htyp != FST_HT_VAR) continue;
    std::string full;
    for (const auto& s : scope) full += s + ".";
    const std::string name = h->u.var.name;
    full += name.substr(0, name.find(' '));
    bool match = globs.empty();
    for (const auto& g : globs) match |= fnmatch(g.c_str(), full.c_str(), 0) == 0;
    if (match) vars.push_back({full, h->u.var.handle});
  }
  if (changes) {
    std::map<fstHandle, std::vector<size_t>> names;  // a handle's variables (aliases share one)
    for (size_t i = 0; i < vars.size(); ++i) names[vars[i].second].push_back(i);
    std::vector<Change> all;
    fstReaderSetFacProcessMaskAll(r);
    fstReaderIterBlocks(r, on_change, &all, nullptr);
    // At one time, in declaration order (a handle's changes in their own order).
    std::stable_sort(all.begin(), all.end(), [&names](const Change& a, const Change& b) {
      if (a.t != b.t) return a.t < b.t;
      const auto ia = names.find(a.handle), ib = names.find(b.handle);
      const size_t ka = ia == names.end() ? SIZE_MAX : ia->second.front();
      const size_t kb = ib == names.end() ? SIZE_MAX : ib->second.front();
      return ka < kb;
    });
    const double ns_per = std::pow(10.0, scale + 9);
    for (const Change& c : all) {
      const auto it = names.find(c.handle);
      if (it == names.end()) continue;
      for (size_t i : it->second)
        std::printf("%.3f %s = %s\n", double(c.t) * ns_per, vars[i].first.c_str(),
                    decimal(c.value.c_str()).c_str());
    }
    fstReaderClose(r);
    return vars.empty() ? 1 : 0;
  }
  // Outside the file's span: the nearest end (the values hold from the last change on).
  const uint64_t t0 = fstReaderGetStartTime(r), t1 = fstReaderGetEndTime(r);
  if (t < t0 || t > t1)
    std::fprintf(stderr,
                 "fst_at: %s ns is outside the file's %llu .. %llu (unit 1e%d s): at %llu\n",
                 argv[2], (unsigned long long)t0, (unsigned long long)t1, scale,
                 (unsigned long long)(t < t0 ? t0 : t1));
  const uint64_t at = t < t0 ? t0 : t > t1 ? t1 : t;
  std::vector<char> buf(4096);
  for (const auto& [name, handle] : vars)
    std::printf("%s = %s\n", name.c_str(),
                decimal(fstReaderGetValueFromHandleAtTime(r, at, handle, buf.data())).c_str());
  fstReaderClose(r);
  return vars.empty() ? 1 : 0;
}
