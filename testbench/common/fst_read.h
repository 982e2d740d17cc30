// Reads an FST file's hierarchy back (fstapi, shipped with Verilator): every variable as
// "scope.scope.name" with its width and, in the file's order, its handle, and the file's time
// span. For tests of waveform output.
#pragma once

#include <gtkwave/fstapi.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rnic::tb {

struct FstContents {
  bool opened = false;
  std::map<std::string, uint32_t> vars;                  // name -> bits
  std::vector<std::pair<std::string, fstHandle>> order;  // (name, handle), as declared
  uint64_t start = 0, end = 0;                           // in the file's time unit
  uint64_t change_sections = 0;
};

inline FstContents read_fst(const std::string& path) {
  FstContents c;
  void* r = fstReaderOpen(path.c_str());
  if (!r) return c;
  c.opened = true;
  std::vector<std::string> scope;
  while (fstHier* h = fstReaderIterateHier(r)) {
    if (h->htyp == FST_HT_SCOPE) scope.push_back(h->u.scope.name);
    if (h->htyp == FST_HT_UPSCOPE) scope.pop_back();
    if (h->htyp == FST_HT_VAR) {
      std::string full;
      for (const auto& s : scope) full += s + ".";
      const std::string name = h->u.var.name;  // "m_crc [31:0]": the range follows a space
      c.vars[full + name.substr(0, name.find(' '))] = h->u.var.length;
      c.order.push_back({full + name.substr(0, name.find(' ')), h->u.var.handle});
    }
  }
  c.start = fstReaderGetStartTime(r);
  c.end = fstReaderGetEndTime(r);
  c.change_sections = fstReaderGetValueChangeSectionCount(r);
  fstReaderClose(r);
  return c;
}

}  // namespace rnic::tb
