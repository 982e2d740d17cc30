#include "sim/traffic/program.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <systemc>
#include <unordered_map>

#include "sim/program_loader.h"

namespace rnic::traffic {

namespace {

// The guard of one running program: where a fault signal or an exit call returns to.
struct Frame {
  sigjmp_buf jb;
  int exit_code = 0;
  bool loading = false;  // in dlopen: its static constructors
};
constexpr int kExitJump = 1000;  // siglongjmp's value for an exit call (signals are below 65)

// Program threads now inside the guard, by SystemC process. g_guarded keeps the signal handler
// and the exit interposers from asking SystemC anything while no program runs (the exit of
// rnicsim itself, a crash of its own).
std::atomic<int> g_guarded{0};
// The OS thread that runs the simulation (and so every program): a call from another one (the
// spin guard's _exit) is never a program's.
pthread_t g_sim_thread{};
std::unordered_map<const sc_core::sc_process_b*, Frame*>& frames() {
  static std::unordered_map<const sc_core::sc_process_b*, Frame*> m;
  return m;
}

Frame* current_frame() {
  if (g_guarded.load(std::memory_order_relaxed) == 0) return nullptr;
  if (!pthread_equal(pthread_self(), g_sim_thread)) return nullptr;
  const sc_core::sc_process_b* p = sc_core::sc_get_current_process_b();
  if (!p) return nullptr;
  auto it = frames().find(p);
  return it == frames().end() ? nullptr : it->second;
}

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void on_fault(int sig, siginfo_t*, void*) {
  if (Frame* f = current_frame()) siglongjmp(f->jb, sig);
  // Not a program's: rnicsim's own fault, which the default action reports as ever.
  struct sigaction d {};
  d.sa_handler = SIG_DFL;
  sigemptyset(&d.sa_mask);
  sigaction(sig, &d, nullptr);
  raise(sig);
}

void install_handlers() {
  g_sim_thread = pthread_self();
  static bool done = false;
  if (done) return;
  done = true;
  // Its own stack: a program that overflows its thread's stack faults on it.
  static char alt[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int s : kFaultSignals) sigaction(s, &sa, nullptr);
}

template <class Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

[[noreturn]] void exit_program(Frame* f, int status) {
  f->exit_code = status;
  siglongjmp(f->jb, kExitJump);
}

}  // namespace

}  // namespace rnic::traffic

namespace rnic::traffic {
namespace {
// On a program's thread: that program ends with `status`; anywhere else: libc's `name`.
[[noreturn]] void end_program_or(const char* name, int status) {
  if (Frame* f = current_frame()) exit_program(f, status);
  real<void (*)(int)>(name)(status);
  __builtin_unreachable();
}
}  // namespace
}  // namespace rnic::traffic

// The exit calls a program makes resolve here (rnicsim exports its symbols and comes first in
// the lookup order): on a program's thread they end that program; anywhere else they are libc's.
extern "C" [[noreturn]] void exit(int status) noexcept {
  rnic::traffic::end_program_or("exit", status);
}
extern "C" [[noreturn]] void _exit(int status) noexcept {
  rnic::traffic::end_program_or("_exit", status);
}
extern "C" [[noreturn]] void _Exit(int status) noexcept {
  rnic::traffic::end_program_or("_Exit", status);
}

namespace rnic::traffic {

std::string ProgramEnd::describe() const {
  std::string s;
  switch (kind) {
    case kNotRun:
      return "did not run";
    case kReturned:
      return fmt::format("exit {}", code);
    case kExited:
      s = fmt::format("exit({})", code);
      break;
    case kSignal:
      s = fmt::format("killed by {} (signal {})", rnic::signal_name(code), code);
      if (!what.empty()) s += ": " + what;
      break;
    case kException:
      s = fmt::format("threw: {}", what);
      break;
  }
  return at_load ? s + " while loading (a static constructor)" : s;
}

ProgramEnd run_program(const std::string& path, const std::vector<std::string>& args) {
  install_handlers();
  std::vector<std::string> strs;
  strs.push_back(path);
  strs.insert(strs.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strs) argv.push_back(s.data());
  argv.push_back(nullptr);

  // Kept in memory (its address is registered): what the jump leaves in it is current.
  Frame frame;
  const sc_core::sc_process_b* const self = sc_core::sc_get_current_process_b();
  struct Guard {
    const sc_core::sc_process_b* self;
    Frame* f;
    Guard(const sc_core::sc_process_b* s, Frame* fr) : self(s), f(fr) {
      frames()[self] = f;
      ++g_guarded;
    }
    ~Guard() {
      frames().erase(self);
      --g_guarded;
    }
  } guard(self, &frame);
  ProgramEnd end;
  const int jumped = sigsetjmp(frame.jb, 1);
  if (jumped != 0) {
    end.kind = jumped == kExitJump ? ProgramEnd::kExited : ProgramEnd::kSignal;
    end.code = jumped == kExitJump ? frame.exit_code : jumped;
    end.at_load = frame.loading;
    return end;
  }
  try {
    frame.loading = true;
    const rnic::LoadedProgram p = rnic::load_program(path);
    frame.loading = false;
    end.code = p.main(int(strs.size()), argv.data());
    end.kind = ProgramEnd::kReturned;
  } catch (const sc_core::sc_unwind_exception&) {
    throw;  // the kernel killing the thread: it must pass
  } catch (const std::exception& e) {
    end.kind = ProgramEnd::kException;
    end.what = e.what();
  } catch (...) {
    end.kind = ProgramEnd::kException;
    end.what = "an exception that is not a std::exception";
  }
  return end;
}

}  // namespace rnic::traffic
