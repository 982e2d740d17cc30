// The preload library of an executable run as a simulated process (LD_PRELOAD; sim/exec/
// exec_process.h starts it): it interposes over rdma-core's libibverbs, which the program still
// loads, so every verb the program calls is sent to the simulator (sim/exec/exec_abi.h) and
// answered by the simulated card of its host, in simulated time. Exported verbs are defined
// here (the dynamic linker finds them before libibverbs' own); rdma-core's inline verbs reach
// the same calls through the context's operations, filled here as a provider fills them.
//
// Memory: a registration makes the pages it covers shared with the simulator (each run of
// pages moves, contents kept, onto a memfd mapped at the same address; the simulator maps the
// same memfd), so the card reads and writes the process's own memory, not a copy. The move runs
// on a stack of the library's own, so a buffer on the program's stack moves safely too.
//
// Spinning: a loop that polls registered memory without a call (perftest's write_lat) is
// caught exactly, by the program's own accesses: after a tick of the process's CPU time
// (kTickUs) with no call, the shared pages become inaccessible; three faults in a row by the
// same instruction at the same address (each access stepped over, the page closed again after
// it) are a spin, and the library asks the simulator to wait until those bytes change
// (Op::kSpin). Any other fault opens the pages again: the process was computing, not waiting,
// and goes on at full speed. Once a spin was seen, the pages also close as each call returns. The
// decision depends only on what the program does, never on when the tick came, so runs stay
// deterministic (docs/verbs.md, "Spinning on memory").
//
// Without RNICSIM_EXEC_FD in its environment the library does nothing: the program's verbs go to
// libibverbs as usual.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/host/verbs/extended_ops.h"
#include "models/host/verbs/unsupported_ops.h"
#include "sim/exec/exec_abi.h"

using rnic::exec::Header;
using rnic::exec::Msg;
using rnic::exec::Op;

namespace {

int g_fd = -1;

// The descriptors of the process's completion and rdma_cm event channels (placeholders from
// the kernel, never readable there), and what a poll names each by (exec::kPollCompChannel or
// kPollCmChannel over its id): a poll or epoll wait on them is the simulator's.
std::map<int, int64_t>& vchans() {
  static std::map<int, int64_t> m;
  return m;
}
void forget(int fd);  // (below: the descriptor no longer names what it named)
// Whether a channel's descriptor was made non-blocking (O_NONBLOCK): its get answers EAGAIN.
bool nonblocking_fd(int fd) { return fd >= 0 && (syscall(SYS_fcntl, fd, F_GETFL) & O_NONBLOCK); }

// The process's clock: simulated time at the last answer (to any of its threads: answers come in
// time order), plus what this thread's clock reads since its own last call added (each
// cost.clock_read_ns), which its next call hands to the simulator to spend. A thread that has
// not called yet reads the process's time, not time 0.
std::atomic<uint64_t> g_now_ns{0};
thread_local uint64_t g_local_ns = 0;
int64_t g_clock_read_ns = 20;
int g_vpid = 0;
uint32_t g_ip = 0;
char g_host[65] = "";            // the host's name (gethostname, uname)
std::array<uint8_t, 6> g_mac{};  // its card's MAC (the interface's hardware address)
int64_t g_cpu_mhz = 3000;
constexpr uint64_t kEpochS = 1767225600;          // 2026-01-01 00:00:00 UTC: simulated time 0
constexpr uint64_t kBootNs = 100'000'000'000ull;  // CLOCK_MONOTONIC at simulated time 0

// The real-time timer (alarm, setitimer ITIMER_REAL) in simulated time: due at g_alarm_ns (0:
// none), then every g_alarm_every_ns (0: once). SIGALRM is raised when the process's clock is
// found at or past it: a call's answer, a clock read, or a sleep that reaches it (which ends
// there, as a signal ends a sleep).
uint64_t g_alarm_ns = 0, g_alarm_every_ns = 0;
uint64_t g_alarm_rings = 0;  // how many times SIGALRM was raised
void alarm_due(uint64_t now) {
  if (!g_alarm_ns || now < g_alarm_ns) return;
  if (g_alarm_every_ns)
    while (g_alarm_ns <= now) g_alarm_ns += g_alarm_every_ns;
  else
    g_alarm_ns = 0;
  ++g_alarm_rings;
  raise(SIGALRM);
}

// Whether the pending timer's SIGALRM would end a wait of this thread, as a signal ends one in
// the kernel: a timer is pending, the signal is neither blocked (the thread's mask, which
// ppoll's and its kind's replace for their wait) nor ignored. (Its default action ends the
// process, which ends the wait too.)
bool alarm_ends_waits(const sigset_t* mask = nullptr) {
  if (!g_alarm_ns) return false;
  sigset_t cur;
  struct sigaction sa;
  if (pthread_sigmask(SIG_BLOCK, nullptr, &cur) || sigaction(SIGALRM, nullptr, &sa)) return true;
  return !sigismember(mask ? mask : &cur, SIGALRM) && sa.sa_handler != SIG_IGN;
}

// A blocking socket call's limit (exec's kSockAccept): when the timer's signal would end its wait
// (ns of simulated time; -1: none); and whether its handler restarts the call (SA_RESTART, as
// signal() installs it) rather than ending it with EINTR.
int64_t signal_limit() { return alarm_ends_waits() ? int64_t(g_alarm_ns) : -1; }
bool signal_restarts() {
  struct sigaction sa;
  return sigaction(SIGALRM, nullptr, &sa) == 0 && (sa.sa_flags & SA_RESTART);
}

// A wait's signal mask (ppoll, pselect, epoll_pwait and epoll_pwait2's), in place for its scope.
struct WaitMask {
  explicit WaitMask(const sigset_t* mask) : set(mask != nullptr) {
    if (set) pthread_sigmask(SIG_SETMASK, mask, &old);
  }
  ~WaitMask() {
    if (set) pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  bool set;
  sigset_t old;
};

uint64_t clock_now() {
  g_local_ns += uint64_t(g_clock_read_ns);
  const uint64_t now = g_now_ns + g_local_ns;
  alarm_due(now);
  return now;
}

[[noreturn]] void lost() {
  static const char m[] = "rnicsim: the simulator closed the connection; ending the process\n";
  (void)!syscall(SYS_write, 2, m, sizeof m - 1);
  _exit(111);
}

// libc's recv (the process's own recv is interposed below, for its sockets).
using RecvFn = ssize_t (*)(int, void*, size_t, int);
RecvFn next_recv() {
  static const auto f = reinterpret_cast<RecvFn>(dlsym(RTLD_NEXT, "recv"));
  return f;
}

// A thread's connection to the simulator: the main thread's is kFd; another thread makes its own
// at its first call and hands the simulator its end through kCtlFd (with its thread id), so
// threads call side by side, each served by a simulated thread of its own.
thread_local int t_fd = -1;
volatile sig_atomic_t g_threads = 0;  // another thread has called: spins are not looked for

int thread_fd() {
  if (t_fd >= 0) return t_fd;
  if (syscall(SYS_gettid) == syscall(SYS_getpid)) return t_fd = g_fd;  // getpid is virtual here
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) lost();
  static pthread_mutex_t ctl = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&ctl);
  const int32_t tid = int32_t(syscall(SYS_gettid));
  iovec iov{const_cast<int32_t*>(&tid), sizeof tid};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  char cbuf[CMSG_SPACE(sizeof(int))] = {};
  mh.msg_control = cbuf;
  mh.msg_controllen = sizeof cbuf;
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
  g_threads = 1;
  while (syscall(SYS_sendmsg, rnic::exec::kCtlFd, &mh, MSG_NOSIGNAL) < 0)
    if (errno != EINTR) lost();
  pthread_mutex_unlock(&ctl);
  syscall(SYS_close, sv[1]);
  return t_fd = sv[0];
}

// One call: the request (with descriptors beside it), then its answer. Sets errno from the
// answer; returns it with the header's ret in *ret.
void watch(bool on);
volatile sig_atomic_t g_watching = 0;  // the shared pages are closed (a spin is looked for)
volatile sig_atomic_t g_in_call = 0;
// A spin was seen: from then on the pages close as each call returns (the spin that follows a
// call is caught within kSpinFaults faults, not a tick later).
volatile sig_atomic_t g_spun = 0;
volatile uint64_t g_calls = 0;
thread_local bool t_in_call = false;  // this thread waits for an answer (a handler must not call)
// This thread's calls are looks of a wait that has no end of its own on its kernel's descriptors
// (exec::kLookAgain), or for a signal (with exec::kLookForSignal): set by a Looking for its
// scope (the request's flags).
thread_local uint32_t t_look = 0;
struct Looking {
  explicit Looking(bool on, uint32_t flags = rnic::exec::kLookAgain) : was(t_look) {
    t_look = on ? flags : 0;
  }
  ~Looking() { t_look = was; }
  uint32_t was;
};

