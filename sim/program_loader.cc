#include "sim/program_loader.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace rnic {

std::string signal_name(int sig) {
  const char* n = sigabbrev_np(sig);
  return n ? fmt::format("SIG{}", n) : fmt::format("signal {}", sig);
}

LoadedProgram load_program(const std::string& path) {
  // dlopen shares one copy per file: a copy of its own per process gives each its globals. The
  // copy is an anonymous memory file, so that nothing is left behind when a static constructor
  // ends the process while it loads; it stays open (its /proc/self/fd name is what dlopen knows
  // the copy by, and a name of a closed one could come back for another copy).
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw std::runtime_error(fmt::format("program {}: {}", path, strerror(errno)));
  const int fd = memfd_create("rnicsim-program", MFD_CLOEXEC);
  if (fd < 0) {
    const std::string why = strerror(errno);
    ::close(in);
    throw std::runtime_error(fmt::format("program {}: cannot make a copy: {}", path, why));
  }
  std::vector<char> buf(1 << 16);  // (not on the stack: this runs on a program's thread)
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    for (ssize_t done = 0; n > 0 && done < n;) {
      const ssize_t w = ::write(fd, buf.data() + done, size_t(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        n = -1;  // (errno says why)
      else
        done += w;
    }
    if (n == 0) break;
    if (n < 0) {
      const std::string why = strerror(errno);
      ::close(in);
      ::close(fd);
      throw std::runtime_error(fmt::format("program {}: {}", path, why));
    }
  }
  ::close(in);
  const std::string copy = fmt::format("/proc/self/fd/{}", fd);
  LoadedProgram p;
  p.handle = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p.handle) {
    // The loader names the private copy: the user's file is the one to name.
    std::string why = dlerror();
    ::close(fd);
    for (size_t at; (at = why.find(copy)) != std::string::npos;) why.replace(at, copy.size(), path);
    if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
    throw std::runtime_error(fmt::format("program {}: {}", path, why));
  }
  void* sym = dlsym(p.handle, "rnic_main");
  if (!sym)
    throw std::runtime_error(
        fmt::format("program {}: no rnic_main (define it with RNIC_PROGRAM {{ ... }})", path));
  // A data object of that name is no entry point (calling it would jump into data).
  Dl_info info{};
  ElfW(Sym)* es = nullptr;
  if (dladdr1(sym, &info, reinterpret_cast<void**>(&es), RTLD_DL_SYMENT) && es &&
      ELF64_ST_TYPE(es->st_info) != STT_FUNC && ELF64_ST_TYPE(es->st_info) != STT_GNU_IFUNC)
    throw std::runtime_error(fmt::format(
        "program {}: rnic_main is not a function (define it with RNIC_PROGRAM {{ ... }})", path));
  p.main = reinterpret_cast<int (*)(int, char**)>(sym);
  return p;
}

std::string check_program(const std::string& path, bool* ends_at_load) {
  *ends_at_load = false;
  int fds[2];
  if (pipe(fds) != 0) return fmt::format("program {}: cannot check it: {}", path, strerror(errno));
  fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return fmt::format("program {}: cannot check it: {}", path, strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    // What the program prints while it loads is not the checker's to show.
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    // "ok", or the reason: a static constructor's exit(0) says neither.
    std::string msg = "ok";
    try {
      load_program(path);
    } catch (const std::exception& e) {
      msg = e.what();
    }
    if (::write(fds[1], msg.data(), msg.size()) < 0) {
    }
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    msg.append(buf, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && msg == "ok") return "";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !msg.empty()) return msg;
  *ends_at_load = true;
  return WIFSIGNALED(status)
             ? fmt::format(
                   "program {}: loading it ends its process with {} (its static "
                   "constructors)",
                   path, signal_name(WTERMSIG(status)))
             : fmt::format(
                   "program {}: loading it ends its process with exit {} (its static "
                   "constructors)",
                   path, WEXITSTATUS(status));
}

}  // namespace rnic
