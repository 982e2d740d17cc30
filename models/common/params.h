// Typed block parameters (after gem5's Param): each block's parameter struct lives beside the
// block and lists its own fields, with unit, range and a one-line description, through
// ParamList. The simulator's configuration (sim/config.h) gathers those lists under dotted keys
// and fills them from presets, scenarios and --set; blocks never see how.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rnic {

enum class ParamKind { kInt, kReal, kBool, kString };

struct ParamInfo {
  std::string key;
  ParamKind kind;
  void* ptr;
  std::string unit;
  std::string desc;
  double lo = 0, hi = 0;             // range for numbers
  std::vector<std::string> choices;  // for strings; empty = free text
  std::vector<int64_t> allowed;      // for ints; empty = any in range
};

// What a block's describe() fills: one entry per field, its key prefixed with the block's.
class ParamList {
 public:
  ParamList(std::vector<ParamInfo>& out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}
  void i(const char* key, int64_t& v, const char* unit, double lo, double hi, const char* desc,
         std::vector<int64_t> allowed = {}) {
    out_.push_back(
        {prefix_ + key, ParamKind::kInt, &v, unit, desc, lo, hi, {}, std::move(allowed)});
  }
  void r(const char* key, double& v, const char* unit, double lo, double hi, const char* desc) {
    out_.push_back({prefix_ + key, ParamKind::kReal, &v, unit, desc, lo, hi, {}, {}});
  }
  void b(const char* key, bool& v, const char* desc) {
    out_.push_back({prefix_ + key, ParamKind::kBool, &v, "", desc, 0, 1, {}, {}});
  }
  void s(const char* key, std::string& v, std::vector<std::string> choices, const char* desc) {
    out_.push_back({prefix_ + key, ParamKind::kString, &v, "", desc, 0, 0, std::move(choices), {}});
  }

 private:
  std::vector<ParamInfo>& out_;
  std::string prefix_;
};

}  // namespace rnic