Msg call(Op op, Msg req, int* ret, const std::vector<int>& fds = {}) {
  const int fd = thread_fd();
  struct Watch {  // the spin watch: one thread's (a second thread turns it off)
    Watch() {
      t_in_call = true;
      g_in_call = 1;
      ++g_calls;
      if (g_watching) watch(false);
    }
    ~Watch() {
      if (g_spun && !g_threads) watch(true);
      g_in_call = 0;
      t_in_call = false;
    }
  } w;
  Header h;
  h.op = uint32_t(op);
  h.flags = t_look;
  h.spent_ns = g_local_ns;
  std::vector<uint8_t> out(sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  out.insert(out.end(), req.bytes().begin(), req.bytes().end());
  iovec iov{out.data(), out.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  std::vector<char> cbuf;
  if (!fds.empty()) {
    cbuf.assign(CMSG_SPACE(sizeof(int) * fds.size()), 0);
    mh.msg_control = cbuf.data();
    mh.msg_controllen = cbuf.size();
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  while (syscall(SYS_sendmsg, fd, &mh, MSG_NOSIGNAL) < 0)
    if (errno != EINTR) lost();
  static thread_local uint8_t* buf = nullptr;  // not zeroed: recv fills what it returns
  if (!buf) buf = new uint8_t[rnic::exec::kMaxMsg];
  ssize_t n;
  while ((n = next_recv()(fd, buf, rnic::exec::kMaxMsg, 0)) < 0)
    if (errno != EINTR) lost();
  if (n < ssize_t(sizeof(Header))) lost();
  Header a;
  std::memcpy(&a, buf, sizeof a);
  std::vector<uint8_t> in(buf, buf + n);
  g_now_ns = a.now_ns;
  g_local_ns = 0;
  in.erase(in.begin(), in.begin() + sizeof a);
  in.resize(size_t(n) - sizeof a);
  *ret = a.ret;
  static const bool trace = std::getenv("RNICSIM_EXEC_TRACE") != nullptr;
  if (trace) {
    char line[128];
    const int n =
        std::snprintf(line, sizeof line, "rnicsim-exec: op %u -> %d (errno %d) at %llu ns\n", h.op,
                      a.ret, a.err, static_cast<unsigned long long>(a.now_ns));
    (void)!syscall(SYS_write, 2, line, size_t(n));
  }
  alarm_due(g_now_ns);
  errno = a.err;
  return Msg(std::move(in));
}

// Before a look at what the simulator cannot see (the kernel's descriptors, a condition variable's
// signals, a semaphore), in a process of several threads: a call that takes no simulated time and
// is answered once every thread waits, so that what another thread does at this simulated time
// is done before the look, whatever order the machine ran them in.
volatile sig_atomic_t g_spawned = 0;  // the process started a thread (pthread_create)
void settle() {
  if (!g_threads && !g_spawned) return;
  int rc = 0;
  call(Op::kSleep, Msg().put(uint64_t(0)), &rc);
}

// Waits the simulator ends at once (Op::kWake): a timed wait on a condition variable or a
// semaphore, and pause's or sigsuspend's, sleep keyed by what ends them (the variable's or the
// semaphore's address, exec::kSignalKey). Each key counts its wakes (signals and broadcasts,
// posts, signals sent within the process) and the threads waiting on it; a wake with a waiter
// tells the simulator, which ends their sleeps at the waker's simulated time. Nothing is told
// from a signal handler that interrupted this thread's call or its hold of the count (the
// waiter then sees the wake at its next look, as any wake the library does not see).
struct KeyWaits {
  uint64_t wakes = 0;
  int waiters = 0;
};
pthread_mutex_t g_key_lock = PTHREAD_MUTEX_INITIALIZER;
thread_local bool t_in_key = false;
std::atomic<int> g_key_waiters{0};  // threads in a keyed wait (an unlock looks only then)
std::map<uint64_t, KeyWaits>& key_waits() {
  static std::map<uint64_t, KeyWaits> m;
  return m;
}
// libpthread's unlock (the program's is interposed below): found without a static's guard,
// which may itself lock and unlock.
using MutexUnlock = int (*)(pthread_mutex_t*);
std::atomic<MutexUnlock> g_real_unlock{nullptr};
MutexUnlock real_unlock() {
  MutexUnlock f = g_real_unlock.load(std::memory_order_relaxed);
  if (!f) {
    f = reinterpret_cast<MutexUnlock>(dlsym(RTLD_NEXT, "pthread_mutex_unlock"));
    g_real_unlock.store(f, std::memory_order_relaxed);
  }
  return f;
}
struct KeyLock {
  KeyLock() {
    pthread_mutex_lock(&g_key_lock);
    t_in_key = true;
  }
  ~KeyLock() {
    t_in_key = false;
    real_unlock()(&g_key_lock);
  }
};
uint64_t wakes_of(uint64_t key) {
  const KeyLock l;
  return key_waits()[key].wakes;
}
void wake(uint64_t key) {
  if (t_in_key || t_in_call) return;
  uint64_t n;
  {
    const KeyLock l;
    const auto k = key_waits().find(key);
    if (k == key_waits().end() || k->second.waiters == 0) return;  // (a waiter looks from now)
    n = ++k->second.wakes;
  }
  int rc = 0;
  call(Op::kWake, Msg().put(key).put(n), &rc);
}
struct KeyWaiter {  // for its scope, a thread waits on `key`
  explicit KeyWaiter(uint64_t k) : key(k) {
    const KeyLock l;
    ++key_waits()[key].waiters;
    ++g_key_waiters;
  }
  ~KeyWaiter() {
    const KeyLock l;
    --key_waits()[key].waiters;
    --g_key_waiters;
  }
  uint64_t key;
};
// The threads in pause or sigsuspend (by their kernel's thread id), with the mask each waits
// under. Between their looks they block every signal, so a signal sent to the process would go
// to some other thread that does not block it, where natively the waiting thread takes it: it
// goes to one of them that lets it in (to_waiting_thread).
std::map<pid_t, sigset_t>& signal_waiters() {
  static std::map<pid_t, sigset_t> m;
  return m;
}
pid_t real_pid() { return pid_t(syscall(SYS_getpid)); }
// The thread that takes `sig`, sent to the process, as the kernel would choose it: the main
// thread if it waits and lets it in; if not, another waiting thread that lets it in, unless the
// main thread runs (its own mask decides then); 0: the kernel's choice.
pid_t to_waiting_thread(int sig) {
  if (sig == 0 || t_in_key) return 0;
  const KeyLock l;
  const std::map<pid_t, sigset_t>& w = signal_waiters();
  const pid_t main = real_pid();
  const auto m = w.find(main);
  if (m == w.end()) return 0;
  if (sigismember(&m->second, sig) != 1) return main;
  for (const auto& [tid, mask] : w)
    if (sigismember(&mask, sig) != 1) return tid;
  return 0;
}

// A thread wrote to or closed a descriptor of its kernel's: if it is one a poll may watch (a
// pipe, a socket, an eventfd or another of the kernel's anonymous files) and a thread of the
// process looks at such descriptors, those looks look again now.
void kernel_fd_touched(int fd) {
  if (g_fd < 0 || t_in_call || t_in_key) return;
  {
    const KeyLock l;
    if (key_waits()[rnic::exec::kKernelFdKey].waiters == 0) return;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  const mode_t type = st.st_mode & S_IFMT;
  if (type == S_IFIFO || type == S_IFSOCK || type == 0) wake(rnic::exec::kKernelFdKey);
}

template <class T>
uint64_t key_of(const T* p) {
  return uint64_t(reinterpret_cast<uintptr_t>(p));
}

// --- Spinning on registered memory ---

// The runs of pages shared with the simulator (share() adds them), with their protection.
struct Run {
  uintptr_t start;
  size_t len;
  int prot;
};
constexpr size_t kMaxRuns = 1024;  // runs past it are not watched (a spin on them is not seen)
Run g_runs[kMaxRuns];
volatile size_t g_nruns = 0;
constexpr long kTickUs = 1000;  // of the process's CPU time (ITIMER_PROF)
constexpr int kSpinFaults = 3;  // faults in a row at one instruction and address: a spin
uintptr_t g_pg = 4096;
uint64_t g_tick_calls = ~0ull;  // g_calls at the last tick
uintptr_t g_key_ip = 0, g_key_addr = 0;
int g_key_n = 0;
uintptr_t g_step_page = 0;  // the page opened to step over one access (0: none)

const Run* run_of(uintptr_t a) {
  for (size_t i = 0; i < g_nruns; ++i)
    if (g_runs[i].start <= a && a < g_runs[i].start + g_runs[i].len) return &g_runs[i];
  return nullptr;
}

// Closes (on) or opens every shared run. Async-signal-safe.
void watch(bool on) {
  for (size_t i = 0; i < g_nruns; ++i)
    mprotect(reinterpret_cast<void*>(g_runs[i].start), g_runs[i].len,
             on ? PROT_NONE : g_runs[i].prot);
  g_watching = on;
  g_key_n = 0;
  g_step_page = 0;
}

// A tick of the process's CPU time: with no call since the last one, look for a spin.
void on_tick(int, siginfo_t*, void*) {
  if (g_in_call || g_watching || g_threads) return;
  if (g_calls == g_tick_calls && g_nruns > 0) watch(true);
  g_tick_calls = g_calls;
}

// An access to a closed shared page at instruction ip and address a.
void on_watched_fault(ucontext_t* uc, uintptr_t ip, uintptr_t a) {
  if (g_key_n > 0 && (ip != g_key_ip || a != g_key_addr)) {
    watch(false);  // computing, not waiting: full speed again
    return;
  }
  g_key_ip = ip;
  g_key_addr = a;
  if (++g_key_n >= kSpinFaults) {
    // A spin: wait in simulated time until the bytes it reads change. The access runs again on
    // return and sees them. (A spin loop holds no lock of libc's: calling from here is safe.)
    watch(false);
    g_spun = 1;
    const size_t n = std::min<size_t>(8, g_pg - (a & (g_pg - 1)));
    Msg m;
    m.put(uint64_t(a)).put(uint32_t(n));
    for (size_t i = 0; i < n; ++i) m.put(uint8_t(reinterpret_cast<const volatile uint8_t*>(a)[i]));
    const int saved = errno;
    int rc = 0;
    call(Op::kSpin, std::move(m), &rc);
    errno = saved;
    return;
  }
  // Step over this one access (the trap flag), then close the page again (on_step).
  const Run* r = run_of(a);
  g_step_page = a & ~(g_pg - 1);
  mprotect(reinterpret_cast<void*>(g_step_page), g_pg, r ? r->prot : PROT_READ | PROT_WRITE);
  uc->uc_mcontext.gregs[REG_EFL] |= 0x100;
}

void on_step(int sig, siginfo_t*, void* uctx) {
  auto* uc = static_cast<ucontext_t*>(uctx);
  if (!(uc->uc_mcontext.gregs[REG_EFL] & 0x100) && !g_step_page) {
    // Not a step of ours: as the program would have had it.
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  uc->uc_mcontext.gregs[REG_EFL] &= ~greg_t(0x100);
  if (g_step_page && g_watching) mprotect(reinterpret_cast<void*>(g_step_page), g_pg, PROT_NONE);
  g_step_page = 0;
}

// The tick, the step trap and a stack of their own (the program's stack may be a closed page).
void start_spin_watch() {
  g_pg = uintptr_t(sysconf(_SC_PAGESIZE));
  static char alt[64 << 10];
  stack_t ss{};
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  sigaltstack(&ss, nullptr);
  using Sigaction = int (*)(int, const struct sigaction*, struct sigaction*);
  const auto real = reinterpret_cast<Sigaction>(dlsym(RTLD_NEXT, "sigaction"));
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sa.sa_sigaction = on_tick;
  real(SIGPROF, &sa, nullptr);
  sa.sa_sigaction = on_step;
  real(SIGTRAP, &sa, nullptr);
  itimerval t{};
  t.it_interval.tv_usec = t.it_value.tv_usec = kTickUs;
  setitimer(ITIMER_PROF, &t, nullptr);
}

// The cycle counter: rdtsc and rdtscp trap (PR_TSC_SIGSEGV) and read the process's clock at
// host.cpu_mhz. A SIGSEGV that is not one of them goes to the program's own handler, if it set
// one with sigaction, else ends the process as it would have.
struct sigaction g_program_segv;
bool g_program_segv_set = false;

void on_segv(int sig, siginfo_t* si, void* uctx) {
  auto* uc = static_cast<ucontext_t*>(uctx);
  const auto fault_at = reinterpret_cast<uintptr_t>(si->si_addr);
  if (si->si_code == SEGV_ACCERR && g_watching && run_of(fault_at)) {
    on_watched_fault(uc, uintptr_t(uc->uc_mcontext.gregs[REG_RIP]), fault_at);
    return;
  }
  auto* ip = reinterpret_cast<const uint8_t*>(uc->uc_mcontext.gregs[REG_RIP]);
  const bool rdtsc = ip[0] == 0x0F && ip[1] == 0x31;
  const bool rdtscp = ip[0] == 0x0F && ip[1] == 0x01 && ip[2] == 0xF9;
  if (si->si_code == SI_KERNEL && (rdtsc || rdtscp)) {
    const unsigned __int128 t = (unsigned __int128)clock_now() * uint64_t(g_cpu_mhz) / 1000;
    const uint64_t tsc = uint64_t(t);
    uc->uc_mcontext.gregs[REG_RAX] = greg_t(tsc & 0xFFFFFFFFu);
    uc->uc_mcontext.gregs[REG_RDX] = greg_t(tsc >> 32);
    if (rdtscp) uc->uc_mcontext.gregs[REG_RCX] = 0;  // TSC_AUX: CPU 0
    uc->uc_mcontext.gregs[REG_RIP] += rdtsc ? 2 : 3;
    return;
  }
  if (g_program_segv_set && (g_program_segv.sa_flags & SA_SIGINFO) && g_program_segv.sa_sigaction) {
    g_program_segv.sa_sigaction(sig, si, uctx);
    return;
  }
  if (g_program_segv_set && g_program_segv.sa_handler != SIG_DFL &&
      g_program_segv.sa_handler != SIG_IGN) {
    g_program_segv.sa_handler(sig);
    return;
  }
  // Not ours and no handler of the program's: as without the trap (the fault repeats).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  syscall(SYS_rt_sigaction, SIGSEGV, &dfl, nullptr, 8);
}

void trap_tsc() {
  struct sigaction sa {};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  using Sigaction = int (*)(int, const struct sigaction*, struct sigaction*);
  reinterpret_cast<Sigaction>(dlsym(RTLD_NEXT, "sigaction"))(SIGSEGV, &sa, nullptr);
  prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
}

// The first call, before main: the process's pid, clock cost and address.
struct Init {
  Init() {
    const char* e = std::getenv(rnic::exec::kFdEnv);
    if (!e) return;
    g_fd = std::atoi(e);
    int rc = 0;
    Msg a = call(Op::kHello, Msg(), &rc);
    g_vpid = a.get<int32_t>();
    g_clock_read_ns = a.get<int64_t>();
    g_ip = a.get<uint32_t>();
    g_cpu_mhz = a.get<int64_t>();
    const std::string host = a.get_str();
    std::snprintf(g_host, sizeof g_host, "%s", host.c_str());
    g_mac = a.get<std::array<uint8_t, 6>>();
    start_spin_watch();
    trap_tsc();
  }
} g_init;

// One line naming a verb the card does not do, the first time; EOPNOTSUPP.
int refuse(const char* verb) {
  static std::map<std::string, bool> said;
  if (!said[verb]) {
    said[verb] = true;
    std::fprintf(stderr, "rnicsim: %s: not supported by rnicsim's card (EOPNOTSUPP)\n", verb);
  }
  errno = EOPNOTSUPP;
  return EOPNOTSUPP;
}

// The process's view of the simulator's objects: rdma-core's struct first, the simulator's id.
struct Device {
  ibv_device dev;
  uint64_t guid;
};
struct Ctx {
  verbs_context v;
  uint64_t id;
};
struct Pd {
  ibv_pd pd;
  uint64_t id;
};
struct Mr {
  ibv_mr mr;
  uint64_t id;
};
struct Channel {
  ibv_comp_channel ch;
  uint64_t id;
};
struct Cq {
  union {  // an extended CQ's first fields are ibv_cq's
    ibv_cq_ex ex;
    ibv_cq cq;
  };
  uint64_t id;
};
struct Qp {
  union {  // an extended QP begins with its ibv_qp
    ibv_qp_ex ex;
    ibv_qp qp;
  };
  uint64_t id;
};
struct Srq {
  ibv_srq srq;
  uint64_t id;
};

uint64_t id_of(ibv_context* c) {
  return reinterpret_cast<Ctx*>(reinterpret_cast<uintptr_t>(c) - offsetof(Ctx, v.context))->id;
}
uint64_t id_of(ibv_pd* p) { return p ? reinterpret_cast<Pd*>(p)->id : 0; }
uint64_t id_of(ibv_mr* m) { return m ? reinterpret_cast<Mr*>(m)->id : 0; }
uint64_t id_of(ibv_comp_channel* c) { return c ? reinterpret_cast<Channel*>(c)->id : 0; }
uint64_t id_of(ibv_cq* c) { return c ? reinterpret_cast<Cq*>(c)->id : 0; }
uint64_t id_of(ibv_qp* q) { return q ? reinterpret_cast<Qp*>(q)->id : 0; }
uint64_t id_of(ibv_srq* q) { return q ? reinterpret_cast<Srq*>(q)->id : 0; }

std::map<uint64_t, ibv_cq*>& cqs() {
  static std::map<uint64_t, ibv_cq*> m;
  return m;
}
std::map<uint64_t, ibv_qp*>& qps() {
  static std::map<uint64_t, ibv_qp*> m;
  return m;
}
std::map<uint64_t, ibv_srq*>& srqs() {
  static std::map<uint64_t, ibv_srq*> m;
  return m;
}

// --- Sharing registered memory with the simulator ---

struct Vma {
  uintptr_t start, end;
  int prot;
  bool shared;  // one of ours (a memfd this library made)
};
std::vector<Vma> read_maps() {
  std::vector<Vma> v;
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return v;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long a, b;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &a, &b, perms) != 3) continue;
    v.push_back({a, b,
                 (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
                     (perms[2] == 'x' ? PROT_EXEC : 0),
                 std::strstr(line, "/memfd:rnicsim-mr") != nullptr});
  }
  std::fclose(f);
  return v;
}

// The move of one run onto a memfd, done on the library's own stack (the run may hold the
// program's stack, which must not change between the copy and the remap).
struct Move {
  uintptr_t start;
  size_t len;
  int prot;
  int fd;
  int err;
} g_move;
ucontext_t g_caller, g_mover;

void do_move() {
  Move& m = g_move;
  m.err = 0;
  m.fd = memfd_create("rnicsim-mr", MFD_CLOEXEC);
  if (m.fd < 0 || ftruncate(m.fd, off_t(m.len)) != 0) {
    m.err = errno;
    return;
  }
  void* tmp = mmap(nullptr, m.len, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
  if (tmp == MAP_FAILED) {
    m.err = errno;
    return;
  }
  std::memcpy(tmp, reinterpret_cast<void*>(m.start), m.len);
  if (mmap(reinterpret_cast<void*>(m.start), m.len, m.prot, MAP_SHARED | MAP_FIXED, m.fd, 0) ==
      MAP_FAILED)
    m.err = errno;
  munmap(tmp, m.len);
}

int move_run(uintptr_t start, size_t len, int prot, int* fd) {
  static void* stack = nullptr;
  constexpr size_t kStack = 256 << 10;
  if (!stack) {
    stack = mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) {
      stack = nullptr;
      return ENOMEM;
    }
  }
  g_move = {start, len, prot, -1, 0};
  getcontext(&g_mover);
  g_mover.uc_stack.ss_sp = stack;
  g_mover.uc_stack.ss_size = kStack;
  g_mover.uc_link = &g_caller;
  makecontext(&g_mover, do_move, 0);
  swapcontext(&g_caller, &g_mover);
  *fd = g_move.fd;
  if (g_move.err && g_move.fd >= 0) close(g_move.fd);
  return g_move.err;
}

// Shares the pages of [addr, addr + len) not shared yet (a mapping of the process's that is not
// one of this library's memfds: never shared, or unmapped and mapped again since): each run
// within one mapping moves onto a memfd. Appends (start, length) and the descriptor of each run
// moved. EFAULT for a page that is not mapped or not readable.
int share(uintptr_t addr, size_t len, std::vector<std::pair<uint64_t, uint64_t>>* runs,
          std::vector<int>* fds) {
  const uintptr_t pg = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t first = addr & ~(pg - 1);
  const uintptr_t end = (addr + (len ? len : 1) + pg - 1) & ~(pg - 1);
  const std::vector<Vma> maps = read_maps();
  uintptr_t at = first;
  while (at < end) {
    const Vma* m = nullptr;
    for (const Vma& v : maps)
      if (v.start <= at && at < v.end) m = &v;
    if (!m || !(m->prot & PROT_READ)) return EFAULT;
    const uintptr_t stop = m->end < end ? m->end : end;
    if (!m->shared) {
      int fd = -1;
      if (int e = move_run(at, stop - at, m->prot, &fd)) return e;
      runs->push_back({at, stop - at});
      fds->push_back(fd);
      if (g_nruns < kMaxRuns) {
        g_runs[g_nruns] = {at, stop - at, m->prot};
        g_nruns = g_nruns + 1;
      }
    }
    at = stop;
  }
  return 0;
}

// --- Operations rdma-core's inline verbs call ---

int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  Msg m;
  std::vector<ibv_send_wr*> list;
  for (ibv_send_wr* w = wr; w; w = w->next) list.push_back(w);
  m.put(id_of(qp)).put(uint32_t(list.size()));
  for (ibv_send_wr* w : list) {
    rnic::exec::SendWr s{};
    s.wr_id = w->wr_id;
    s.opcode = uint32_t(w->opcode);
    s.send_flags = w->send_flags;
    s.imm_or_inv = w->invalidate_rkey;
    s.num_sge = uint32_t(w->num_sge < 0 ? 0 : w->num_sge);
    rnic::host::remote_of(*w, &s.remote_addr, &s.rkey);
    if (rnic::host::is_atomic_wr(w->opcode)) {
      s.compare_add = w->wr.atomic.compare_add;
      s.swap = w->wr.atomic.swap;
    }
    uint64_t inl = 0;
    if (w->send_flags & IBV_SEND_INLINE)
      for (uint32_t i = 0; i < s.num_sge; ++i) inl += w->sg_list[i].length;
    if (inl > 4096) {
      if (bad) *bad = w;
      return EINVAL;
    }
    s.inline_bytes = uint32_t(inl);
    m.put(s);
    for (uint32_t i = 0; i < s.num_sge; ++i)
      m.put(rnic::exec::Sge{w->sg_list[i].addr, w->sg_list[i].length, w->sg_list[i].lkey});
    if (inl) {
      std::vector<uint8_t> bytes;
      for (uint32_t i = 0; i < s.num_sge; ++i) {
        const auto* p = reinterpret_cast<const uint8_t*>(w->sg_list[i].addr);
        bytes.insert(bytes.end(), p, p + w->sg_list[i].length);
      }
      m.put_bytes(bytes.data(), bytes.size());
    }
  }
  int rc = 0;
  Msg a = call(Op::kPostSend, std::move(m), &rc);
  const uint32_t at = a.get<uint32_t>();
  if (rc && bad) *bad = at < list.size() ? list[at] : wr;
  return rc;
}

// A list of receive WRs to the queue `id` (a QP's or an SRQ's): op kPostRecv or kPostSrqRecv.
int post_recv_list(Op op, uint64_t id, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Msg m;
  std::vector<ibv_recv_wr*> list;
  for (ibv_recv_wr* w = wr; w; w = w->next) list.push_back(w);
  m.put(id).put(uint32_t(list.size()));
  for (ibv_recv_wr* w : list) {
    const uint32_t n = uint32_t(w->num_sge < 0 ? 0 : w->num_sge);
    m.put(rnic::exec::RecvWr{w->wr_id, n, 0});
    for (uint32_t i = 0; i < n; ++i)
      m.put(rnic::exec::Sge{w->sg_list[i].addr, w->sg_list[i].length, w->sg_list[i].lkey});
  }
  int rc = 0;
  Msg a = call(op, std::move(m), &rc);
  const uint32_t at = a.get<uint32_t>();
  if (rc && bad) *bad = at < list.size() ? list[at] : wr;
  return rc;
}
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return post_recv_list(Op::kPostRecv, id_of(qp), wr, bad);
}
int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return post_recv_list(Op::kPostSrqRecv, id_of(srq), wr, bad);
}

int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  if (n <= 0) return 0;
  if (n > 1024) n = 1024;
  int rc = 0;
  Msg a = call(Op::kPollCq, Msg().put(id_of(cq)).put(int32_t(n)), &rc);
  for (int i = 0; i < rc && i < n; ++i) wc[i] = a.get<ibv_wc>();
  return rc;
}

int req_notify_cq(ibv_cq* cq, int solicited) {
  int rc = 0;
  call(Op::kReqNotifyCq, Msg().put(id_of(cq)).put(int32_t(solicited)), &rc);
  return rc;
}

int query_port_op(ibv_context* c, uint8_t port, ibv_port_attr* attr, size_t len) {
  int rc = 0;
  Msg a = call(Op::kQueryPort, Msg().put(id_of(c)).put(port), &rc);
  if (rc) return rc;
  const ibv_port_attr p = a.get<ibv_port_attr>();
  std::memcpy(attr, &p, len < sizeof p ? len : sizeof p);
  return 0;
}

int query_device_ex_op(ibv_context* c, const ibv_query_device_ex_input* in,
                       ibv_device_attr_ex* attr, size_t len) {
  int rc = 0;
  Msg a = call(Op::kQueryDeviceEx, Msg().put(id_of(c)).put(uint32_t(in ? in->comp_mask : 0)), &rc);
  if (rc) return rc;
  const ibv_device_attr_ex d = a.get<ibv_device_attr_ex>();
  std::memcpy(attr, &d, len < sizeof d ? len : sizeof d);
  return 0;
}

// refuse() as the shared table of unsupported operations calls it.
struct Refuse {
  template <class R>
  static R say(const char* verb, R ret) {
    refuse(verb);
    return ret;
  }
};

void fill_ops(verbs_context& v) {
  rnic::host::fill_unsupported_ops<Refuse>(v);
  // rdma-core's extended CQ and QP, as the verbs library gives them to in-process programs.
  v.create_cq_ex = rnic::host::create_cq_ex<Cq, poll_cq, Refuse>;
  v.create_qp_ex = rnic::host::create_qp_ex<Qp, post_send, Refuse>;
  ibv_context_ops& o = v.context.ops;
  o.post_send = post_send;
  o.post_recv = post_recv;
  o.post_srq_recv = post_srq_recv;
  o.poll_cq = poll_cq;
  o.req_notify_cq = req_notify_cq;
  v.sz = sizeof v;
  v.query_port = query_port_op;
  v.query_device_ex = query_device_ex_op;
  // Prefetch of on-demand MRs is not served to executables yet.
  v.advise_mr = [](ibv_pd*, ibv_advise_mr_advice, uint32_t, ibv_sge*, uint32_t) {
    return refuse("ibv_advise_mr");
  };
}

bool on() { return g_fd >= 0; }

// The next definition of `name` after this library (libibverbs'), for a process run without
// the simulator.
template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

