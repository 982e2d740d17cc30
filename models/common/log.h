// fmt-based logging with levels. Messages carry the simulated time when SystemC is running.
#pragma once

#include <fmt/format.h>

#include <string>

namespace rnic::log {

enum class Level { kError = 0, kWarn, kInfo, kDebug, kTrace };

void set_level(Level l);
Level level();
bool parse_level(const std::string& s, Level* out);
void emit(Level l, const std::string& msg);

template <class... Args>
void at(Level l, fmt::format_string<Args...> f, Args&&... args) {
  if (l <= level()) emit(l, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kError, f, std::forward<Args>(a)...);
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kWarn, f, std::forward<Args>(a)...);
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kInfo, f, std::forward<Args>(a)...);
}
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kDebug, f, std::forward<Args>(a)...);
}

}  // namespace rnic::log
