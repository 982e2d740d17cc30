#include "sim/traffic/program.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace rnic::traffic {

LoadedProgram load_program(const std::string& path) {
  namespace fs = std::filesystem;
  // dlopen shares one copy per file: a copy of its own per process gives each its globals.
  std::string tmp = (fs::temp_directory_path() / "rnicsim-program-XXXXXX.so").string();
  const int fd = mkstemps(tmp.data(), 3);
  if (fd < 0) throw std::runtime_error(fmt::format("program {}: cannot make a copy", path));
  close(fd);
  std::error_code ec;
  fs::copy_file(path, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    fs::remove(tmp);
    throw std::runtime_error(fmt::format("program {}: {}", path, ec.message()));
  }
  LoadedProgram p;
  p.handle = dlopen(tmp.c_str(), RTLD_NOW | RTLD_LOCAL);
  fs::remove(tmp);  // the loaded image stays mapped
  if (!p.handle) throw std::runtime_error(fmt::format("program {}: {}", path, dlerror()));
  p.main = reinterpret_cast<int (*)(int, char**)>(dlsym(p.handle, "rnic_main"));
  if (!p.main)
    throw std::runtime_error(
        fmt::format("program {}: no rnic_main (define it with RNIC_PROGRAM {{ ... }})", path));
  return p;
}

int run_program(const LoadedProgram& p, const std::string& path,
                const std::vector<std::string>& args) {
  std::vector<std::string> strs;
  strs.push_back(path);
  strs.insert(strs.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strs) argv.push_back(s.data());
  argv.push_back(nullptr);
  return p.main(int(strs.size()), argv.data());
}

}  // namespace rnic::traffic