// --- rdma-core's exported verbs ---
extern "C" {

#define PASS(name, ...)                                          \
  do {                                                           \
    if (!on()) return next<decltype(&name)>(#name)(__VA_ARGS__); \
  } while (0)

ibv_device** ibv_get_device_list(int* num) {
  PASS(ibv_get_device_list, num);
  static Device d;
  int rc = 0;
  Msg a = call(Op::kGetDevice, Msg(), &rc);
  if (rc) return nullptr;
  const std::string name = a.get_str(), dev_name = a.get_str();
  d.dev.node_type = ibv_node_type(a.get<int32_t>());
  d.dev.transport_type = ibv_transport_type(a.get<int32_t>());
  d.guid = a.get<uint64_t>();
  std::snprintf(d.dev.name, sizeof d.dev.name, "%s", name.c_str());
  std::snprintf(d.dev.dev_name, sizeof d.dev.dev_name, "%s", dev_name.c_str());
  std::snprintf(d.dev.dev_path, sizeof d.dev.dev_path, "/sys/class/infiniband_verbs/%s",
                dev_name.c_str());
  std::snprintf(d.dev.ibdev_path, sizeof d.dev.ibdev_path, "/sys/class/infiniband/%s",
                name.c_str());
  auto** list = static_cast<ibv_device**>(std::calloc(2, sizeof(ibv_device*)));
  list[0] = &d.dev;
  if (num) *num = 1;
  return list;
}

void ibv_free_device_list(ibv_device** list) {
  if (!on()) return next<decltype(&ibv_free_device_list)>("ibv_free_device_list")(list);
  std::free(list);
}

const char* ibv_get_device_name(ibv_device* dev) {
  PASS(ibv_get_device_name, dev);
  return dev->name;
}

__be64 ibv_get_device_guid(ibv_device* dev) {
  PASS(ibv_get_device_guid, dev);
  return reinterpret_cast<Device*>(dev)->guid;
}

ibv_context* ibv_open_device(ibv_device* dev) {
  PASS(ibv_open_device, dev);
  int rc = 0;
  Msg a = call(Op::kOpenDevice, Msg(), &rc);
  if (rc) return nullptr;
  auto* x = new Ctx{};
  x->id = a.get<uint64_t>();
  fill_ops(x->v);
  ibv_context* c = &x->v.context;
  c->device = dev;
  c->cmd_fd = -1;
  c->async_fd = eventfd(0, EFD_CLOEXEC);  // a descriptor to poll for async events (the simulator's)
  if (c->async_fd >= 0) vchans()[c->async_fd] = rnic::exec::kPollAsync | int64_t(x->id);
  c->num_comp_vectors = 1;
  c->abi_compat = __VERBS_ABI_IS_EXTENDED;
  pthread_mutex_init(&c->mutex, nullptr);
  return c;
}

int ibv_close_device(ibv_context* c) {
  PASS(ibv_close_device, c);
  int rc = 0;
  call(Op::kCloseDevice, Msg().put(id_of(c)), &rc);
  if (rc == 0 && c->async_fd >= 0) {
    forget(c->async_fd);
    syscall(SYS_close, c->async_fd);
  }
  return rc;
}

int ibv_query_device(ibv_context* c, ibv_device_attr* attr) {
  PASS(ibv_query_device, c, attr);
  int rc = 0;
  Msg a = call(Op::kQueryDevice, Msg().put(id_of(c)), &rc);
  if (!rc) *attr = a.get<ibv_device_attr>();
  return rc;
}

int(ibv_query_port)(ibv_context* c, uint8_t port, _compat_ibv_port_attr* attr) {
  if (!on())
    return reinterpret_cast<int (*)(ibv_context*, uint8_t, _compat_ibv_port_attr*)>(
        dlsym(RTLD_NEXT, "ibv_query_port"))(c, port, attr);
  return query_port_op(c, port, reinterpret_cast<ibv_port_attr*>(attr),
                       offsetof(ibv_port_attr, flags));
}

int ibv_query_gid(ibv_context* c, uint8_t port, int index, ibv_gid* gid) {
  PASS(ibv_query_gid, c, port, index, gid);
  int rc = 0;
  Msg a = call(Op::kQueryGid, Msg().put(id_of(c)).put(port).put(int32_t(index)), &rc);
  if (!rc) *gid = a.get<ibv_gid>();
  return rc ? -1 : 0;
}

// libibverbs' private ibv_query_gid_type (ibv_devinfo calls it); its enum ibv_gid_type_sysfs is
// an int whose 0 is "IB/RoCE v1", what an iWARP GID reports.
int ibv_query_gid_type(ibv_context* c, uint8_t port, unsigned int index, int* type) {
  if (!on())
    return next<int (*)(ibv_context*, uint8_t, unsigned int, int*)>("ibv_query_gid_type")(
        c, port, index, type);
  ibv_gid g;
  if (ibv_query_gid(c, port, int(index), &g)) return -1;
  *type = 0;
  return 0;
}

int _ibv_query_gid_ex(ibv_context* c, uint32_t port, uint32_t index, ibv_gid_entry* entry,
                      uint32_t flags, size_t entry_size) {
  PASS(_ibv_query_gid_ex, c, port, index, entry, flags, entry_size);
  ibv_gid_entry e{};
  if (ibv_query_gid(c, uint8_t(port), int(index), &e.gid)) return errno ? errno : EINVAL;
  e.gid_index = index;
  e.port_num = port;
  e.gid_type = IBV_GID_TYPE_IB;
  std::memcpy(entry, &e, entry_size < sizeof e ? entry_size : sizeof e);
  return 0;
}

int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  PASS(ibv_read_sysfs_file, dir, file, buf, size);
  errno = ENOENT;  // the simulated card has no sysfs of its own
  return -1;
}

ibv_pd* ibv_alloc_pd(ibv_context* c) {
  PASS(ibv_alloc_pd, c);
  int rc = 0;
  Msg a = call(Op::kAllocPd, Msg().put(id_of(c)), &rc);
  if (rc) return nullptr;
  auto* x = new Pd{};
  x->id = a.get<uint64_t>();
  x->pd.context = c;
  x->pd.handle = a.get<uint32_t>();
  return &x->pd;
}

int ibv_dealloc_pd(ibv_pd* pd) {
  PASS(ibv_dealloc_pd, pd);
  int rc = 0;
  call(Op::kDeallocPd, Msg().put(id_of(pd)), &rc);
  return rc;
}

ibv_mr*(ibv_reg_mr)(ibv_pd* pd, void* addr, size_t length, int access) {
  if (!on())
    return next<ibv_mr* (*)(ibv_pd*, void*, size_t, int)>("ibv_reg_mr")(pd, addr, length, access);
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  std::vector<int> fds;
  if (int e = share(reinterpret_cast<uintptr_t>(addr), length, &runs, &fds)) {
    for (int fd : fds) close(fd);
    errno = e;
    return nullptr;
  }
  Msg m;
  m.put(id_of(pd)).put(uint64_t(reinterpret_cast<uintptr_t>(addr))).put(uint64_t(length));
  m.put(int32_t(access)).put(uint32_t(runs.size()));
  for (const auto& r : runs) m.put(r.first).put(r.second);
  int rc = 0;
  Msg a = call(Op::kRegMr, std::move(m), &rc, fds);
  for (int fd : fds) close(fd);
  if (rc) return nullptr;
  auto* x = new Mr{};
  x->id = a.get<uint64_t>();
  x->mr.context = pd->context;
  x->mr.pd = pd;
  x->mr.addr = addr;
  x->mr.length = length;
  x->mr.handle = a.get<uint32_t>();
  x->mr.lkey = a.get<uint32_t>();
  x->mr.rkey = a.get<uint32_t>();
  return &x->mr;
}

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                         unsigned int access) {
  PASS(ibv_reg_mr_iova2, pd, addr, length, iova, access);
  if (iova != reinterpret_cast<uintptr_t>(addr)) {
    refuse("ibv_reg_mr_iova with an iova other than the address");
    return nullptr;
  }
  return (ibv_reg_mr)(pd, addr, length, int(access & ~unsigned(IBV_ACCESS_OPTIONAL_RANGE)));
}

ibv_mr*(ibv_reg_mr_iova)(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  if (!on())
    return next<ibv_mr* (*)(ibv_pd*, void*, size_t, uint64_t, int)>("ibv_reg_mr_iova")(
        pd, addr, length, iova, access);
  return ibv_reg_mr_iova2(pd, addr, length, iova, unsigned(access));
}

int ibv_dereg_mr(ibv_mr* mr) {
  PASS(ibv_dereg_mr, mr);
  int rc = 0;
  call(Op::kDeregMr, Msg().put(id_of(mr)), &rc);
  return rc;
}

ibv_comp_channel* ibv_create_comp_channel(ibv_context* c) {
  PASS(ibv_create_comp_channel, c);
  int rc = 0;
  Msg a = call(Op::kCreateChannel, Msg().put(id_of(c)), &rc);
  if (rc) return nullptr;
  auto* x = new Channel{};
  x->id = a.get<uint64_t>();
  x->ch.context = c;
  x->ch.fd = eventfd(0, EFD_CLOEXEC);  // a descriptor to poll (the simulator's)
  if (x->ch.fd >= 0) vchans()[x->ch.fd] = rnic::exec::kPollCompChannel | int64_t(x->id);
  return &x->ch;
}

int ibv_destroy_comp_channel(ibv_comp_channel* ch) {
  PASS(ibv_destroy_comp_channel, ch);
  int rc = 0;
  call(Op::kDestroyChannel, Msg().put(id_of(ch)), &rc);
  if (rc == 0 && ch->fd >= 0) {
    forget(ch->fd);
    syscall(SYS_close, ch->fd);
  }
  return rc;
}

ibv_cq* ibv_create_cq(ibv_context* c, int cqe, void* cq_context, ibv_comp_channel* ch,
                      int comp_vector) {
  PASS(ibv_create_cq, c, cqe, cq_context, ch, comp_vector);
  int rc = 0;
  Msg a = call(Op::kCreateCq,
               Msg().put(id_of(c)).put(int32_t(cqe)).put(id_of(ch)).put(int32_t(comp_vector)), &rc);
  if (rc) return nullptr;
  auto* x = new Cq{};
  x->id = a.get<uint64_t>();
  x->cq.context = c;
  x->cq.channel = ch;
  x->cq.cq_context = cq_context;
  x->cq.handle = a.get<uint32_t>();
  x->cq.cqe = a.get<int32_t>();
  cqs()[x->id] = &x->cq;
  return &x->cq;
}

int ibv_destroy_cq(ibv_cq* cq) {
  PASS(ibv_destroy_cq, cq);
  int rc = 0;
  call(Op::kDestroyCq, Msg().put(id_of(cq)), &rc);
  if (!rc) {
    cqs().erase(id_of(cq));
    rnic::host::forget_cq_ex(&reinterpret_cast<Cq*>(cq)->ex);
  }
  return rc;
}

int ibv_get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_context) {
  PASS(ibv_get_cq_event, ch, cq, cq_context);
  int rc = 0;
  Msg a = call(Op::kGetCqEvent, Msg().put(id_of(ch)).put(int32_t(nonblocking_fd(ch->fd))), &rc);
  if (rc) return -1;
  auto it = cqs().find(a.get<uint64_t>());
  if (it == cqs().end()) {
    errno = EINVAL;
    return -1;
  }
  *cq = it->second;
  *cq_context = it->second->cq_context;
  return 0;
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int n) {
  if (!on()) return next<decltype(&ibv_ack_cq_events)>("ibv_ack_cq_events")(cq, n);
  int rc = 0;
  call(Op::kAckCqEvents, Msg().put(id_of(cq)).put(uint32_t(n)), &rc);
}

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* ia) {
  PASS(ibv_create_qp, pd, ia);
  int rc = 0;
  Msg a = call(Op::kCreateQp,
               Msg()
                   .put(id_of(pd))
                   .put(id_of(ia->send_cq))
                   .put(id_of(ia->recv_cq))
                   .put(id_of(ia->srq))
                   .put(ia->cap)
                   .put(int32_t(ia->qp_type))
                   .put(int32_t(ia->sq_sig_all)),
               &rc);
  if (rc) return nullptr;
  auto* x = new Qp{};
  x->id = a.get<uint64_t>();
  ibv_qp& q = x->qp;
  q.context = pd->context;
  q.qp_context = ia->qp_context;
  q.pd = pd;
  q.send_cq = ia->send_cq;
  q.recv_cq = ia->recv_cq;
  q.srq = ia->srq;
  q.qp_num = q.handle = a.get<uint32_t>();
  ia->cap = a.get<ibv_qp_cap>();
  q.state = IBV_QPS_RESET;
  q.qp_type = ia->qp_type;
  qps()[x->id] = &q;
  return &q;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  PASS(ibv_modify_qp, qp, attr, mask);
  int rc = 0;
  call(Op::kModifyQp, Msg().put(id_of(qp)).put(*attr).put(int32_t(mask)), &rc);
  if (!rc && (mask & IBV_QP_STATE)) qp->state = attr->qp_state;
  return rc;
}

int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) {
  PASS(ibv_query_qp, qp, attr, mask, init);
  int rc = 0;
  Msg a = call(Op::kQueryQp, Msg().put(id_of(qp)).put(int32_t(mask)), &rc);
  if (rc) return rc;
  *attr = a.get<ibv_qp_attr>();
  qp->state = attr->qp_state;
  if (init) {
    *init = ibv_qp_init_attr{};
    init->qp_context = qp->qp_context;
    init->send_cq = qp->send_cq;
    init->recv_cq = qp->recv_cq;
    init->srq = qp->srq;
    init->cap = a.get<ibv_qp_cap>();
    init->qp_type = qp->qp_type;
    init->sq_sig_all = a.get<int32_t>();
  }
  return 0;
}

int ibv_destroy_qp(ibv_qp* qp) {
  PASS(ibv_destroy_qp, qp);
  int rc = 0;
  call(Op::kDestroyQp, Msg().put(id_of(qp)), &rc);
  if (!rc) {
    qps().erase(id_of(qp));
    rnic::host::forget_qp_ex(&reinterpret_cast<Qp*>(qp)->ex);
  }
  return rc;
}

ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* a) {
  PASS(ibv_create_srq, pd, a);
  int rc = 0;
  Msg r = call(Op::kCreateSrq, Msg().put(id_of(pd)).put(a->attr), &rc);
  if (rc) return nullptr;
  auto* x = new Srq{};
  x->id = r.get<uint64_t>();
  x->srq.context = pd->context;
  x->srq.srq_context = a->srq_context;
  x->srq.pd = pd;
  x->srq.handle = r.get<uint32_t>();
  a->attr = r.get<ibv_srq_attr>();
  srqs()[x->id] = &x->srq;
  return &x->srq;
}
int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
  PASS(ibv_modify_srq, srq, attr, mask);
  int rc = 0;
  call(Op::kModifySrq, Msg().put(id_of(srq)).put(*attr).put(int32_t(mask)), &rc);
  return rc;
}
int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  PASS(ibv_query_srq, srq, attr);
  int rc = 0;
  Msg a = call(Op::kQuerySrq, Msg().put(id_of(srq)), &rc);
  if (!rc) *attr = a.get<ibv_srq_attr>();
  return rc;
}
int ibv_destroy_srq(ibv_srq* srq) {
  PASS(ibv_destroy_srq, srq);
  int rc = 0;
  call(Op::kDestroySrq, Msg().put(id_of(srq)), &rc);
  if (!rc) srqs().erase(id_of(srq));
  return rc;
}

int ibv_get_async_event(ibv_context* c, ibv_async_event* ev) {
  PASS(ibv_get_async_event, c, ev);
  int rc = 0;
  Msg a =
      call(Op::kGetAsyncEvent, Msg().put(id_of(c)).put(int32_t(nonblocking_fd(c->async_fd))), &rc);
  if (rc) return -1;
  *ev = ibv_async_event{};
  ev->event_type = ibv_event_type(a.get<int32_t>());
  const uint64_t id = a.get<uint64_t>();
  if (ev->event_type == IBV_EVENT_CQ_ERR) {
    auto it = cqs().find(id);
    ev->element.cq = it == cqs().end() ? nullptr : it->second;
  } else if (ev->event_type == IBV_EVENT_PORT_ACTIVE || ev->event_type == IBV_EVENT_PORT_ERR) {
    ev->element.port_num = int(id);
  } else if (ev->event_type == IBV_EVENT_SRQ_ERR) {
    auto it = srqs().find(id);
    ev->element.srq = it == srqs().end() ? nullptr : it->second;
  } else {
    auto it = qps().find(id);
    ev->element.qp = it == qps().end() ? nullptr : it->second;
  }
  return 0;
}

void ibv_ack_async_event(ibv_async_event* ev) {
  if (!on()) return next<decltype(&ibv_ack_async_event)>("ibv_ack_async_event")(ev);
}

int ibv_fork_init(void) {
  PASS(ibv_fork_init);
  return 0;  // the process's registered memory is shared, not pinned: nothing to protect
}

ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
  PASS(ibv_qp_to_qp_ex, qp);
  ibv_qp_ex* ex = qp ? rnic::host::qp_ex_of(&reinterpret_cast<Qp*>(qp)->ex) : nullptr;
  if (!ex) errno = EOPNOTSUPP;
  return ex;
}

// Verbs the card does not do, which libibverbs would hand to a provider the simulated card is
// not: EOPNOTSUPP (as the return value or with NULL) and one line naming it.
ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* a) {
  PASS(ibv_create_ah, pd, a);
  refuse("ibv_create_ah");
  return nullptr;
}
ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port) {
  PASS(ibv_create_ah_from_wc, pd, wc, grh, port);
  refuse("ibv_create_ah_from_wc");
  return nullptr;
}
int ibv_destroy_ah(ibv_ah* ah) {
  PASS(ibv_destroy_ah, ah);
  return refuse("ibv_destroy_ah");
}
int ibv_resize_cq(ibv_cq* cq, int cqe) {
  PASS(ibv_resize_cq, cq, cqe);
  return refuse("ibv_resize_cq");
}
int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, size_t length, int access) {
  PASS(ibv_rereg_mr, mr, flags, pd, addr, length, access);
  return refuse("ibv_rereg_mr");
}
int ibv_attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) {
  PASS(ibv_attach_mcast, qp, gid, lid);
  return refuse("ibv_attach_mcast");
}
int ibv_detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) {
  PASS(ibv_detach_mcast, qp, gid, lid);
  return refuse("ibv_detach_mcast");
}
int ibv_query_pkey(ibv_context* c, uint8_t port, int index, __be16* pkey) {
  PASS(ibv_query_pkey, c, port, index, pkey);
  if (index != 0) return refuse("ibv_query_pkey past index 0");
  *pkey = 0xFFFF;  // the default partition, as iWARP devices report it
  return 0;
}

