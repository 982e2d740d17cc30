#include "sim/fst_merge.h"

#include <gtkwave/fstapi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace rnic {

namespace {

struct Var {
  size_t key = 0, part = 0, pos = 0;
  std::vector<std::pair<unsigned char, std::string>> scopes;  // (type, name), outermost first
  unsigned char typ = 0, dir = 0;
  uint32_t length = 0;
  std::string name;
  fstHandle handle = 0;  // the part's
};

bool is_real(unsigned char typ) {
  return typ == FST_VT_VCD_REAL || typ == FST_VT_VCD_REAL_PARAMETER || typ == FST_VT_VCD_REALTIME ||
         typ == FST_VT_SV_SHORTREAL;
}

// One part's value changes as they are read (in its time order), written to a spill file: the
// time, the merged file's handle, then the value's bytes (as many as the handle's values have).
struct Spill {
  std::FILE* f = nullptr;
  const std::vector<fstHandle>* map = nullptr;  // the part's handle -> the merged file's
  const std::vector<uint32_t>* size = nullptr;  // the part's handle -> a value's bytes
  bool failed = false;
};

void on_change(void* user, uint64_t t, fstHandle h, const unsigned char* value) {
  auto* s = static_cast<Spill*>(user);
  const fstHandle to = (*s->map)[h];
  if (std::fwrite(&t, sizeof t, 1, s->f) != 1 || std::fwrite(&to, sizeof to, 1, s->f) != 1 ||
      std::fwrite(value, 1, (*s->size)[h], s->f) != (*s->size)[h])
    s->failed = true;
}

// The next change of a spill file, read back: false at its end.
struct Next {
  uint64_t t = 0;
  fstHandle to = 0;
  std::vector<unsigned char> value;
  bool read(std::FILE* f, const std::vector<uint32_t>& bytes) {
    if (std::fread(&t, sizeof t, 1, f) != 1 || std::fread(&to, sizeof to, 1, f) != 1) return false;
    value.resize(size_t(bytes[to]) + 1);
    value.back() = 0;
    return std::fread(value.data(), 1, bytes[to], f) == bytes[to];
  }
};

}  // namespace

std::vector<std::pair<std::string, std::vector<std::string>>> fst_rtl_scopes(
    const std::string& path) {
  void* r = fstReaderOpen(path.c_str());
  if (!r) throw std::runtime_error(path + ": cannot read it as FST");
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::vector<std::string> scope;
  size_t rtl_depth = 0;  // the scopes' depth at the innermost `rtl` among them (0: none)
  std::string at;        // the current scope's path
  while (fstHier* h = fstReaderIterateHier(r)) {
    if (h->htyp == FST_HT_SCOPE) {
      scope.push_back(h->u.scope.name);
      // (A Verilated model's scope is one name with dots: "host.block.rtl".)
      const std::string& s = scope.back();
      const bool rtl = s == "rtl" || (s.size() > 4 && s.compare(s.size() - 4, 4, ".rtl") == 0);
      if (rtl && !rtl_depth) rtl_depth = scope.size();
      at.clear();
      for (const std::string& s : scope) at += (at.empty() ? "" : ".") + s;
    } else if (h->htyp == FST_HT_UPSCOPE && !scope.empty()) {
      if (scope.size() == rtl_depth) rtl_depth = 0;
      scope.pop_back();
      at.clear();
      for (const std::string& s : scope) at += (at.empty() ? "" : ".") + s;
    } else if (h->htyp == FST_HT_VAR && rtl_depth &&
               std::none_of(scope.begin() + long(rtl_depth), scope.end(), [](const std::string& s) {
                 return s.rfind("unnamedblk", 0) == 0;  // a loop's index: not the design's
               })) {
      std::string name = h->u.var.name;  // "name" or "name [msb:lsb]"
      name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
      if (out.empty() || out.back().first != at) out.push_back({at, {}});
      out.back().second.push_back(at + "." + name);
    }
  }
  fstReaderClose(r);
  return out;
}

