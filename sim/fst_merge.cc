#include "sim/fst_merge.h"

#include <gtkwave/fstapi.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
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

// One part's value changes, in its time order: times, the merged file's handles and values.
struct Changes {
  std::vector<uint64_t> t;
  std::vector<fstHandle> to;
  std::vector<uint32_t> off;  // each value's start in `bytes` (its end: the next one's start)
  std::string bytes;
  const std::vector<fstHandle>* map = nullptr;  // the part's handle -> the merged file's
  const std::vector<uint32_t>* size = nullptr;  // the part's handle -> a value's bytes
};

void on_change(void* user, uint64_t t, fstHandle h, const unsigned char* value) {
  auto* c = static_cast<Changes*>(user);
  c->t.push_back(t);
  c->to.push_back((*c->map)[h]);
  c->off.push_back(uint32_t(c->bytes.size()));
  c->bytes.append(reinterpret_cast<const char*>(value), (*c->size)[h]);
}

}  // namespace

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
  }
  for (size_t i = at.size(); i > 0; --i) fstWriterSetUpscope(w);

  std::vector<Changes> ch(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    void* r = fstReaderOpen(parts[p].c_str());
    if (!r) {
      fstWriterClose(w);
      throw std::runtime_error(parts[p] + ": not a waveform that can be read");
    }
    ch[p].map = &map[p];
    ch[p].size = &sizes[p];
    fstReaderSetFacProcessMaskAll(r);
    fstReaderIterBlocksSetNativeDoublesOnCallback(r, 1);
    fstReaderIterBlocks(r, on_change, &ch[p], nullptr);
    fstReaderClose(r);
  }
  // Each part's changes are in time order: at one time, the parts' in their order.
  std::vector<size_t> next(parts.size(), 0);
  uint64_t now = UINT64_MAX;
  for (;;) {
    size_t best = parts.size();
    for (size_t p = 0; p < parts.size(); ++p)
      if (next[p] < ch[p].t.size() &&
          (best == parts.size() || ch[p].t[next[p]] < ch[best].t[next[best]]))
        best = p;
    if (best == parts.size()) break;
    Changes& c = ch[best];
    const size_t i = next[best]++;
    if (c.t[i] != now) {
      now = c.t[i];
      fstWriterEmitTimeChange(w, now);
    }
    fstWriterEmitValueChange(w, c.to[i], c.bytes.data() + c.off[i]);
  }
  if (now == UINT64_MAX || end > now) fstWriterEmitTimeChange(w, end);
  fstWriterClose(w);
}

}  // namespace rnic