// rnicsim's out-of-band board (models/host/verbs/verbs.h), for executables of the project's own
// tests that have no socket exchange.
void rnic_oob_put(const char* key, const void* data, size_t len) {
  if (!on()) return;
  int rc = 0;
  call(Op::kOobPut, Msg().put_str(key).put_bytes(data, len), &rc);
}
size_t rnic_oob_get(const char* key, void* data, size_t len) {
  if (!on()) return 0;
  int rc = 0;
  Msg a = call(Op::kOobGet, Msg().put_str(key).put(uint64_t(len)), &rc);
  size_t n = 0;
  const uint8_t* p = a.get_bytes(&n);
  if (p) std::memcpy(data, p, n < len ? n : len);
  return size_t(rc);
}

// --- The process's environment: clock, pid, sleeps, sockets to simulated hosts ---

int gettimeofday(struct timeval* tv, void* tz) {
  if (!on()) return next<int (*)(struct timeval*, void*)>("gettimeofday")(tv, tz);
  const uint64_t t = clock_now();
  if (tv) {
    tv->tv_sec = time_t(kEpochS + t / 1000000000);
    tv->tv_usec = suseconds_t(t % 1000000000 / 1000);
  }
  return 0;
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  if (!on()) return next<decltype(&clock_gettime)>("clock_gettime")(id, ts);
  uint64_t t;
  switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_TAI:
      t = clock_now() + kEpochS * 1000000000ull;
      break;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
      t = clock_now() + kBootNs;
      break;
    case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID:
      t = clock_now();
      break;
    default:
      errno = EINVAL;
      return -1;
  }
  ts->tv_sec = time_t(t / 1000000000);
  ts->tv_nsec = long(t % 1000000000);
  return 0;
}

time_t time(time_t* out) {
  if (!on()) return next<decltype(&time)>("time")(out);
  const time_t t = time_t(kEpochS + clock_now() / 1000000000);
  if (out) *out = t;
  return t;
}

pid_t getpid(void) {
  if (!on()) return next<decltype(&getpid)>("getpid")();
  return g_vpid;
}

namespace {
// Sleeps ns of simulated time, or until the real-time timer's SIGALRM: the time left (0: all).
// With a key (kSleep's): a wake of it since `seen` ends the sleep (0 left then, too).
uint64_t sim_sleep(uint64_t ns, uint64_t key = 0, uint64_t seen = 0) {
  const uint64_t now = g_now_ns + g_local_ns;
  uint64_t left = 0;
  if (alarm_ends_waits() && g_alarm_ns < now + ns) {
    left = now + ns - std::max(g_alarm_ns, now);
    ns -= left;
  }
  int rc = 0;
  Msg m;
  m.put(ns);
  if (key) m.put(key).put(seen);
  call(Op::kSleep, std::move(m), &rc);  // the answer raises SIGALRM when it is due
  if (key && g_now_ns + g_local_ns < now + ns) return 0;  // woken first: no timer's signal yet
  return left;
}
}  // namespace

int nanosleep(const struct timespec* req, struct timespec* rem) {
  if (!on()) return next<decltype(&nanosleep)>("nanosleep")(req, rem);
  if (!req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000 || req->tv_sec < 0) {
    errno = EINVAL;
    return -1;
  }
  const uint64_t left = sim_sleep(uint64_t(req->tv_sec) * 1000000000ull + uint64_t(req->tv_nsec));
  if (rem) *rem = {time_t(left / 1000000000ull), long(left % 1000000000ull)};
  if (left) {
    errno = EINTR;
    return -1;
  }
  return 0;
}

// clock_nanosleep on the simulated clocks clock_gettime reads: relative, or to an absolute time
// (TIMER_ABSTIME); it answers an error number, as POSIX has it.
int clock_nanosleep(clockid_t id, int flags, const struct timespec* req, struct timespec* rem) {
  if (!on()) return next<decltype(&clock_nanosleep)>("clock_nanosleep")(id, flags, req, rem);
  if (!req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000 || req->tv_sec < 0) return EINVAL;
  uint64_t base;
  switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_TAI:
      base = kEpochS * 1000000000ull;
      break;
    case CLOCK_MONOTONIC:
    case CLOCK_BOOTTIME:
      base = kBootNs;
      break;
    default:
      return EINVAL;
  }
  const uint64_t want = uint64_t(req->tv_sec) * 1000000000ull + uint64_t(req->tv_nsec);
  const uint64_t now = base + g_now_ns + g_local_ns;
  const uint64_t ns = !(flags & TIMER_ABSTIME) ? want : want > now ? want - now : 0;
  const uint64_t left = ns ? sim_sleep(ns) : 0;
  if (!left) return 0;
  if (rem && !(flags & TIMER_ABSTIME))
    *rem = {time_t(left / 1000000000ull), long(left % 1000000000ull)};
  return EINTR;
}

namespace {
// How often a wait the simulator cannot see end looks again, in simulated time: a poll's on its
// kernel's descriptors (below), pause's for a signal.
constexpr uint64_t kPollQuantumNs = 10000;

// pause and sigsuspend, `waiting` the signal mask while they wait: until the real-time timer's
// SIGALRM in simulated time, or, with none pending, a signal that another thread or process
// sends, looked for every kPollQuantumNs of simulated time. Those looks are not progress
// (exec::kLookAgain): with nothing else left to happen, the run ends with the process still
// waiting, as a poll's on its kernel's descriptors ends. Between looks every signal is blocked;
// one that came is delivered under `waiting` and the wait answers EINTR. (The spin watch's own
// signals, SIGPROF, SIGTRAP and SIGSEGV, stay open and are not what a wait is for.)
int wait_for_signal(const sigset_t& waiting) {
  sigset_t all, old;
  sigfillset(&all);
  for (int s : {SIGPROF, SIGTRAP, SIGSEGV}) sigdelset(&all, s);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t tid = pid_t(syscall(SYS_gettid));
  {
    const KeyLock l;
    signal_waiters()[tid] = waiting;
  }
  auto end = [&old, tid] {
    {
      const KeyLock l;
      signal_waiters().erase(tid);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = EINTR;
    return -1;
  };
  const KeyWaiter waiter(rnic::exec::kSignalKey);
  uint64_t wait_mask = 0;  // (bit s-1: signal s blocked while it waits; the simulator's form)
  for (int s = 1; s <= 64; ++s)
    if (sigismember(&waiting, s) == 1) wait_mask |= uint64_t(1) << (s - 1);
  for (;;) {
    uint64_t seen;
    {
      // The settling call is part of the look (neither is progress).
      const Looking look(true, rnic::exec::kLookAgain | rnic::exec::kLookForSignal);
      settle();  // (another thread's signal of this time is sent by then)
      seen = wakes_of(rnic::exec::kSignalKey);
    }
    sigset_t pending;
    sigpending(&pending);
    for (int s = 1; s < NSIG; ++s)
      if (sigismember(&all, s) == 1 && sigismember(&pending, s) == 1 &&
          sigismember(&waiting, s) != 1) {
        pthread_sigmask(SIG_SETMASK, &waiting, nullptr);  // (its handler runs here)
        return end();
      }
    if (alarm_ends_waits(&waiting)) {
      pthread_sigmask(SIG_SETMASK, &waiting, nullptr);
      sim_sleep(g_alarm_ns - std::min(g_alarm_ns, g_now_ns + g_local_ns));  // (it rings then)
      return end();
    }
    const Looking look(true, rnic::exec::kLookAgain | rnic::exec::kLookForSignal);
    int rc = 0;
    call(Op::kSleep, Msg().put(kPollQuantumNs).put(rnic::exec::kSignalKey).put(seen).put(wait_mask),
         &rc);
  }
}
}  // namespace

int pause(void) {
  if (!on()) return next<decltype(&pause)>("pause")();
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, nullptr, &cur);
  return wait_for_signal(cur);
}
int sigsuspend(const sigset_t* mask) {
  if (!on()) return next<decltype(&sigsuspend)>("sigsuspend")(mask);
  return wait_for_signal(*mask);
}

int usleep(useconds_t us) {
  if (!on()) return next<decltype(&usleep)>("usleep")(us);
  if (sim_sleep(uint64_t(us) * 1000)) {
    errno = EINTR;
    return -1;
  }
  return 0;
}

unsigned int sleep(unsigned int s) {
  if (!on()) return next<decltype(&sleep)>("sleep")(s);
  return unsigned((sim_sleep(uint64_t(s) * 1000000000ull) + 999999999ull) / 1000000000ull);
}

int setitimer(int which, const struct itimerval* nv, struct itimerval* old) {
  using Fn = int (*)(int, const struct itimerval*, struct itimerval*);
  static const auto real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "setitimer"));
  if (!on() || which != ITIMER_REAL) return real(which, nv, old);
  const uint64_t now = g_now_ns + g_local_ns;
  auto to_tv = [](uint64_t ns) {
    return timeval{time_t(ns / 1000000000ull), long(ns % 1000000000ull / 1000)};
  };
  auto to_ns = [](const timeval& t) {
    return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_usec) * 1000;
  };
  if (old) {
    old->it_value = to_tv(g_alarm_ns > now ? g_alarm_ns - now : 0);
    old->it_interval = to_tv(g_alarm_every_ns);
  }
  if (nv) {
    const uint64_t v = to_ns(nv->it_value);
    g_alarm_ns = v ? now + v : 0;
    g_alarm_every_ns = v ? to_ns(nv->it_interval) : 0;
  }
  return 0;
}

int getitimer(int which, struct itimerval* cur) {
  using Fn = int (*)(int, struct itimerval*);
  static const auto real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "getitimer"));
  if (!on() || which != ITIMER_REAL) return real(which, cur);
  return setitimer(ITIMER_REAL, nullptr, cur);
}

unsigned int alarm(unsigned int s) {
  if (!on()) return next<decltype(&alarm)>("alarm")(s);
  itimerval nv{}, old{};
  nv.it_value.tv_sec = time_t(s);
  setitimer(ITIMER_REAL, &nv, &old);
  return unsigned(old.it_value.tv_sec + (old.it_value.tv_usec ? 1 : 0));
}

namespace {
// The process's sockets on the management network: its descriptor (a /dev/null placeholder,
// so descriptor numbers and close behave) -> the simulator's socket.
std::map<int, int64_t>& vsocks() {
  static std::map<int, int64_t> m;
  return m;
}
int64_t vsock(int fd) {
  auto it = vsocks().find(fd);
  return it == vsocks().end() ? -1 : it->second;
}
// What a poll names descriptor fd by: its socket, or its channel (vchans); -1: the kernel's.
int64_t polled(int fd) {
  const int64_t k = vsock(fd);
  if (k >= 0) return k;
  auto it = vchans().find(fd);
  return it == vchans().end() ? -1 : it->second;
}
// The sockets in non-blocking mode (SOCK_NONBLOCK, O_NONBLOCK by fcntl, FIONBIO): a mode of the
// socket, shared by copies of its descriptor, as the kernel's is of the open file.
std::set<int64_t>& nonblocking() {
  static std::set<int64_t> s;
  return s;
}
// The UDP sockets among them (datagrams: a recv takes one, with its source).
std::set<int64_t>& dgrams() {
  static std::set<int64_t> s;
  return s;
}
bool is_dgram(int64_t k) { return k >= 0 && dgrams().count(k); }
// Each connected socket's peer (address, port: host order), for getpeername and recvfrom.
std::map<int64_t, std::pair<uint32_t, uint16_t>>& peers() {
  static std::map<int64_t, std::pair<uint32_t, uint16_t>> m;
  return m;
}
void set_nonblocking(int64_t k, bool on) {
  if (on)
    nonblocking().insert(k);
  else
    nonblocking().erase(k);
}
int placeholder(int flags) {
  return next<int (*)(const char*, int, ...)>("open")(
      "/dev/null", O_RDWR | ((flags & SOCK_CLOEXEC) ? O_CLOEXEC : 0));
}
// An IPv4 address (host order) and port of a sockaddr; false for another family.
bool addr_of(const sockaddr* a, socklen_t len, uint32_t* ip, uint16_t* port) {
  if (!a || len < socklen_t(sizeof(sockaddr_in)) || a->sa_family != AF_INET) return false;
  const auto* in = reinterpret_cast<const sockaddr_in*>(a);
  *ip = ntohl(in->sin_addr.s_addr);
  *port = ntohs(in->sin_port);
  return true;
}
void fill_addr(sockaddr* a, socklen_t* len, uint32_t ip, uint16_t port) {
  if (!a || !len) return;
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(ip);
  in.sin_port = htons(port);
  std::memcpy(a, &in, *len < sizeof in ? *len : sizeof in);
  *len = sizeof in;
}
// Socket k's peer into a sockaddr (fill_addr); false when it has none. A non-blocking
// connect's peer is the simulator's to say, once it is connected.
bool fill_peer(int64_t k, sockaddr* a, socklen_t* len) {
  auto p = peers().find(k);
  if (p == peers().end()) {
    int rc = 0;
    const int e = errno;
    Msg r = call(Op::kSockPeer, Msg().put(k), &rc);
    errno = e;
    if (rc) return false;
    const uint32_t ip = r.get<uint32_t>();
    p = peers().emplace(k, std::pair<uint32_t, uint16_t>{ip, r.get<uint16_t>()}).first;
  }
  fill_addr(a, len, p->second.first, p->second.second);
  return true;
}
// An iovec array as a message's (no name, no ancillary data).
msghdr iov_msg(const iovec* iov, int cnt) {
  msghdr m{};
  m.msg_iov = const_cast<iovec*>(iov);
  m.msg_iovlen = size_t(cnt < 0 ? 0 : cnt);
  return m;
}
std::set<addrinfo*>& our_addrinfo() {
  static std::set<addrinfo*> s;
  return s;
}
}  // namespace

int socket(int domain, int type, int protocol) {
  const bool stream = (domain == AF_INET || domain == AF_INET6) && (type & 0xF) == SOCK_STREAM;
  const bool udp =
      domain == AF_INET && (type & 0xF) == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP);
  if (!on() || !(stream || udp)) return next<decltype(&socket)>("socket")(domain, type, protocol);
  int rc = 0;
  Msg a = call(Op::kSockCreate, Msg().put(int32_t(udp ? 1 : 0)), &rc);
  if (rc) return -1;
  const int fd = placeholder(type);
  if (fd < 0) return -1;
  const int64_t k = a.get<int64_t>();
  vsocks()[fd] = k;
  if (type & SOCK_NONBLOCK) nonblocking().insert(k);
  if (udp) dgrams().insert(k);
  return fd;
}

int bind(int fd, const sockaddr* addr, socklen_t len) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&bind)>("bind")(fd, addr, len);
  uint32_t ip = 0;
  uint16_t port = 0;
  if (addr && addr->sa_family == AF_INET6 && len >= socklen_t(sizeof(sockaddr_in6))) {
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port);  // any address
  } else if (!addr_of(addr, len, &ip, &port)) {
    errno = EAFNOSUPPORT;
    return -1;
  }
  int rc = 0;
  call(Op::kSockBind, Msg().put(k).put(ip).put(port), &rc);
  return rc ? -1 : 0;
}

int listen(int fd, int backlog) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&listen)>("listen")(fd, backlog);
  int rc = 0;
  call(Op::kSockListen, Msg().put(k), &rc);
  return rc ? -1 : 0;
}

int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&accept4)>("accept4")(fd, addr, len, flags);
  int rc = 0;
  // (Whether the call waits is the listener's mode; SOCK_NONBLOCK is the new socket's.)
  Msg a;
  do
    a = call(Op::kSockAccept, Msg().put(k).put(int32_t(nonblocking().count(k))).put(signal_limit()),
             &rc);
  while (rc && errno == EINTR && signal_restarts());
  if (rc) return -1;
  const int64_t n = a.get<int64_t>();
  const uint32_t ip = a.get<uint32_t>();
  const uint16_t port = a.get<uint16_t>();
  const int nfd = placeholder(flags);
  if (nfd < 0) return -1;
  vsocks()[nfd] = n;
  if (flags & SOCK_NONBLOCK) nonblocking().insert(n);
  peers()[n] = {ip, port};
  fill_addr(addr, len, ip, port);
  return nfd;
}

int accept(int fd, sockaddr* addr, socklen_t* len) {
  if (vsock(fd) < 0) return next<decltype(&accept)>("accept")(fd, addr, len);
  return accept4(fd, addr, len, 0);
}

int connect(int fd, const sockaddr* addr, socklen_t len) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&connect)>("connect")(fd, addr, len);
  uint32_t ip = 0;
  uint16_t port = 0;
  if (!addr_of(addr, len, &ip, &port)) {
    errno = EAFNOSUPPORT;
    return -1;
  }
  int rc = 0;
  call(Op::kSockConnect,
       Msg().put(k).put(ip).put(port).put(int32_t(nonblocking().count(k))).put(signal_limit()),
       &rc);
  // (EINPROGRESS: a non-blocking socket's, and EINTR, a signal's, whatever its handler: the
  // connect goes on; its peer is asked for later.)
  if (rc) return -1;
  peers()[k] = {ip, port};
  return 0;
}

// What a thread writes to its kernel's descriptors goes there; a poll of another thread's may
// be watching them (kernel_fd_touched).
ssize_t kernel_written(int fd, ssize_t r) {
  if (r > 0) kernel_fd_touched(fd);
  return r;
}

ssize_t send(int fd, const void* buf, size_t n, int flags) {
  const int64_t k = vsock(fd);
  if (k < 0) return kernel_written(fd, next<decltype(&send)>("send")(fd, buf, n, flags));
  if (is_dgram(k) && n > rnic::exec::kMaxMsg / 2) {  // (a datagram is whole or not at all)
    errno = EMSGSIZE;
    return -1;
  }
  if (n > rnic::exec::kMaxMsg / 2) n = rnic::exec::kMaxMsg / 2;
  int rc = 0;
  call(Op::kSockSend, Msg().put(k).put_bytes(buf, n), &rc);
  if (rc < 0 && errno == EPIPE && !(flags & MSG_NOSIGNAL)) {
    raise(SIGPIPE);  // (as the kernel sends it: ends the process unless it is ignored or caught)
    errno = EPIPE;
  }
  return rc < 0 ? -1 : rc;
}

