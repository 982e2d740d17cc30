// Numbers as a user writes them in scenarios, --set and options: one reading everywhere.
// Integers are decimal (a leading zero is refused, not read as octal: 0250 is not 168) or
// hexadecimal with 0x; they must fit 64 bits. Reals are finite decimals (nan and inf are
// refused). Each returns the reason a text is not one, or "" when it is.
#pragma once

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace rnic {

// Whether s is a number followed by a unit ("0.3us", "10 Gb/s", "5%"): said as such, not as a
// malformed number.
inline bool has_unit_suffix(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end == '\0') return false;
  while (*end == ' ') ++end;
  if (*end == '\0') return false;
  for (const char* c = end; *c; ++c)
    if (!std::isalpha(static_cast<unsigned char>(*c)) && *c != '/' && *c != '%') return false;
  return true;
}

inline std::string unit_reason(const std::string& s) {
  return "'" + s + "' carries a unit: give a plain number in the key's unit";
}

inline std::string parse_int(const std::string& s, int64_t* out) {
  if (s.empty()) return "'' is not an integer";
  if (has_unit_suffix(s)) return unit_reason(s);
  size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  const bool hex = s.size() > i + 1 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
  if (!hex && s.size() > i + 1 && s[i] == '0')
    return "'" + s + "' has a leading zero (octal is not read: write it in decimal or 0x hex)";
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, hex ? 16 : 10);
  if (end == s.c_str() || *end != '\0') return "'" + s + "' is not an integer";
  if (errno == ERANGE) return "'" + s + "' does not fit 64 bits";
  *out = v;
  return "";
}

inline std::string parse_real(const std::string& s, double* out) {
  if (s.empty()) return "'' is not a number";
  if (has_unit_suffix(s)) return unit_reason(s);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return "'" + s + "' is not a number";
  if (!std::isfinite(v) || errno == ERANGE) return "'" + s + "' is not a finite number";
  *out = v;
  return "";
}

}  // namespace rnic