void merge_fst(const std::vector<std::string>& parts, const std::string& out,
               const std::function<size_t(const std::string&)>& order) {
  std::vector<Var> vars;
  std::vector<std::vector<uint32_t>> sizes(parts.size());
  int timescale = 0;
  uint64_t end = 0;  // the last time of any part
  for (size_t p = 0; p < parts.size(); ++p) {
    void* r = fstReaderOpen(parts[p].c_str());
    if (!r) throw std::runtime_error(parts[p] + ": not a waveform that can be read");
    const int ts = fstReaderGetTimescale(r);
    if (p > 0 && ts != timescale) {
      fstReaderClose(r);
      throw std::runtime_error(parts[p] + ": another time unit than " + parts[0] + "'s");
    }
    timescale = ts;
    end = std::max(end, fstReaderGetEndTime(r));
    sizes[p].assign(size_t(fstReaderGetMaxHandle(r)) + 1, 0);
    std::vector<std::pair<unsigned char, std::string>> scope;
    size_t pos = 0;
    while (fstHier* h = fstReaderIterateHier(r)) {
      if (h->htyp == FST_HT_SCOPE) {
        scope.emplace_back(h->u.scope.typ, std::string(h->u.scope.name, h->u.scope.name_length));
      } else if (h->htyp == FST_HT_UPSCOPE) {
        if (!scope.empty()) scope.pop_back();
      } else if (h->htyp == FST_HT_VAR) {
        Var v;
        v.key = order(scope.empty() ? std::string() : scope.front().second);
        v.part = p;
        v.pos = pos++;
        v.scopes = scope;
        v.typ = h->u.var.typ;
        v.dir = h->u.var.direction;
        v.length = h->u.var.length;
        v.name.assign(h->u.var.name, h->u.var.name_length);
        v.handle = h->u.var.handle;
        if (v.handle < sizes[p].size()) sizes[p][v.handle] = is_real(v.typ) ? 8 : v.length;
        vars.push_back(std::move(v));
      }
    }
    fstReaderClose(r);
  }
  std::stable_sort(vars.begin(), vars.end(), [](const Var& a, const Var& b) {
    return std::tie(a.key, a.part, a.pos) < std::tie(b.key, b.part, b.pos);
  });

  void* w = fstWriterCreate(out.c_str(), 1);
  if (!w) throw std::runtime_error(out + ": cannot write the waveform");
  fstWriterSetPackType(w, FST_WR_PT_LZ4);
  fstWriterSetTimescale(w, timescale);
  // The part's handles -> the merged file's; an alias (a handle declared again) stays one.
  std::vector<std::vector<fstHandle>> map(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) map[p].assign(sizes[p].size(), 0);
  fstHandle next_handle = 0;                              // the largest given
  std::vector<std::pair<unsigned char, std::string>> at;  // the scopes open
  for (const Var& v : vars) {
    size_t common = 0;
    while (common < at.size() && common < v.scopes.size() && at[common] == v.scopes[common])
      ++common;
    for (size_t i = at.size(); i > common; --i) fstWriterSetUpscope(w);
    at.resize(common);
    for (size_t i = common; i < v.scopes.size(); ++i) {
      fstWriterSetScope(w, fstScopeType(v.scopes[i].first), v.scopes[i].second.c_str(), nullptr);
      at.push_back(v.scopes[i]);
    }
    fstHandle& to = map[v.part][v.handle];
    to = fstWriterCreateVar(w, fstVarType(v.typ), fstVarDir(v.dir), v.length, v.name.c_str(), to);
    next_handle = std::max(next_handle, to);
  }
  for (size_t i = at.size(); i > 0; --i) fstWriterSetUpscope(w);

  // A value's bytes by the merged file's handle.
  std::vector<uint32_t> bytes(size_t(next_handle) + 1, 0);
  for (size_t p = 0; p < parts.size(); ++p)
    for (size_t h = 0; h < map[p].size(); ++h)
      if (map[p][h]) bytes[map[p][h]] = sizes[p][h];
  // Each part's changes go to a spill file beside `out`, then the files are merged in time order
  // (at one time, the parts' in their order): memory stays flat whatever the waveform's length.
  std::vector<std::unique_ptr<std::FILE, int (*)(std::FILE*)>> spill;
  std::vector<std::string> spill_paths;
  auto fail = [&](const std::string& why) {
    fstWriterClose(w);
    spill.clear();
    for (const std::string& f : spill_paths) std::remove(f.c_str());
    throw std::runtime_error(why);
  };
  for (size_t p = 0; p < parts.size(); ++p) {
    spill_paths.push_back(out + ".part" + std::to_string(p));
    spill.emplace_back(std::fopen(spill_paths.back().c_str(), "w+b"), &std::fclose);
    if (!spill.back()) fail(spill_paths.back() + ": cannot write");
    void* r = fstReaderOpen(parts[p].c_str());
    if (!r) fail(parts[p] + ": not a waveform that can be read");
    Spill sp{spill.back().get(), &map[p], &sizes[p]};
    fstReaderSetFacProcessMaskAll(r);
    fstReaderIterBlocksSetNativeDoublesOnCallback(r, 1);
    fstReaderIterBlocks(r, on_change, &sp, nullptr);
    fstReaderClose(r);
    if (sp.failed || std::fflush(sp.f) != 0) fail(spill_paths.back() + ": cannot write");
    std::rewind(sp.f);
  }
  std::vector<Next> head(parts.size());
  std::vector<bool> more(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) more[p] = head[p].read(spill[p].get(), bytes);
  uint64_t now = UINT64_MAX;
  for (;;) {
    size_t best = parts.size();
    for (size_t p = 0; p < parts.size(); ++p)
      if (more[p] && (best == parts.size() || head[p].t < head[best].t)) best = p;
    if (best == parts.size()) break;
    Next& c = head[best];
    if (c.t != now) {
      now = c.t;
      fstWriterEmitTimeChange(w, now);
    }
    fstWriterEmitValueChange(w, c.to, c.value.data());
    more[best] = c.read(spill[best].get(), bytes);
  }
  spill.clear();
  for (const std::string& f : spill_paths) std::remove(f.c_str());
  if (now == UINT64_MAX || end > now) fstWriterEmitTimeChange(w, end);
  fstWriterClose(w);
}

}  // namespace rnic