// One datagram of a UDP socket: up to n of its bytes (MSG_TRUNC: its length is the answer), its
// source in from (if given).
ssize_t recv_dgram(int64_t k, void* buf, size_t n, int flags, sockaddr* from, socklen_t* len,
                   bool* truncated = nullptr) {
  const bool nonblock = (flags & MSG_DONTWAIT) || nonblocking().count(k);
  for (;;) {
    int rc = 0;
    Msg a = call(Op::kSockRecvFrom,
                 Msg()
                     .put(k)
                     .put(uint64_t(n))
                     .put(int32_t(nonblock))
                     .put(int32_t((flags & MSG_PEEK) != 0))
                     .put(signal_limit()),
                 &rc);
    if (rc < 0 && errno == EINTR && signal_restarts()) continue;
    if (rc < 0) return -1;
    size_t m = 0;
    const uint8_t* p = a.get_bytes(&m);
    const uint32_t ip = a.get<uint32_t>();
    const uint16_t port = a.get<uint16_t>();
    const uint64_t full = a.get<uint64_t>();
    m = std::min(m, n);
    if (p && m) std::memcpy(buf, p, m);
    if (from && len) fill_addr(from, len, ip, port);
    if (truncated) *truncated = full > m;
    return (flags & MSG_TRUNC) ? ssize_t(full) : ssize_t(m);
  }
}

// MSG_PEEK leaves the bytes in the stream; MSG_WAITALL waits for all n (on a blocking socket:
// a peek waits for n there, a read takes them in as many answers as they come in).
ssize_t recv(int fd, void* buf, size_t n, int flags) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&recv)>("recv")(fd, buf, n, flags);
  if (is_dgram(k)) return recv_dgram(k, buf, n, flags, nullptr, nullptr);
  if (n == 0) return 0;
  const bool nonblock = (flags & MSG_DONTWAIT) || nonblocking().count(k);
  const bool peek = flags & MSG_PEEK;
  const bool all = (flags & MSG_WAITALL) && !nonblock;
  size_t got = 0;
  for (;;) {
    const size_t left = n - got;
    int rc = 0;
    Msg a = call(Op::kSockRecv,
                 Msg()
                     .put(k)
                     .put(uint64_t(left))
                     .put(int32_t(nonblock))
                     .put(int32_t(peek))
                     .put(uint64_t(all && peek ? left : 1))
                     .put(signal_limit()),
                 &rc);
    if (rc < 0 && errno == EINTR && signal_restarts()) continue;
    if (rc < 0) return got ? ssize_t(got) : -1;
    size_t m = 0;
    const uint8_t* p = a.get_bytes(&m);
    m = m < left ? m : left;
    if (p && m) std::memcpy(static_cast<uint8_t*>(buf) + got, p, m);
    got += m;
    if (m == 0 || peek || !all || got == n) break;  // (0: the end of stream; a peek's look)
  }
  return ssize_t(got);
}

ssize_t write(int fd, const void* buf, size_t n) {
  if (vsock(fd) < 0) return kernel_written(fd, next<decltype(&write)>("write")(fd, buf, n));
  return send(fd, buf, n, 0);
}

// sendto and recvfrom on a connected stream: its address is the peer's (given: not used).
ssize_t sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* to, socklen_t len) {
  const int64_t k = vsock(fd);
  if (k < 0)
    return kernel_written(fd, next<decltype(&sendto)>("sendto")(fd, buf, n, flags, to, len));
  if (!is_dgram(k) || !to) return send(fd, buf, n, flags);
  uint32_t ip = 0;
  uint16_t port = 0;
  if (!addr_of(to, len, &ip, &port)) {
    errno = EAFNOSUPPORT;
    return -1;
  }
  if (n > rnic::exec::kMaxMsg / 2) {
    errno = EMSGSIZE;
    return -1;
  }
  int rc = 0;
  call(Op::kSockSendTo, Msg().put(k).put(ip).put(port).put_bytes(buf, n), &rc);
  return rc < 0 ? -1 : rc;
}

ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* from, socklen_t* len) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&recvfrom)>("recvfrom")(fd, buf, n, flags, from, len);
  if (is_dgram(k)) return recv_dgram(k, buf, n, flags, from, len);
  const ssize_t r = recv(fd, buf, n, flags);
  if (r >= 0 && from && len) fill_peer(k, from, len);
  return r;
}

// The vectored calls gather into one send and scatter one recv: a stream's bytes either way.
ssize_t sendmsg(int fd, const msghdr* m, int flags) {
  if (vsock(fd) < 0) return kernel_written(fd, next<decltype(&sendmsg)>("sendmsg")(fd, m, flags));
  std::vector<uint8_t> b;
  for (size_t i = 0; i < size_t(m->msg_iovlen); ++i) {
    const auto* p = static_cast<const uint8_t*>(m->msg_iov[i].iov_base);
    b.insert(b.end(), p, p + m->msg_iov[i].iov_len);
  }
  if (m->msg_name)  // (a datagram's address; a stream's is not used)
    return sendto(fd, b.data(), b.size(), flags, static_cast<const sockaddr*>(m->msg_name),
                  m->msg_namelen);
  return send(fd, b.data(), b.size(), flags);
}

ssize_t writev(int fd, const iovec* iov, int cnt) {
  if (vsock(fd) < 0) return kernel_written(fd, next<decltype(&writev)>("writev")(fd, iov, cnt));
  const msghdr m = iov_msg(iov, cnt);
  return sendmsg(fd, &m, 0);
}

ssize_t recvmsg(int fd, msghdr* m, int flags) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&recvmsg)>("recvmsg")(fd, m, flags);
  size_t room = 0;
  for (size_t i = 0; i < size_t(m->msg_iovlen); ++i) room += m->msg_iov[i].iov_len;
  std::vector<uint8_t> b(room);
  bool truncated = false;
  const ssize_t r =
      is_dgram(k) ? recv_dgram(k, b.data(), room, flags & ~MSG_TRUNC,
                               static_cast<sockaddr*>(m->msg_name), &m->msg_namelen, &truncated)
                  : recv(fd, b.data(), room, flags);
  if (r < 0) return r;
  size_t at = 0;
  for (size_t i = 0; i < size_t(m->msg_iovlen) && at < size_t(r); ++i) {
    const size_t n = std::min(m->msg_iov[i].iov_len, size_t(r) - at);
    std::memcpy(m->msg_iov[i].iov_base, b.data() + at, n);
    at += n;
  }
  if (!is_dgram(k) && m->msg_name &&
      !fill_peer(k, static_cast<sockaddr*>(m->msg_name), &m->msg_namelen))
    m->msg_namelen = 0;
  m->msg_controllen = 0;  // (no ancillary data on these sockets)
  m->msg_flags = truncated ? MSG_TRUNC : 0;
  return r;
}

ssize_t readv(int fd, const iovec* iov, int cnt) {
  if (vsock(fd) < 0) return next<decltype(&readv)>("readv")(fd, iov, cnt);
  msghdr m = iov_msg(iov, cnt);
  return recvmsg(fd, &m, 0);
}

int getsockname(int fd, sockaddr* addr, socklen_t* len) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&getsockname)>("getsockname")(fd, addr, len);
  if (!addr || !len) {
    errno = EFAULT;
    return -1;
  }
  int rc = 0;
  Msg a = call(Op::kSockName, Msg().put(k), &rc);
  if (rc) return -1;
  const uint32_t ip = a.get<uint32_t>();
  fill_addr(addr, len, ip, a.get<uint16_t>());
  return 0;
}
int shutdown(int fd, int how) {
  const int64_t k = vsock(fd);
  if (k < 0) {
    const int r = next<decltype(&shutdown)>("shutdown")(fd, how);
    if (r == 0) kernel_fd_touched(fd);
    return r;
  }
  int rc = 0;
  call(Op::kSockShutdown, Msg().put(k).put(int32_t(how)), &rc);
  return rc ? -1 : 0;
}
int getpeername(int fd, sockaddr* addr, socklen_t* len) {
  const int64_t k = vsock(fd);
  if (k < 0) return next<decltype(&getpeername)>("getpeername")(fd, addr, len);
  if (fill_peer(k, addr, len)) return 0;
  errno = ENOTCONN;
  return -1;
}

// The options a program asks of a stream it made: its pending error (a non-blocking connect's;
// a failed blocking call said so when it failed), its type and family. Others are not modelled
// (ENOPROTOOPT).
int getsockopt(int fd, int level, int name, void* val, socklen_t* len) {
  if (vsock(fd) < 0) return next<decltype(&getsockopt)>("getsockopt")(fd, level, name, val, len);
  int v = 0;
  if (level == SOL_SOCKET && name == SO_ERROR) {
    int rc = 0;
    call(Op::kSockError, Msg().put(vsock(fd)), &rc);
    v = rc < 0 ? 0 : rc;
  } else if (level == SOL_SOCKET && name == SO_TYPE)
    v = is_dgram(vsock(fd)) ? SOCK_DGRAM : SOCK_STREAM;
  else if (level == SOL_SOCKET && name == SO_DOMAIN)
    v = AF_INET;
  else {
    errno = ENOPROTOOPT;
    return -1;
  }
  if (!val || !len || *len < socklen_t(sizeof v)) {
    errno = EINVAL;
    return -1;
  }
  std::memcpy(val, &v, sizeof v);
  *len = sizeof v;
  return 0;
}

ssize_t read(int fd, void* buf, size_t n) {
  if (vsock(fd) < 0) return next<decltype(&read)>("read")(fd, buf, n);
  return recv(fd, buf, n, 0);
}

namespace {
// epoll with the process's sockets on the management network: the epoll instance is the
// kernel's (its descriptor, and the other descriptors it watches), and the sockets it watches
// are kept here beside it, per instance: their events and data, and whether a one-shot
// (EPOLLONESHOT) has fired. As the kernel's, a registration is of a descriptor and what it
// names (here its socket): it stays while a copy of the descriptor keeps the socket open, and
// copies of the instance's descriptor (dup) share the instance.
struct Watched {
  epoll_event ev;
  bool fired = false;
};
using EpollSet = std::map<std::pair<int, int64_t>, Watched>;  // by (descriptor, socket)
std::map<int, std::shared_ptr<EpollSet>>& epolls() {
  static std::map<int, std::shared_ptr<EpollSet>> m;
  return m;
}
}  // namespace

}  // extern "C"

namespace {

// `fd` no longer names what it named (closed, or made a copy of another by dup2): a socket closes
// with its last descriptor, and the epoll instances' registrations of it go then.
void forget(int fd) {
  const auto c = vchans().find(fd);
  if (c != vchans().end()) {  // a channel's descriptor: its registrations go with it
    for (auto& [ep, set] : epolls())
      for (auto it = set->begin(); it != set->end();)
        it = it->first.second == c->second ? set->erase(it) : std::next(it);
    vchans().erase(c);
  }
  const int64_t k = vsock(fd);
  if (k >= 0) {
    vsocks().erase(fd);
    bool last = true;
    for (const auto& [other, s] : vsocks()) last &= s != k;
    if (last) {
      int rc = 0;
      call(Op::kSockClose, Msg().put(k), &rc);
      nonblocking().erase(k);
      dgrams().erase(k);
      peers().erase(k);
      for (auto& [ep, set] : epolls())
        for (auto it = set->begin(); it != set->end();)
          it = it->first.second == k ? set->erase(it) : std::next(it);
    }
  }
  epolls().erase(fd);
}

// nfd is now a copy of fd (dup, dup2, dup3): a socket's copy is the same socket, an epoll
// instance's the same instance.
void copied(int fd, int nfd) {
  const int64_t k = vsock(fd);
  if (k >= 0) vsocks()[nfd] = k;
  const auto e = epolls().find(fd);
  if (e != epolls().end()) epolls()[nfd] = e->second;
}

}  // namespace

extern "C" {

int close(int fd) {
  if (vsock(fd) < 0) kernel_fd_touched(fd);  // (a pipe's reader sees its end)
  forget(fd);
  return next<decltype(&close)>("close")(fd);
}
// libc's own write, which its eventfd_write calls, is not the one above.
int eventfd_write(int fd, eventfd_t value) {
  const int r = next<decltype(&eventfd_write)>("eventfd_write")(fd, value);
  if (r == 0) kernel_fd_touched(fd);
  return r;
}

int dup(int fd) {
  const int nfd = next<decltype(&dup)>("dup")(fd);
  if (nfd >= 0 && on()) copied(fd, nfd);
  return nfd;
}

int dup2(int fd, int nfd) {
  const int r = next<decltype(&dup2)>("dup2")(fd, nfd);
  if (r >= 0 && fd != nfd && on()) {
    forget(nfd);  // (the kernel closed what it named)
    copied(fd, nfd);
  }
  return r;
}

// fcntl and ioctl act on a socket's placeholder descriptor as they would (so F_GETFL reads back
// what F_SETFL set), and tell the socket its mode; F_DUPFD's copy is the same socket.
namespace {
int after_fcntl(int fd, int cmd, long arg, int r) {
  if (r < 0 || !on() || vsock(fd) < 0) return r;
  if (cmd == F_SETFL) {
    set_nonblocking(vsock(fd), (arg & O_NONBLOCK) != 0);
  } else if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
    copied(fd, r);
  }
  return r;
}
}  // namespace

// (fcntl64 is the same call under glibc's other name.)
#define RNIC_FCNTL(NAME)                                                                 \
  int NAME(int fd, int cmd, ...) {                                                       \
    va_list ap;                                                                          \
    va_start(ap, cmd);                                                                   \
    const long arg = va_arg(ap, long); /* an int or a pointer: either fits */            \
    va_end(ap);                                                                          \
    return after_fcntl(fd, cmd, arg, next<int (*)(int, int, ...)>(#NAME)(fd, cmd, arg)); \
  }
RNIC_FCNTL(fcntl)
RNIC_FCNTL(fcntl64)
#undef RNIC_FCNTL

// --- The host's identity: its name and network interfaces ---
//
// A simulated process sees its host's, not the machine's: gethostname and uname's node name
// are the host's name; its interfaces are "lo" (127.0.0.1/8) and "eth0", the host's address on
// the simulated network (10.0.0.0/8) with its card's MAC, as getifaddrs, if_nametoindex and
// friends, and a socket's SIOCGIF* ioctls give them.
}  // extern "C"
namespace {
struct Iface {
  const char* name;
  unsigned index;
  uint32_t ip, mask;  // host order
  unsigned flags;
};
std::array<Iface, 2> ifaces() {
  return {
      Iface{"lo", 1, 0x7F000001u, 0xFF000000u, IFF_UP | IFF_LOOPBACK | IFF_RUNNING},
      Iface{"eth0", 2, g_ip, 0xFF000000u, IFF_UP | IFF_BROADCAST | IFF_RUNNING | IFF_MULTICAST}};
}
// The interface named n, in *out; false if there is none.
bool find_iface(const char* n, Iface* out) {
  for (const Iface& i : ifaces())
    if (n && std::strncmp(n, i.name, IFNAMSIZ) == 0) return *out = i, true;
  return false;
}
void put_in(sockaddr* a, uint32_t ip) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(ip);
  std::memcpy(a, &in, sizeof in);
}
std::set<void*>& our_ifaddrs() {
  static std::set<void*> s;
  return s;
}
// A socket's interface request (SIOCGIF*), answered from the host's interfaces: true if it was
// one (its answer in *r).
bool iface_ioctl(unsigned long req, void* arg, int* r) {
  *r = 0;
  if (req == SIOCGIFCONF) {
    auto* c = static_cast<ifconf*>(arg);
    const std::array<Iface, 2> all = ifaces();
    if (!c->ifc_req) {
      c->ifc_len = int(all.size() * sizeof(ifreq));
      return true;
    }
    int n = 0;
    for (const Iface& i : all) {
      if (size_t(c->ifc_len) < (size_t(n) + 1) * sizeof(ifreq)) break;
      ifreq& q = c->ifc_req[n++];
      std::memset(&q, 0, sizeof q);
      std::snprintf(q.ifr_name, IFNAMSIZ, "%s", i.name);
      put_in(&q.ifr_addr, i.ip);
    }
    c->ifc_len = int(size_t(n) * sizeof(ifreq));
    return true;
  }
  auto* q = static_cast<ifreq*>(arg);
  if (req == SIOCGIFNAME) {
    for (const Iface& i : ifaces())
      if (int(i.index) == q->ifr_ifindex) {
        std::snprintf(q->ifr_name, IFNAMSIZ, "%s", i.name);
        return true;
      }
    *r = ENODEV;
    return true;
  }
  if (req != SIOCGIFADDR && req != SIOCGIFNETMASK && req != SIOCGIFBRDADDR && req != SIOCGIFFLAGS &&
      req != SIOCGIFINDEX && req != SIOCGIFMTU && req != SIOCGIFHWADDR)
    return false;
  Iface found;
  if (!find_iface(q->ifr_name, &found)) {
    *r = ENODEV;
    return true;
  }
  const Iface* i = &found;
  switch (req) {
    case SIOCGIFADDR:
      put_in(&q->ifr_addr, i->ip);
      break;
    case SIOCGIFNETMASK:
      put_in(&q->ifr_netmask, i->mask);
      break;
    case SIOCGIFBRDADDR:
      put_in(&q->ifr_broadaddr, (i->ip & i->mask) | ~i->mask);
      break;
    case SIOCGIFFLAGS:
      q->ifr_flags = short(i->flags);
      break;
    case SIOCGIFINDEX:
      q->ifr_ifindex = int(i->index);
      break;
    case SIOCGIFMTU:
      q->ifr_mtu = i->index == 1 ? 65536 : 1500;
      break;
    default:  // SIOCGIFHWADDR
      std::memset(&q->ifr_hwaddr, 0, sizeof q->ifr_hwaddr);
      q->ifr_hwaddr.sa_family = i->index == 1 ? 772 : 1;  // ARPHRD_LOOPBACK, ARPHRD_ETHER
      if (i->index == 2) std::memcpy(q->ifr_hwaddr.sa_data, g_mac.data(), 6);
  }
  return true;
}
}  // namespace
extern "C" {

int gethostname(char* name, size_t len) {
  if (!on()) return next<decltype(&gethostname)>("gethostname")(name, len);
  const size_t n = std::strlen(g_host);
  if (!name || len < n + 1) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(name, g_host, n + 1);
  return 0;
}

int uname(struct utsname* u) {
  const int r = next<decltype(&uname)>("uname")(u);
  if (r == 0 && on()) std::snprintf(u->nodename, sizeof u->nodename, "%s", g_host);
  return r;
}

int getifaddrs(struct ifaddrs** out) {
  if (!on()) return next<decltype(&getifaddrs)>("getifaddrs")(out);
  struct Block {
    ifaddrs ifa[2];
    sockaddr_in addr[2], mask[2], brd[2];
    char name[2][IFNAMSIZ];
  };
  auto* b = static_cast<Block*>(std::calloc(1, sizeof(Block)));
  if (!b) {
    errno = ENOMEM;
    return -1;
  }
  const std::array<Iface, 2> all = ifaces();
  for (size_t k = 0; k < all.size(); ++k) {
    const Iface& i = all[k];
    ifaddrs& a = b->ifa[k];
    std::snprintf(b->name[k], IFNAMSIZ, "%s", i.name);
    put_in(reinterpret_cast<sockaddr*>(&b->addr[k]), i.ip);
    put_in(reinterpret_cast<sockaddr*>(&b->mask[k]), i.mask);
    put_in(reinterpret_cast<sockaddr*>(&b->brd[k]), (i.ip & i.mask) | ~i.mask);
    a.ifa_next = k + 1 < all.size() ? &b->ifa[k + 1] : nullptr;
    a.ifa_name = b->name[k];
    a.ifa_flags = i.flags;
    a.ifa_addr = reinterpret_cast<sockaddr*>(&b->addr[k]);
    a.ifa_netmask = reinterpret_cast<sockaddr*>(&b->mask[k]);
    a.ifa_broadaddr = (i.flags & IFF_BROADCAST) ? reinterpret_cast<sockaddr*>(&b->brd[k]) : nullptr;
  }
  our_ifaddrs().insert(b);
  *out = &b->ifa[0];
  return 0;
}

void freeifaddrs(struct ifaddrs* ifa) {
  if (our_ifaddrs().erase(ifa)) {
    std::free(ifa);  // the block starts with it
    return;
  }
  next<decltype(&freeifaddrs)>("freeifaddrs")(ifa);
}

unsigned int if_nametoindex(const char* name) {
  if (!on()) return next<decltype(&if_nametoindex)>("if_nametoindex")(name);
  Iface i;
  if (find_iface(name, &i)) return i.index;
  errno = ENODEV;
  return 0;
}

char* if_indextoname(unsigned int index, char* name) {
  if (!on()) return next<decltype(&if_indextoname)>("if_indextoname")(index, name);
  for (const Iface& i : ifaces())
    if (i.index == index) {
      std::snprintf(name, IFNAMSIZ, "%s", i.name);
      return name;
    }
  errno = ENXIO;
  return nullptr;
}

struct if_nameindex* if_nameindex(void) {
  if (!on()) return next<decltype(&if_nameindex)>("if_nameindex")();
  auto* v = static_cast<struct if_nameindex*>(std::calloc(3, sizeof(struct if_nameindex)));
  if (!v) return nullptr;
  size_t k = 0;
  for (const Iface& i : ifaces()) {
    v[k].if_index = i.index;
    v[k].if_name = strdup(i.name);
    ++k;
  }
  our_ifaddrs().insert(v);
  return v;
}

void if_freenameindex(struct if_nameindex* v) {
  if (!our_ifaddrs().erase(v)) return next<decltype(&if_freenameindex)>("if_freenameindex")(v);
  for (struct if_nameindex* p = v; p->if_name; ++p) std::free(p->if_name);
  std::free(v);
}

int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (on() && arg && (req & 0xFF00) == 0x8900) {  // SIOCGIF*: of a socket (its kind aside)
    int e = 0;
    struct stat st;
    const bool sock = vsock(fd) >= 0 || (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode));
    if (sock && iface_ioctl(req, arg, &e)) {
      if (e) errno = e;
      return e ? -1 : 0;
    }
  }
  const int r = next<int (*)(int, unsigned long, ...)>("ioctl")(fd, req, arg);
  if (r == 0 && req == FIONBIO && arg && on() && vsock(fd) >= 0)
    set_nonblocking(vsock(fd), *static_cast<const int*>(arg) != 0);
  return r;
}

int dup3(int fd, int nfd, int flags) {
  const int r = next<decltype(&dup3)>("dup3")(fd, nfd, flags);
  if (r >= 0 && on()) {
    forget(nfd);
    copied(fd, nfd);
  }
  return r;
}

// poll waits in simulated time: on the process's sockets and channels as the simulator serves
// them, and on the kernel's other descriptors by a look (a real poll with no wait) every
// kPollQuantumNs of simulated time. With none of the first kind it sleeps between its looks, and
// with no descriptor at all it is a sleep of its timeout (poll(NULL, 0, ms), select's sleep).
// ppoll, select and pselect are the same wait (ppoll's and pselect's signal masks in place while
// it lasts), to the nanosecond of their timeouts. A real-time timer whose SIGALRM is neither
// blocked nor ignored ends it when it comes first (-1, EINTR). Those looks, in a wait with no
// timeout and no such timer pending, are not progress (exec::kLookAgain): a program that waits
// for ever on a descriptor nothing will write ends the run with where it waits, when nothing
// else moves. (kPollQuantumNs: above.)
}  // extern "C"

namespace {

// A timeout in nanoseconds (-1: none) from milliseconds, a timeval or a timespec (null: none).
int64_t ns_of_ms(int ms) { return ms < 0 ? -1 : int64_t(ms) * 1000000; }
int64_t ns_of(const timeval* tv) {
  return tv ? int64_t(tv->tv_sec) * 1000000000 + int64_t(tv->tv_usec) * 1000 : -1;
}
int64_t ns_of(const timespec* ts) {
  return ts ? int64_t(ts->tv_sec) * 1000000000 + int64_t(ts->tv_nsec) : -1;
}

// poll of a process's descriptors: its sockets and channels by the simulator (kSockPoll), the
// kernel's others by a real poll with no wait at each look.
// ids (if given): each entry's socket (-1: its descriptor's, if it names one).
int poll_ns(struct pollfd* fds, nfds_t n, int64_t timeout_ns, const sigset_t* mask = nullptr,
            const int64_t* ids = nullptr) {
  const WaitMask masked(mask);
  static const auto real = next<decltype(&::poll)>("poll");
  auto sock_of = [&](size_t i) { return ids && ids[i] >= 0 ? ids[i] : polled(fds[i].fd); };
  std::vector<size_t> mine, theirs;
  for (nfds_t i = 0; i < n; ++i) {
    if (sock_of(i) >= 0)
      mine.push_back(i);
    else if (fds[i].fd >= 0)
      theirs.push_back(i);
  }
  const uint64_t start = g_now_ns + g_local_ns;
  const uint64_t deadline = timeout_ns < 0 ? UINT64_MAX : start + uint64_t(timeout_ns);
  std::vector<pollfd> other(theirs.size());
  // A write to, or a close of, a kernel's descriptor by another thread ends the wait before the
  // next look (kernel_fd_touched): the wakes seen by the last look.
  std::unique_ptr<KeyWaiter> waiter;
  if (!theirs.empty()) waiter = std::make_unique<KeyWaiter>(rnic::exec::kKernelFdKey);
  uint64_t seen = waiter ? wakes_of(rnic::exec::kKernelFdKey) : 0;
  for (bool first = true;; first = false) {
    const uint64_t now = g_now_ns + g_local_ns;
    uint64_t wait = deadline == UINT64_MAX ? UINT64_MAX : deadline - std::min(deadline, now);
    if (!theirs.empty()) wait = std::min(wait, kPollQuantumNs);
    // A timer's signal ends the wait (EINTR) when it comes first.
    const bool alarmed = alarm_ends_waits();
    if (alarmed) wait = std::min(wait, g_alarm_ns - std::min(g_alarm_ns, now));
    const uint64_t rings = g_alarm_rings;
    // Looks at the kernel's descriptors (or a wait on nothing) that nothing simulated can end.
    const Looking look(deadline == UINT64_MAX && !alarmed && (!theirs.empty() || mine.empty()));
    int ready = 0;
    if (!mine.empty()) {
      Msg m;
      m.put(uint32_t(mine.size()));
      for (size_t i : mine) m.put(sock_of(i)).put(int16_t(fds[i].events));
      m.put(int64_t(wait == UINT64_MAX ? -1 : int64_t(wait)));
      if (waiter) m.put(rnic::exec::kKernelFdKey).put(seen);
      int rc = 0;
      Msg a = call(Op::kSockPoll, std::move(m), &rc);
      if (rc < 0) return -1;
      for (size_t i : mine) {
        fds[i].revents = a.get<int16_t>();
        if (fds[i].revents) ++ready;
      }
    } else if (!first || theirs.empty()) {
      // Nothing the simulator serves: the wait is a sleep, to the next look at the kernel's
      // descriptors (a look comes first: a descriptor ready now does not wait).
      if (wait > 0) {
        int rc = 0;
        Msg m;
        m.put(std::min<uint64_t>(wait, 1ull << 50));
        if (waiter) m.put(rnic::exec::kKernelFdKey).put(seen);
        call(Op::kSleep, std::move(m), &rc);
      } else {
        alarm_due(now);
      }
    }
    if (!theirs.empty()) {
      settle();
      seen = wakes_of(rnic::exec::kKernelFdKey);
      for (size_t k = 0; k < theirs.size(); ++k) other[k] = fds[theirs[k]];
      const int r = real(other.data(), other.size(), 0);
      for (size_t k = 0; k < theirs.size(); ++k) fds[theirs[k]].revents = other[k].revents;
      if (r > 0) ready += r;
    }
    if (ready) return ready;
    if (alarmed && g_alarm_rings != rings) {
      errno = EINTR;
      return -1;
    }
    if (g_now_ns + g_local_ns >= deadline) return 0;
  }
}

// select as a poll (poll_ns) of the descriptors in its sets.
int select_ns(int nfds, fd_set* rd, fd_set* wr, fd_set* ex, int64_t timeout_ns,
              const sigset_t* mask = nullptr) {
  if (nfds < 0 || nfds > FD_SETSIZE || timeout_ns < -1) {
    errno = EINVAL;
    return -1;
  }
  std::vector<pollfd> p;
  for (int fd = 0; fd < nfds; ++fd) {
    short ev = 0;
    if (rd && FD_ISSET(fd, rd)) ev |= POLLIN;
    if (wr && FD_ISSET(fd, wr)) ev |= POLLOUT;
    if (ex && FD_ISSET(fd, ex)) ev |= POLLPRI;
    if (ev) p.push_back({fd, ev, 0});
  }
  const int r = poll_ns(p.data(), p.size(), timeout_ns, mask);
  if (r < 0) return r;
  for (const pollfd& q : p)
    if (q.revents & POLLNVAL) {  // (a descriptor that is not open)
      errno = EBADF;
      return -1;
    }
  if (rd) FD_ZERO(rd);
  if (wr) FD_ZERO(wr);
  if (ex) FD_ZERO(ex);
  int count = 0;
  for (const pollfd& q : p) {
    if (rd && (q.revents & (POLLIN | POLLHUP | POLLERR))) FD_SET(q.fd, rd), ++count;
    if (wr && (q.revents & (POLLOUT | POLLERR))) FD_SET(q.fd, wr), ++count;
    if (ex && (q.revents & POLLPRI)) FD_SET(q.fd, ex), ++count;
  }
  return count;
}

}  // namespace

extern "C" {

int poll(struct pollfd* fds, nfds_t n, int timeout) {
  if (!on()) return next<decltype(&poll)>("poll")(fds, n, timeout);
  return poll_ns(fds, n, ns_of_ms(timeout));
}

int ppoll(struct pollfd* fds, nfds_t n, const timespec* ts, const sigset_t* mask) {
  if (!on()) return next<decltype(&ppoll)>("ppoll")(fds, n, ts, mask);
  return poll_ns(fds, n, ns_of(ts), mask);
}

int select(int nfds, fd_set* rd, fd_set* wr, fd_set* ex, struct timeval* tv) {
  if (!on()) return next<decltype(&select)>("select")(nfds, rd, wr, ex, tv);
  const int r = select_ns(nfds, rd, wr, ex, ns_of(tv));
  if (tv && r == 0) *tv = timeval{0, 0};  // (Linux leaves the time not slept)
  return r;
}

int pselect(int nfds, fd_set* rd, fd_set* wr, fd_set* ex, const timespec* ts,
            const sigset_t* mask) {
  if (!on()) return next<decltype(&pselect)>("pselect")(nfds, rd, wr, ex, ts, mask);
  return select_ns(nfds, rd, wr, ex, ns_of(ts), mask);
}

int epoll_create1(int flags) {
  const int ep = next<decltype(&epoll_create1)>("epoll_create1")(flags);
  if (ep >= 0 && on()) epolls()[ep] = std::make_shared<EpollSet>();
  return ep;
}

int epoll_create(int size) {
  const int ep = next<decltype(&epoll_create)>("epoll_create")(size);
  if (ep >= 0 && on()) epolls()[ep] = std::make_shared<EpollSet>();
  return ep;
}

int epoll_ctl(int ep, int op, int fd, epoll_event* ev) {
  const auto set = epolls().find(ep);
  if (!on() || polled(fd) < 0 || set == epolls().end())
    return next<decltype(&epoll_ctl)>("epoll_ctl")(ep, op, fd, ev);
  EpollSet& watched = *set->second;
  const std::pair<int, int64_t> key{fd, polled(fd)};
  const auto it = watched.find(key);
  if ((op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) && !ev) {
    errno = EFAULT;
    return -1;
  }
  switch (op) {
    case EPOLL_CTL_ADD:
      if (it != watched.end()) {
        errno = EEXIST;
        return -1;
      }
      watched[key] = {*ev, false};
      return 0;
    case EPOLL_CTL_MOD:
      if (it == watched.end()) {
        errno = ENOENT;
        return -1;
      }
      it->second = {*ev, false};  // (a one-shot is armed again)
      return 0;
    case EPOLL_CTL_DEL:
      if (it == watched.end()) {
        errno = ENOENT;
        return -1;
      }
      watched.erase(it);
      return 0;
    default:
      errno = EINVAL;
      return -1;
  }
}

// A wait on an instance is a poll (above) over the sockets and channels it watches and the
// instance's own descriptor, which is readable when one of the kernel's descriptors is ready:
// the first wait in simulated time, the others are looked at every kPollQuantumNs (with none of
// the first, up to the timeout in simulated time). Readiness is level-triggered
// (a socket with bytes left is reported again, EPOLLET or not: a program that reads until EAGAIN
// sees the same).
// epoll_pwait and epoll_pwait2 are the same wait (their signal masks in place while it lasts),
// to the nanosecond of epoll_pwait2's timeout; a timer's signal ends it as it ends a poll.
}  // extern "C"

namespace {

// Whether epoll's wait on `ep` is the simulated one: an instance made by this process.
bool epoll_ours(int ep) {
  if (!on()) return false;
  return epolls().count(ep) != 0;
}

// epoll's wait on an instance that watches sockets (epoll_ours).
int epoll_wait_ns(int ep, epoll_event* out, int max, int64_t timeout_ns,
                  const sigset_t* mask = nullptr) {
  static const auto real = next<decltype(&epoll_wait)>("epoll_wait");
  const auto set = epolls().find(ep);
  if (max <= 0 || !out) {
    errno = EINVAL;
    return -1;
  }
  const WaitMask masked(mask);
  std::vector<std::pair<std::pair<int, int64_t>, Watched*>> socks;
  for (auto& [key, w] : *set->second)
    if (!w.fired) socks.push_back({key, &w});
  if (socks.empty()) {
    // Every socket's one-shot has fired: the kernel's descriptors alone, every kPollQuantumNs
    // of simulated time up to the timeout.
    const uint64_t deadline =
        timeout_ns < 0 ? UINT64_MAX : g_now_ns + g_local_ns + uint64_t(timeout_ns);
    const KeyWaiter waiter(rnic::exec::kKernelFdKey);  // (as poll_ns's)
    for (;;) {
      const Looking look(deadline == UINT64_MAX && !alarm_ends_waits());
      settle();
      const uint64_t seen = wakes_of(rnic::exec::kKernelFdKey);
      const int k = real(ep, out, max, 0);
      const uint64_t now = g_now_ns + g_local_ns;
      if (k != 0 || now >= deadline) return k;
      const uint64_t nap = std::min<uint64_t>(kPollQuantumNs, deadline - now);
      if (sim_sleep(nap, rnic::exec::kKernelFdKey, seen)) {  // the timer's signal came first
        errno = EINTR;
        return -1;
      }
    }
  }
  std::vector<pollfd> p;
  std::vector<int64_t> ids;  // (a registered descriptor may be closed: its socket is polled)
  for (const auto& [key, w] : socks) {
    p.push_back({key.first, short(w->ev.events & (EPOLLIN | EPOLLOUT | EPOLLPRI)), 0});
    ids.push_back(key.second);
  }
  p.push_back({ep, POLLIN, 0});
  ids.push_back(-1);
  const int r = poll_ns(p.data(), p.size(), timeout_ns, nullptr, ids.data());  // (mask in place)
  if (r <= 0) return r;
  int n = 0;
  for (size_t i = 0; i < socks.size() && n < max; ++i) {
    const short re = p[i].revents;
    if (!re) continue;
    Watched& w = *socks[i].second;
    uint32_t e = 0;
    for (const auto& [pe, ee] : {std::pair<short, uint32_t>{POLLIN, EPOLLIN},
                                 {POLLOUT, EPOLLOUT},
                                 {POLLPRI, EPOLLPRI},
                                 {POLLHUP, EPOLLHUP},
                                 {POLLERR, EPOLLERR}})
      if (re & pe) e |= ee;
    out[n].events = e;
    out[n].data = w.ev.data;
    w.fired = (w.ev.events & EPOLLONESHOT) != 0;
    ++n;
  }
  if (n < max && p.back().revents) {
    const int k = real(ep, out + n, max - n, 0);
    if (k > 0) n += k;
  }
  return n;
}

}  // namespace

extern "C" {

int epoll_wait(int ep, epoll_event* out, int max, int timeout) {
  if (!epoll_ours(ep)) return next<decltype(&epoll_wait)>("epoll_wait")(ep, out, max, timeout);
  return epoll_wait_ns(ep, out, max, ns_of_ms(timeout));
}

int epoll_pwait(int ep, epoll_event* out, int max, int timeout, const sigset_t* mask) {
  if (!epoll_ours(ep))
    return next<decltype(&epoll_pwait)>("epoll_pwait")(ep, out, max, timeout, mask);
  return epoll_wait_ns(ep, out, max, ns_of_ms(timeout), mask);
}

int epoll_pwait2(int ep, epoll_event* out, int max, const timespec* ts, const sigset_t* mask) {
  if (!epoll_ours(ep)) return next<decltype(&epoll_pwait2)>("epoll_pwait2")(ep, out, max, ts, mask);
  return epoll_wait_ns(ep, out, max, ns_of(ts), mask);
}

int setsockopt(int fd, int level, int name, const void* val, socklen_t len) {
  if (vsock(fd) < 0) return next<decltype(&setsockopt)>("setsockopt")(fd, level, name, val, len);
  return 0;  // options (SO_REUSEADDR, TCP_NODELAY, ...) do not change the modelled stream
}

namespace {
// A node (a host's name or a dotted address; none: `none`) and a service (a port number) as the
// management network knows them: 0, or getaddrinfo's error.
int resolve(const char* node, const char* service, uint32_t none, uint32_t* ip, uint16_t* port) {
  *ip = none;
  if (node) {
    int rc = 0;
    Msg a = call(Op::kResolve, Msg().put_str(node), &rc);
    if (rc) return EAI_NONAME;
    *ip = a.get<uint32_t>();
  }
  *port = 0;
  if (service) {
    char* end = nullptr;
    const long v = std::strtol(service, &end, 10);
    if (!end || *end || v < 0 || v > 65535) return EAI_SERVICE;
    *port = uint16_t(v);
  }
  return 0;
}
}  // namespace

int getaddrinfo(const char* node, const char* service, const addrinfo* hints, addrinfo** res) {
  if (!on()) return next<decltype(&getaddrinfo)>("getaddrinfo")(node, service, hints, res);
  const int family = hints ? hints->ai_family : AF_UNSPEC;
  if (family != AF_UNSPEC && family != AF_INET) return EAI_FAMILY;
  const int type = hints && hints->ai_socktype ? hints->ai_socktype : SOCK_STREAM;
  if (type != SOCK_STREAM && type != SOCK_DGRAM) return EAI_SOCKTYPE;
  uint32_t ip = 0;  // passive: any address
  uint16_t port = 0;
  const bool passive = hints && (hints->ai_flags & AI_PASSIVE);
  if (int e = resolve(node, service, passive ? 0 : 0x7F000001u, &ip, &port)) return e;
  struct Block {
    addrinfo ai;
    sockaddr_in sa;
  };
  auto* b = static_cast<Block*>(std::calloc(1, sizeof(Block)));
  if (!b) return EAI_MEMORY;
  b->sa.sin_family = AF_INET;
  b->sa.sin_addr.s_addr = htonl(ip);
  b->sa.sin_port = htons(port);
  b->ai.ai_flags = hints ? hints->ai_flags : 0;
  b->ai.ai_family = AF_INET;
  b->ai.ai_socktype = type;
  b->ai.ai_protocol = type == SOCK_DGRAM ? IPPROTO_UDP : IPPROTO_TCP;
  b->ai.ai_addrlen = sizeof b->sa;
  b->ai.ai_addr = reinterpret_cast<sockaddr*>(&b->sa);
  our_addrinfo().insert(&b->ai);
  *res = &b->ai;
  return 0;
}

void freeaddrinfo(addrinfo* ai) {
  if (our_addrinfo().erase(ai)) {
    std::free(ai);  // the block starts with it
    return;
  }
  next<decltype(&freeaddrinfo)>("freeaddrinfo")(ai);
}

// The older resolver calls, by the same names and addresses: gethostbyname and _r,
// gethostbyname2 (AF_INET), gethostbyaddr, and getnameinfo (a host's address gives its name).
}  // extern "C"
namespace {
// A hostent for one IPv4 address in buf (its strings and lists after it); nullptr (ERANGE) if
// buf is too small.
hostent* fill_host(hostent* h, char* buf, size_t len, const char* name, uint32_t ip) {
  const size_t n = std::strlen(name) + 1;
  const size_t need = n + 3 * sizeof(char*) + sizeof(in_addr) + alignof(char*);
  if (len < need) return nullptr;
  char* p = buf;
  auto** lists = reinterpret_cast<char**>((reinterpret_cast<uintptr_t>(p) + alignof(char*) - 1) &
                                          ~(uintptr_t(alignof(char*)) - 1));
  auto* addr = reinterpret_cast<in_addr*>(lists + 3);
  char* nm = reinterpret_cast<char*>(addr + 1);
  std::memcpy(nm, name, n);
  addr->s_addr = htonl(ip);
  lists[0] = nullptr;                        // no aliases
  lists[1] = reinterpret_cast<char*>(addr);  // the one address
  lists[2] = nullptr;
  h->h_name = nm;
  h->h_aliases = lists;
  h->h_addrtype = AF_INET;
  h->h_length = sizeof(in_addr);
  h->h_addr_list = lists + 1;
  return h;
}
// The name of the host at ip ("" if none).
std::string name_of_ip(uint32_t ip) {
  int rc = 0;
  Msg a = call(Op::kResolveAddr, Msg().put(ip), &rc);
  return rc ? std::string() : a.get_str();
}
struct HostBox {
  hostent h;
  char buf[512];
};
}  // namespace
extern "C" {

struct hostent* gethostbyname(const char* name) {
  if (!on()) return next<decltype(&gethostbyname)>("gethostbyname")(name);
  static thread_local HostBox b;
  uint32_t ip = 0;
  uint16_t port = 0;
  if (!name || resolve(name, nullptr, 0, &ip, &port) ||
      !fill_host(&b.h, b.buf, sizeof b.buf, name, ip)) {
    h_errno = HOST_NOT_FOUND;
    return nullptr;
  }
  return &b.h;
}

struct hostent* gethostbyname2(const char* name, int af) {
  if (!on()) return next<decltype(&gethostbyname2)>("gethostbyname2")(name, af);
  if (af != AF_INET) {
    h_errno = NO_DATA;
    return nullptr;
  }
  return gethostbyname(name);
}

int gethostbyname_r(const char* name, struct hostent* ret, char* buf, size_t len,
                    struct hostent** result, int* err) {
  if (!on())
    return next<decltype(&gethostbyname_r)>("gethostbyname_r")(name, ret, buf, len, result, err);
  *result = nullptr;
  uint32_t ip = 0;
  uint16_t port = 0;
  if (!name || resolve(name, nullptr, 0, &ip, &port)) {
    *err = HOST_NOT_FOUND;
    return 0;
  }
  if (!fill_host(ret, buf, len, name, ip)) {
    *err = NETDB_INTERNAL;
    return ERANGE;
  }
  *result = ret;
  return 0;
}

struct hostent* gethostbyaddr(const void* addr, socklen_t len, int type) {
  if (!on()) return next<decltype(&gethostbyaddr)>("gethostbyaddr")(addr, len, type);
  static thread_local HostBox b;
  if (type != AF_INET || len < socklen_t(sizeof(in_addr))) {
    h_errno = HOST_NOT_FOUND;
    return nullptr;
  }
  const uint32_t ip = ntohl(static_cast<const in_addr*>(addr)->s_addr);
  const std::string n = name_of_ip(ip);
  if (n.empty() || !fill_host(&b.h, b.buf, sizeof b.buf, n.c_str(), ip)) {
    h_errno = HOST_NOT_FOUND;
    return nullptr;
  }
  return &b.h;
}

int getnameinfo(const struct sockaddr* sa, socklen_t salen, char* host, socklen_t hostlen,
                char* serv, socklen_t servlen, int flags) {
  uint32_t ip = 0;
  uint16_t port = 0;
  if (!on() || !addr_of(sa, salen, &ip, &port))
    return next<decltype(&getnameinfo)>("getnameinfo")(sa, salen, host, hostlen, serv, servlen,
                                                       flags);
  if (host && hostlen) {
    std::string n = (flags & NI_NUMERICHOST) ? std::string() : name_of_ip(ip);
    if (n.empty()) {
      if (flags & NI_NAMEREQD) return EAI_NONAME;
      char dotted[INET_ADDRSTRLEN];
      const in_addr a{htonl(ip)};
      n = inet_ntop(AF_INET, &a, dotted, sizeof dotted);
    }
    if (n.size() + 1 > hostlen) return EAI_OVERFLOW;
    std::memcpy(host, n.c_str(), n.size() + 1);
  }
  if (serv && servlen) {  // (the machine's services file names the ports)
    const servent* se = (flags & NI_NUMERICSERV)
                            ? nullptr
                            : getservbyport(htons(port), (flags & NI_DGRAM) ? "udp" : "tcp");
    const int w = se ? std::snprintf(serv, servlen, "%s", se->s_name)
                     : std::snprintf(serv, servlen, "%u", unsigned(port));
    if (w < 0 || socklen_t(w) + 1 > servlen) return EAI_OVERFLOW;
  }
  return 0;
}

// The program's SIGSEGV handler is kept aside: the cycle counter's trap stays first.
int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  using Sigaction = int (*)(int, const struct sigaction*, struct sigaction*);
  static const auto real = reinterpret_cast<Sigaction>(dlsym(RTLD_NEXT, "sigaction"));
  if (!on() || sig != SIGSEGV) return real(sig, act, old);
  if (old) {
    if (g_program_segv_set) {
      *old = g_program_segv;
    } else {
      *old = {};
      old->sa_handler = SIG_DFL;
    }
  }
  if (act) {
    g_program_segv = *act;
    g_program_segv_set = true;
  }
  return 0;
}

// /proc/cpuinfo as the process reads it: one CPU at host.cpu_mhz (its cycle counter's rate).
FILE* fopen(const char* path, const char* mode) {
  using Fopen = FILE* (*)(const char*, const char*);
  static const auto real = reinterpret_cast<Fopen>(dlsym(RTLD_NEXT, "fopen"));
  if (!on() || !path || std::strcmp(path, "/proc/cpuinfo") != 0) return real(path, mode);
  char text[512];
  const int n = std::snprintf(text, sizeof text,
                              "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: rnicsim "
                              "host CPU\ncpu MHz\t\t: %lld.000\nflags\t\t: fpu tsc constant_tsc "
                              "nonstop_tsc\n\n",
                              static_cast<long long>(g_cpu_mhz));
  const int fd = memfd_create("cpuinfo", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (syscall(SYS_write, fd, text, size_t(n)) != n || lseek(fd, 0, SEEK_SET) != 0) {
    syscall(SYS_close, fd);
    return nullptr;
  }
  return fdopen(fd, "r");
}

// A thread is about to start: from now on the simulator serves the process's threads side by
// side and moves simulated time only while all of them wait (sim/exec/exec_process.cc).
int pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  if (!on()) return real(t, attr, fn, arg);
  int rc = 0;
  call(Op::kThreadCreate, Msg(), &rc);
  g_spawned = 1;
  // Its end (a return, pthread_exit, a cancellation) wakes a timed join of it.
  struct Start {
    void* (*fn)(void*);
    void* arg;
  };
  auto* st = new Start{fn, arg};
  const int r = real(
      t, attr,
      [](void* p) -> void* {
        const Start s = *static_cast<Start*>(p);
        delete static_cast<Start*>(p);
        struct End {
          ~End() { wake(uint64_t(pthread_self())); }
        } end;
        return s.fn(s.arg);
      },
      st);
  if (r != 0) delete st;
  return r;
}

// Timed waits of threads (a condition variable's, a semaphore's) keep simulated time: their
// deadlines are read on the simulated clocks, and the thread waits in slices of kWaitSliceNs of
// simulated time, looking between them for a signal (pthread_cond_signal or _broadcast, which
// count here) or a post. A condition variable's or a semaphore's wait is keyed (KeyWaiter): the
// signal or post ends it at once. A wait without a deadline is the kernel's (a thread asleep
// there).
namespace {
constexpr uint64_t kWaitSliceNs = 10000;

// The nanoseconds from now to `abstime` on clock `id` (simulated), 0 if it has passed; false if
// the clock or the time is not one a timed wait takes.
bool left_until(clockid_t id, const timespec* abstime, uint64_t* left) {
  if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000) return false;
  uint64_t base;
  if (id == CLOCK_REALTIME)
    base = kEpochS * 1000000000ull;
  else if (id == CLOCK_MONOTONIC)
    base = kBootNs;
  else
    return false;
  const uint64_t now = base + g_now_ns + g_local_ns;
  const uint64_t at = abstime->tv_sec < 0
                          ? 0
                          : uint64_t(abstime->tv_sec) * 1000000000ull + uint64_t(abstime->tv_nsec);
  *left = at > now ? at - now : 0;
  return true;
}

// A timed wait, lock or join: tries it (EBUSY: not yet), then sleeps a slice (keyed by `key`,
// if not 0) and tries again, up to the deadline (ETIMEDOUT).
extern "C++" {
template <class Try>
int try_until(clockid_t id, const timespec* at, Try try_once, uint64_t key = 0) {
  for (;;) {
    const uint64_t seen = key ? wakes_of(key) : 0;
    const int r = try_once();
    if (r != EBUSY) return r;
    uint64_t left = 0;
    if (!left_until(id, at, &left)) return EINVAL;
    if (left == 0) return ETIMEDOUT;
    int rc = 0;
    Msg m;
    m.put(std::min(left, kWaitSliceNs));
    if (key) m.put(key).put(seen);
    call(Op::kSleep, std::move(m), &rc);
    settle();
  }
}

// try_until keyed by obj (a semaphore, a lock): its post or unlock ends a slice at once.
template <class T, class Try>
int keyed_until(clockid_t id, const timespec* at, const T* obj, Try try_once) {
  const KeyWaiter waiter(key_of(obj));
  return try_until(id, at, try_once, key_of(obj));
}
}

int cond_wait_until(pthread_cond_t* c, pthread_mutex_t* m, clockid_t id, const timespec* at) {
  uint64_t left = 0;
  if (!left_until(id, at, &left)) return EINVAL;
  const uint64_t key = key_of(c);
  const KeyWaiter waiter(key);
  const uint64_t seen = wakes_of(key);
  if (left == 0) return ETIMEDOUT;
  pthread_mutex_unlock(m);
  const int r = try_until(
      id, at, [key, seen] { return wakes_of(key) != seen ? 0 : EBUSY; }, key);
  pthread_mutex_lock(m);
  return r;
}

int sem_wait_until(sem_t* sem, clockid_t id, const timespec* at) {
  static const auto trywait = reinterpret_cast<int (*)(sem_t*)>(dlsym(RTLD_NEXT, "sem_trywait"));
  const int r = keyed_until(id, at, sem, [sem] {
    if (trywait(sem) == 0) return 0;
    return errno == EAGAIN ? EBUSY : errno;
  });
  if (r == 0) return 0;
  errno = r;
  return -1;
}
}  // namespace

// A lock's timed wait is keyed by the lock (its unlock, interposed below, wakes it), a join's
// by the thread (its end wakes it: pthread_create's start).
int pthread_mutex_timedlock(pthread_mutex_t* m, const timespec* at) {
  if (!on()) return next<decltype(&pthread_mutex_timedlock)>("pthread_mutex_timedlock")(m, at);
  return keyed_until(CLOCK_REALTIME, at, m, [m] { return pthread_mutex_trylock(m); });
}
int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t id, const timespec* at) {
  if (!on()) return next<decltype(&pthread_mutex_clocklock)>("pthread_mutex_clocklock")(m, id, at);
  return keyed_until(id, at, m, [m] { return pthread_mutex_trylock(m); });
}
int pthread_rwlock_timedrdlock(pthread_rwlock_t* l, const timespec* at) {
  if (!on())
    return next<decltype(&pthread_rwlock_timedrdlock)>("pthread_rwlock_timedrdlock")(l, at);
  return keyed_until(CLOCK_REALTIME, at, l, [l] { return pthread_rwlock_tryrdlock(l); });
}
int pthread_rwlock_timedwrlock(pthread_rwlock_t* l, const timespec* at) {
  if (!on())
    return next<decltype(&pthread_rwlock_timedwrlock)>("pthread_rwlock_timedwrlock")(l, at);
  return keyed_until(CLOCK_REALTIME, at, l, [l] { return pthread_rwlock_trywrlock(l); });
}
int pthread_timedjoin_np(pthread_t t, void** ret, const timespec* at) {
  if (!on()) return next<decltype(&pthread_timedjoin_np)>("pthread_timedjoin_np")(t, ret, at);
  const uint64_t key = uint64_t(t);
  const KeyWaiter waiter(key);
  const uint64_t seen = wakes_of(key);
  return try_until(
      CLOCK_REALTIME, at,
      [t, ret, key, seen] {
        // Its end announced, the thread is on its way out: a join in its kernel takes it.
        if (wakes_of(key) != seen) return pthread_join(t, ret);
        return pthread_tryjoin_np(t, ret);
      },
      key);
}

int pthread_mutex_unlock(pthread_mutex_t* m) {
  const int r = real_unlock()(m);
  if (r == 0 && g_key_waiters.load(std::memory_order_relaxed) > 0) wake(key_of(m));
  return r;
}
int pthread_rwlock_unlock(pthread_rwlock_t* l) {
  using Fn = int (*)(pthread_rwlock_t*);
  static std::atomic<Fn> real{nullptr};
  Fn f = real.load(std::memory_order_relaxed);
  if (!f) real.store(f = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_rwlock_unlock")));
  const int r = f(l);
  if (r == 0 && g_key_waiters.load(std::memory_order_relaxed) > 0) wake(key_of(l));
  return r;
}

int pthread_cond_signal(pthread_cond_t* c) {
  const int r = next<decltype(&pthread_cond_signal)>("pthread_cond_signal")(c);
  if (on()) wake(key_of(c));
  return r;
}
int pthread_cond_broadcast(pthread_cond_t* c) {
  const int r = next<decltype(&pthread_cond_broadcast)>("pthread_cond_broadcast")(c);
  if (on()) wake(key_of(c));
  return r;
}
int sem_post(sem_t* sem) {
  const int r = next<decltype(&sem_post)>("sem_post")(sem);
  if (r == 0 && on()) wake(key_of(sem));
  return r;
}

// Signals within the process (to itself, to one of its threads) end its waits for a signal at
// the sender's simulated time (wake). The process sees its simulated pid (getpid): a kill or
// sigqueue of it, of 0 or of its group reaches the process itself; of another simulated
// process of the same host, that process (the simulator sends it: Op::kKill); any other pid
// answers ESRCH (a real pid of that number is some other process of this machine's).
namespace {
bool own_pid(pid_t pid) { return pid == g_vpid || pid == 0 || pid == -g_vpid; }
int sent(int r, int sig) {
  if (r == 0 && sig != 0) wake(rnic::exec::kSignalKey);
  return r;
}
int kill_other(pid_t pid, int sig, bool queued, const union sigval value) {
  if (pid <= 0) {  // another group, or every process (-1): none the host has for it
    errno = ESRCH;
    return -1;
  }
  int rc = 0;
  call(Op::kKill,
       Msg()
           .put(int32_t(pid))
           .put(int32_t(sig))
           .put(int32_t(queued))
           .put(int64_t(reinterpret_cast<intptr_t>(value.sival_ptr))),
       &rc);
  return rc < 0 ? -1 : 0;
}
}  // namespace
int kill(pid_t pid, int sig) {
  if (!on()) return next<decltype(&kill)>("kill")(pid, sig);
  if (!own_pid(pid)) return kill_other(pid, sig, false, sigval{});
  if (const pid_t tid = to_waiting_thread(sig))
    return sent(int(syscall(SYS_tgkill, real_pid(), tid, sig)), sig);
  return sent(next<decltype(&kill)>("kill")(real_pid(), sig), sig);
}
int sigqueue(pid_t pid, int sig, const union sigval value) {
  if (!on()) return next<decltype(&sigqueue)>("sigqueue")(pid, sig, value);
  if (!own_pid(pid) || pid <= 0) return kill_other(pid, sig, true, value);
  if (const pid_t tid = to_waiting_thread(sig)) {
    siginfo_t si{};  // as sigqueue fills it
    si.si_signo = sig;
    si.si_code = SI_QUEUE;
    si.si_pid = real_pid();
    si.si_uid = getuid();
    si.si_value = value;
    return sent(int(syscall(SYS_rt_tgsigqueueinfo, real_pid(), tid, sig, &si)), sig);
  }
  return sent(next<decltype(&sigqueue)>("sigqueue")(real_pid(), sig, value), sig);
}
int raise(int sig) {
  const int r = next<decltype(&raise)>("raise")(sig);
  return on() ? sent(r, sig) : r;
}
int pthread_kill(pthread_t t, int sig) {
  const int r = next<decltype(&pthread_kill)>("pthread_kill")(t, sig);
  return on() ? sent(r, sig) : r;
}
int pthread_sigqueue(pthread_t t, int sig, const union sigval value) {
  const int r = next<decltype(&pthread_sigqueue)>("pthread_sigqueue")(t, sig, value);
  return on() ? sent(r, sig) : r;
}
int tgkill(pid_t tgid, pid_t tid, int sig) {
  if (!on()) return next<decltype(&tgkill)>("tgkill")(tgid, tid, sig);
  if (tgid != g_vpid) {
    errno = ESRCH;
    return -1;
  }
  return sent(next<decltype(&tgkill)>("tgkill")(real_pid(), tid, sig), sig);
}
int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const timespec* at) {
  if (!on()) return next<decltype(&pthread_cond_timedwait)>("pthread_cond_timedwait")(c, m, at);
  // The variable's clock (pthread_condattr_setclock): glibc keeps it in bit 1 of __wrefs.
  return cond_wait_until(c, m, (c->__data.__wrefs & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME, at);
}
int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t id,
                           const timespec* at) {
  if (!on()) return next<decltype(&pthread_cond_clockwait)>("pthread_cond_clockwait")(c, m, id, at);
  return cond_wait_until(c, m, id, at);
}
int sem_timedwait(sem_t* sem, const timespec* at) {
  if (!on()) return next<decltype(&sem_timedwait)>("sem_timedwait")(sem, at);
  return sem_wait_until(sem, CLOCK_REALTIME, at);
}
int sem_clockwait(sem_t* sem, clockid_t id, const timespec* at) {
  if (!on()) return next<decltype(&sem_clockwait)>("sem_clockwait")(sem, id, at);
  return sem_wait_until(sem, id, at);
}

// A simulated process does not fork: its child would share its one connection to the simulator
// (and run outside simulated time). The process ends, saying so, with exit status 125.
pid_t fork(void) {
  if (!on()) return next<decltype(&fork)>("fork")();
  static const char m[] =
      "rnicsim: fork: a simulated process cannot fork (its child would share its connection to "
      "the simulator); ending the process\n";
  (void)!syscall(SYS_write, 2, m, sizeof m - 1);
  syscall(SYS_exit_group, 125);
  return -1;
}

// --- librdmacm (rdma_cm), served by the simulator's connection manager (sim/exec/cm_net.h) ---

namespace {
using rnic::exec::CmConn;
using rnic::exec::CmEventMsg;

struct CmChannel {
  rdma_event_channel ch;
  int64_t sid;
};
struct CmId {
  rdma_cm_id id;
  int64_t sid;
};
struct CmEventBox {
  rdma_cm_event ev;
  uint8_t pdata[256];
};
std::map<int64_t, CmId*>& cm_ids() {
  static std::map<int64_t, CmId*> m;
  return m;
}
int64_t sid_of(rdma_cm_id* id) { return id ? reinterpret_cast<CmId*>(id)->sid : -1; }
int64_t chan_sid_of(rdma_event_channel* ch) {
  return ch ? reinterpret_cast<CmChannel*>(ch)->sid : -1;
}

// The context the ids are on: the host's card, opened once.
ibv_context* cm_verbs() {
  static ibv_context* c = nullptr;
  if (!c) {
    int n = 0;
    ibv_device** l = ibv_get_device_list(&n);
    if (l && n > 0) c = ibv_open_device(l[0]);
    if (l) ibv_free_device_list(l);
  }
  return c;
}

void set_sin(sockaddr_in* a, uint32_t ip, uint16_t port) {
  *a = sockaddr_in{};
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(ip);
  a->sin_port = htons(port);
}

CmId* new_cm_id(int64_t sid, rdma_event_channel* ch, void* context, rdma_port_space ps) {
  auto* x = new CmId{};
  x->sid = sid;
  x->id.verbs = cm_verbs();
  x->id.channel = ch;
  x->id.context = context;
  x->id.ps = ps;
  x->id.port_num = 1;
  x->id.qp_type = IBV_QPT_RC;
  cm_ids()[sid] = x;
  return x;
}

// An errno answer as librdmacm gives it: -1 with errno set.
int cm_result(int rc) {
  if (rc == 0) return 0;
  errno = rc;
  return -1;
}

// A call about one id and nothing else, answered as librdmacm answers.
int cm_id_call(Op op, rdma_cm_id* id) {
  int rc = 0;
  call(op, Msg().put(sid_of(id)), &rc);
  return cm_result(rc);
}

Msg conn_msg(int64_t sid, const rdma_conn_param* p, uint32_t qpn) {
  CmConn c{};
  c.responder_resources = p ? p->responder_resources : 0;
  c.initiator_depth = p ? p->initiator_depth : 0;
  c.qp_num = qpn;
  Msg m;
  m.put(sid).put(c);
  if (p && p->private_data && p->private_data_len)
    m.put_bytes(p->private_data, p->private_data_len);
  else
    m.put_bytes(nullptr, 0);
  return m;
}
}  // namespace

rdma_event_channel* rdma_create_event_channel(void) {
  PASS(rdma_create_event_channel);
  int rc = 0;
  Msg a = call(Op::kCmCreateChannel, Msg(), &rc);
  if (rc) return nullptr;
  auto* x = new CmChannel{};
  x->sid = a.get<int64_t>();
  x->ch.fd = eventfd(0, EFD_CLOEXEC);  // a descriptor to poll (the simulator's)
  if (x->ch.fd >= 0) vchans()[x->ch.fd] = rnic::exec::kPollCmChannel | x->sid;
  return &x->ch;
}

void rdma_destroy_event_channel(rdma_event_channel* ch) {
  if (!on()) return next<decltype(&rdma_destroy_event_channel)>("rdma_destroy_event_channel")(ch);
  int rc = 0;
  call(Op::kCmDestroyChannel, Msg().put(chan_sid_of(ch)), &rc);
  forget(ch->fd);
  syscall(SYS_close, ch->fd);
  delete reinterpret_cast<CmChannel*>(ch);
}

int rdma_create_id(rdma_event_channel* ch, rdma_cm_id** id, void* context, rdma_port_space ps) {
  PASS(rdma_create_id, ch, id, context, ps);
  if (!ch || !id || ps != RDMA_PS_TCP) return cm_result(ch && id ? EOPNOTSUPP : EINVAL);
  int rc = 0;
  Msg a = call(Op::kCmCreateId, Msg().put(chan_sid_of(ch)), &rc);
  if (rc) return cm_result(rc);
  *id = &new_cm_id(a.get<int64_t>(), ch, context, ps)->id;
  return 0;
}

int rdma_destroy_id(rdma_cm_id* id) {
  PASS(rdma_destroy_id, id);
  int rc = 0;
  call(Op::kCmDestroyId, Msg().put(sid_of(id)), &rc);
  if (rc) return cm_result(rc);
  cm_ids().erase(sid_of(id));
  delete reinterpret_cast<CmId*>(id);
  return 0;
}

int rdma_bind_addr(rdma_cm_id* id, sockaddr* addr) {
  PASS(rdma_bind_addr, id, addr);
  uint32_t ip = 0;
  uint16_t port = 0;
  if (!addr_of(addr, sizeof(sockaddr_in), &ip, &port)) return cm_result(EAFNOSUPPORT);
  int rc = 0;
  Msg a = call(Op::kCmBind, Msg().put(sid_of(id)).put(ip).put(port), &rc);
  if (rc) return cm_result(rc);
  ip = a.get<uint32_t>();
  port = a.get<uint16_t>();
  set_sin(&id->route.addr.src_sin, ip, port);
  return 0;
}

int rdma_listen(rdma_cm_id* id, int backlog) {
  PASS(rdma_listen, id, backlog);
  return cm_id_call(Op::kCmListen, id);
}

int rdma_resolve_addr(rdma_cm_id* id, sockaddr* src, sockaddr* dst, int timeout_ms) {
  PASS(rdma_resolve_addr, id, src, dst, timeout_ms);
  uint32_t ip = 0;
  uint16_t port = 0;
  if (!addr_of(dst, sizeof(sockaddr_in), &ip, &port)) return cm_result(EAFNOSUPPORT);
  int rc = 0;
  Msg a = call(Op::kCmResolveAddr, Msg().put(sid_of(id)).put(ip).put(port), &rc);
  if (rc) return cm_result(rc);
  const uint32_t sip = a.get<uint32_t>();
  const uint16_t sport = a.get<uint16_t>();
  set_sin(&id->route.addr.src_sin, sip, sport);
  set_sin(&id->route.addr.dst_sin, ip, port);
  return 0;
}

int rdma_resolve_route(rdma_cm_id* id, int timeout_ms) {
  PASS(rdma_resolve_route, id, timeout_ms);
  return cm_id_call(Op::kCmResolveRoute, id);
}

int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* attr) {
  PASS(rdma_create_qp, id, pd, attr);
  if (!id || !pd || !attr || id->qp) return cm_result(EINVAL);
  if (!attr->send_cq || !attr->recv_cq) {
    // As librdmacm: CQs of the QP's depths when the program gives none.
    ibv_cq* cq = ibv_create_cq(pd->context, int(attr->cap.max_send_wr + attr->cap.max_recv_wr),
                               nullptr, nullptr, 0);
    if (!cq) return -1;
    if (!attr->send_cq) attr->send_cq = id->send_cq = cq;
    if (!attr->recv_cq) attr->recv_cq = id->recv_cq = cq;
  }
  ibv_qp* qp = ibv_create_qp(pd, attr);
  if (!qp) return -1;
  int rc = 0;
  call(Op::kCmAttachQp, Msg().put(sid_of(id)).put(id_of(qp)), &rc);
  if (rc) {
    ibv_destroy_qp(qp);
    return cm_result(rc);
  }
  id->qp = qp;
  id->pd = pd;
  return 0;
}

int rdma_create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr) {
  PASS(rdma_create_qp_ex, id, attr);
  if (!attr || !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) ||
      (attr->comp_mask & ~uint32_t(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)))
    return cm_result(EOPNOTSUPP);
  ibv_qp_init_attr a{};
  a.qp_context = attr->qp_context;
  a.send_cq = attr->send_cq;
  a.recv_cq = attr->recv_cq;
  a.srq = attr->srq;
  a.cap = attr->cap;
  a.qp_type = attr->qp_type;
  a.sq_sig_all = attr->sq_sig_all;
  const int r = rdma_create_qp(id, attr->pd, &a);
  if (r == 0) attr->cap = a.cap;
  return r;
}

void rdma_destroy_qp(rdma_cm_id* id) {
  if (!on()) return next<decltype(&rdma_destroy_qp)>("rdma_destroy_qp")(id);
  if (!id || !id->qp) return;
  int rc = 0;
  call(Op::kCmDetachQp, Msg().put(sid_of(id)), &rc);
  ibv_destroy_qp(id->qp);
  id->qp = nullptr;
}

int rdma_connect(rdma_cm_id* id, rdma_conn_param* p) {
  PASS(rdma_connect, id, p);
  if (!id || !id->qp) return cm_result(EINVAL);  // a QP of the id's own (rdma_create_qp)
  int rc = 0;
  call(Op::kCmConnect, conn_msg(sid_of(id), p, id->qp->qp_num), &rc);
  return cm_result(rc);
}

int rdma_accept(rdma_cm_id* id, rdma_conn_param* p) {
  PASS(rdma_accept, id, p);
  if (!id || !id->qp) return cm_result(EINVAL);
  int rc = 0;
  call(Op::kCmAccept, conn_msg(sid_of(id), p, id->qp->qp_num), &rc);
  return cm_result(rc);
}

int rdma_reject(rdma_cm_id* id, const void* pdata, uint8_t len) {
  PASS(rdma_reject, id, pdata, len);
  int rc = 0;
  call(Op::kCmReject, Msg().put(sid_of(id)).put_bytes(pdata, pdata ? len : 0), &rc);
  return cm_result(rc);
}

int rdma_disconnect(rdma_cm_id* id) {
  PASS(rdma_disconnect, id);
  return cm_id_call(Op::kCmDisconnect, id);
}

int rdma_get_cm_event(rdma_event_channel* ch, rdma_cm_event** event) {
  PASS(rdma_get_cm_event, ch, event);
  if (!ch || !event) return cm_result(EINVAL);
  int rc = 0;
  Msg a =
      call(Op::kCmGetEvent, Msg().put(chan_sid_of(ch)).put(int32_t(nonblocking_fd(ch->fd))), &rc);
  if (rc) return cm_result(rc);
  const auto m = a.get<CmEventMsg>();
  size_t plen = 0;
  const uint8_t* pd = a.get_bytes(&plen);
  auto* box = new CmEventBox{};
  rdma_cm_event& e = box->ev;
  e.event = rdma_cm_event_type(m.type);
  e.status = m.status;
  auto find = [](int64_t sid) -> rdma_cm_id* {
    auto it = cm_ids().find(sid);
    return it == cm_ids().end() ? nullptr : &it->second->id;
  };
  e.listen_id = find(m.listen_id);
  e.id = find(m.id);
  if (!e.id && m.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
    // A new id for the connection, on the listener's channel with its context (as librdmacm).
    rdma_cm_id* l = e.listen_id;
    e.id = &new_cm_id(m.id, l ? l->channel : ch, l ? l->context : nullptr, RDMA_PS_TCP)->id;
  }
  if (e.id) {
    set_sin(&e.id->route.addr.src_sin, m.src_ip, m.src_port);
    set_sin(&e.id->route.addr.dst_sin, m.dst_ip, m.dst_port);
    e.id->event = &e;
  }
  const size_t n = pd ? std::min(plen, sizeof box->pdata) : 0;
  if (n) std::memcpy(box->pdata, pd, n);
  e.param.conn.private_data = n ? box->pdata : nullptr;
  e.param.conn.private_data_len = uint8_t(n);
  e.param.conn.responder_resources = m.conn.responder_resources;
  e.param.conn.initiator_depth = m.conn.initiator_depth;
  e.param.conn.qp_num = m.conn.qp_num;
  *event = &e;
  return 0;
}

int rdma_ack_cm_event(rdma_cm_event* event) {
  PASS(rdma_ack_cm_event, event);
  if (!event) return cm_result(EINVAL);
  if (event->id && event->id->event == event) event->id->event = nullptr;
  delete reinterpret_cast<CmEventBox*>(event);
  return 0;
}

// Options (type of service, ACK timeout, ...) have no meaning on the card: accepted.
int rdma_set_option(rdma_cm_id* id, int level, int optname, void* optval, size_t optlen) {
  PASS(rdma_set_option, id, level, optname, optval, optlen);
  return 0;
}

int rdma_getaddrinfo(const char* node, const char* service, const rdma_addrinfo* hints,
                     rdma_addrinfo** res) {
  PASS(rdma_getaddrinfo, node, service, hints, res);
  const bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
  uint32_t ip = 0;
  uint16_t port = 0;
  if (int e = resolve(node, service, 0, &ip, &port)) return e;
  struct Block {
    rdma_addrinfo ai;
    sockaddr_in src, dst;
  };
  auto* b = static_cast<Block*>(std::calloc(1, sizeof(Block)));
  if (!b) return EAI_MEMORY;
  b->ai.ai_flags = hints ? hints->ai_flags : 0;
  b->ai.ai_family = AF_INET;
  b->ai.ai_qp_type = IBV_QPT_RC;
  b->ai.ai_port_space = RDMA_PS_TCP;
  if (passive) {
    set_sin(&b->src, ip, port);
    b->ai.ai_src_addr = reinterpret_cast<sockaddr*>(&b->src);
    b->ai.ai_src_len = sizeof b->src;
  } else {
    set_sin(&b->dst, ip, port);
    b->ai.ai_dst_addr = reinterpret_cast<sockaddr*>(&b->dst);
    b->ai.ai_dst_len = sizeof b->dst;
  }
  *res = &b->ai;
  return 0;
}

void rdma_freeaddrinfo(rdma_addrinfo* res) {
  if (!on()) return next<decltype(&rdma_freeaddrinfo)>("rdma_freeaddrinfo")(res);
  std::free(res);  // one block (rdma_getaddrinfo)
}

// A QP the program made itself and moves by the connection manager's attributes (rping -q):
// not served; the QP on the id (rdma_create_qp) is.
int rdma_init_qp_attr(rdma_cm_id* id, ibv_qp_attr* attr, int* mask) {
  PASS(rdma_init_qp_attr, id, attr, mask);
  return cm_result(refuse("rdma_init_qp_attr"));
}
int rdma_establish(rdma_cm_id* id) {
  PASS(rdma_establish, id);
  return cm_result(refuse("rdma_establish"));
}

}  // extern "C"
