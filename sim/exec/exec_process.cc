#include "sim/exec/exec_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "models/host/driver.h"
#include "models/host/host_wait.h"
#include "models/host/process.h"
#include "models/host/verbs/verbs.h"
#include "models/host/verbs/verbs_internal.h"
#include "sim/exec/exec_abi.h"

namespace rnic::exec {

namespace fs = std::filesystem;

std::string resolve_executable(const std::string& name, std::string* why) {
  auto ok = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) {
    *why = "no program named";
    return "";
  }
  if (name.find('/') != std::string::npos) {
    if (ok(name)) return name;
    *why = fs::exists(name) ? fmt::format("'{}' is not an executable file", name)
                            : fmt::format("'{}' does not exist", name);
    return "";
  }
  std::string dirs = kPath;
  for (size_t at = 0; at <= dirs.size();) {
    const size_t colon = std::min(dirs.find(':', at), dirs.size());
    const std::string p = dirs.substr(at, colon - at) + "/" + name;
    if (ok(p)) return p;
    at = colon + 1;
  }
  *why = fmt::format("'{}' is not an executable on {}", name, kPath);
  return "";
}

std::string preload_library() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const fs::path& p :
       {exe.parent_path() / "librnicsim_exec.so",
        exe.parent_path().parent_path() / "lib" / "rnicsim" / "librnicsim_exec.so"})
    if (fs::is_regular_file(p)) return p.string();
  return "";
}

namespace {

// A blocking socket call's limit (simulated ns, -1: none; a signal of the process's is due then)
// in ps.
uint64_t limit_ps(int64_t ns) { return ns < 0 ? UINT64_MAX : uint64_t(ns) * 1000; }

// The process's CPU time so far (user + system), in seconds; -1 once it is gone.
double cpu_seconds(pid_t pid) {
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t rp = s.rfind(')');
  if (rp == std::string::npos) return -1;
  // Fields after the command: state is field 3; utime and stime are 14 and 15.
  std::istringstream in(s.substr(rp + 2));
  std::string tok;
  double ut = 0, st = 0;
  for (int field = 3; field <= 15 && (in >> tok); ++field) {
    if (field == 14) ut = std::stod(tok);
    if (field == 15) st = std::stod(tok);
  }
  return (ut + st) / double(sysconf(_SC_CLK_TCK));
}

std::string last_line(const std::string& file) {
  std::ifstream f(file);
  std::string line, last;
  while (std::getline(f, line))
    if (!line.empty()) last = line;
  return last;
}

// The simulator's side of one process: its objects, by the ids it was given, and the memory
// it shared. Its threads: the main one's calls are served on the process's simulated thread
// while it is the only one; once another thread calls, each thread's calls are served by a
// simulated thread of its own (a worker), and the process's simulated thread supervises: it
// lets simulated time move only while every thread of the process waits, in a call or asleep
// in its kernel (a futex, a semaphore), and hands the calls that arrived meanwhile to their
// workers in the order the threads first called. A thread asleep can only be woken by another
// of the process's threads, which are all waiting too, so what a run does does not depend on
// how the machine schedules the process's threads.
class Server {
 public:
  Server(int fd, int ctl, pid_t pid, const ExecRun& r) : fd_(fd), ctl_(ctl), pid_(pid), r_(r) {
    servers()[r_.vpid] = this;
  }
  ~Server() {
    for (const auto& [p, len] : maps_) munmap(p, len);
  }
  // Serves calls until the process closes its end. False (with *why) if it was stopped for
  // running too long without a call.
  bool serve(std::string* why);
  bool had_threads() const { return multi_; }
  // The process is gone: its kernel would close its sockets (peers read the end of stream) and
  // its connections (peers see them disconnect); workers still in a call end with it.
  void finish() {
    servers().erase(r_.vpid);
    if (r_.net)
      for (int64_t k : socks_) r_.net->close(k);
    socks_.clear();
    if (r_.cm) {
      for (int64_t i : cm_ids_) r_.cm->destroy_id(i);
      for (int64_t c : cm_chans_) r_.cm->destroy_channel(c);
    }
    cm_ids_.clear();
    cm_chans_.clear();
    ended_ = true;
    for (Thread& t : threads_) t.go->notify();
  }

 private:
  struct Thread {
    pid_t tid = 0;
    int fd = -1;
    enum State { kRunning, kReady, kInCall, kDone } st = kRunning;
    std::vector<uint8_t> raw;  // kReady: its request
    std::vector<int> fds;
    std::unique_ptr<sc_core::sc_event> go;
  };
  // What one wait for the process brought.
  enum class Got { kCall, kThread, kEnded, kStopped };
  Got receive(std::vector<uint8_t>* msg, std::vector<int>* fds, std::string* why);
  bool read_msg(int fd, std::vector<uint8_t>* msg, std::vector<int>* fds);
  void serve_call(int fd, std::vector<uint8_t>& raw, std::vector<int>& fds);
  void answer(int fd, Header h, Msg& body);
  void handle(Op op, Msg& in, const std::vector<int>& fds, Header* h, Msg* out);
  // Several threads.
  bool add_thread();  // a registration on ctl_: its thread and connection, and its worker
  void start_worker(size_t i);
  bool gather(std::string* why);  // false: the process ended (why empty) or was stopped
  bool quiescent();
  bool cpu_guard(double* cpu0, std::string* why);
  template <class T>
  T* find(std::set<uint64_t>& ids, uint64_t id) {
    return ids.count(id) ? reinterpret_cast<T*>(id) : nullptr;
  }
  static uint64_t id(const void* p) { return reinterpret_cast<uint64_t>(p); }

  int fd_, ctl_;
  pid_t pid_;
  const ExecRun& r_;
  std::deque<Thread> threads_;  // several threads: in the order they first called
  bool multi_ = false, ended_ = false;
  sc_core::sc_event answered_;  // a worker answered (its thread runs again)
  // The process's keyed waits (Op::kWake): by key, the wakes its threads announced and the event
  // that ends the sleeps keyed by it.
  struct Keyed {
    uint64_t wakes = 0;
    uint64_t outside = 0;  // (kSignalKey) signals another process sent (Op::kKill)
    sc_core::sc_event ev;
  };
  // The running processes, by their simulated pid (kill between processes of a host).
  static std::map<int, Server*>& servers() {
    static std::map<int, Server*> m;
    return m;
  }
  // A signal from another process of the host: to a thread waiting for one that lets it in (the
  // main thread first), as the kernel would give it to a thread that does not block it (a
  // waiting thread blocks every signal between its looks), else the kernel's choice; the waits
  // for a signal look again at once. -errno, or 0.
  int signal_from(int sig, bool queued, int64_t value, int from_vpid);
  pid_t calling_tid_ = 0;                   // the thread whose call is being served
  std::map<pid_t, uint64_t> signal_waits_;  // threads in a wait for a signal: its mask (bit s-1)
  std::unordered_map<uint64_t, std::unique_ptr<Keyed>> keyed_;
  Keyed& keyed(uint64_t key) {
    std::unique_ptr<Keyed>& k = keyed_[key];
    if (!k) k = std::make_unique<Keyed>();
    return *k;
  }
  host::ProcessContext ctx_;
  std::set<int64_t> socks_;    // its sockets on the management network
  ibv_cq* last_cq_ = nullptr;  // the CQ of the last call if it was a poll, and the empty polls
  int empty_polls_ = 0;        // of it in a row
  std::set<uint64_t> ctxs_, pds_, mrs_, chans_, cqs_, qps_, srqs_;
  // librdmacm: its event channels and ids on the connection manager, each id's QP, and the
  // Read depths its own connect asked for (its ORD once established).
  std::set<int64_t> cm_chans_, cm_ids_;
  std::map<int64_t, ibv_qp*> cm_qp_;
  std::map<int64_t, CmConn> cm_asked_;
  void cm_handle(Op op, Msg& in, Header* h, Msg* out);
  // kSockPoll's look at one item at time t (MgmtNet::poll_one's contract); *waits is set when it
  // added an event to wait on.
  short poll_one(int64_t what, short events, uint64_t t, uint64_t* next,
                 sc_core::sc_event_or_list& evs, bool* waits);
  int cm_connect_qp(ibv_qp* qp, ibv_qp_state to, const MacAddr& peer, uint32_t peer_qpn,
                    uint8_t role, const CmConn& mine, int64_t id);
  std::vector<std::pair<void*, size_t>> maps_;  // the process's shared memory, mapped here
  std::unique_ptr<uint8_t[]> buf_;              // a message as it arrives
};

short Server::poll_one(int64_t what, short events, uint64_t t, uint64_t* next,
                       sc_core::sc_event_or_list& evs, bool* waits) {
  const int64_t x = what & ~kPollKinds;
  switch (what & kPollKinds) {
    case 0:
      if (!r_.net || !socks_.count(x)) return POLLNVAL;  // (not this process's)
      *waits = true;
      return r_.net->poll_one(x, events, t, next, evs);
    case kPollCompChannel: {
      ibv_comp_channel* ch = find<ibv_comp_channel>(chans_, uint64_t(x));
      if (!ch) return POLLNVAL;
      *waits = true;
      evs |= host::channel_event(ch);
      return host::channel_has_event(ch) ? short(events & POLLIN) : 0;
    }
    case kPollAsync: {
      ibv_context* c = find<ibv_context>(ctxs_, uint64_t(x));
      if (!c) return POLLNVAL;
      *waits = true;
      evs |= host::async_event_of(c);
      return host::async_has_event(c) ? short(events & POLLIN) : 0;
    }
    case kPollCmChannel:
      if (!r_.cm || !cm_chans_.count(x)) return POLLNVAL;
      *waits = true;
      return r_.cm->poll_one(x, events, t, next, evs);
    default:
      return POLLNVAL;
  }
}

// Past the first 200 ms of wall time without a call, the process's CPU time is watched: more
// than sim.spin_guard_s of it without a call stops it.
bool Server::cpu_guard(double* cpu0, std::string* why) {
  if (*cpu0 < 0) {
    *cpu0 = cpu_seconds(pid_);
    return true;
  }
  if (r_.cpu_limit_s <= 0) return true;
  const double cpu = cpu_seconds(pid_);
  if (cpu >= 0 && cpu - *cpu0 > r_.cpu_limit_s) {
    *why = fmt::format(
        "it ran {:.1f} s on the CPU without a call the simulator serves (sim.spin_guard_s "
        "is {}); rnicsim stopped it",
        cpu - *cpu0, r_.cpu_limit_s);
    return false;
  }
  return true;
}

bool Server::read_msg(int fd, std::vector<uint8_t>* msg, std::vector<int>* fds) {
  if (!buf_) buf_.reset(new uint8_t[kMaxMsg]);  // not zeroed: recvmsg fills what it returns
  iovec iov{buf_.get(), kMaxMsg};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  std::vector<char> cbuf(CMSG_SPACE(sizeof(int) * 64));
  mh.msg_control = cbuf.data();
  mh.msg_controllen = cbuf.size();
  ssize_t n;
  while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) < 0)
    if (errno != EINTR) return false;
  if (n == 0) return false;  // the process closed its end: it ended
  msg->assign(buf_.get(), buf_.get() + n);
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const int* f = reinterpret_cast<const int*>(CMSG_DATA(c));
      fds->insert(fds->end(), f, f + k);
    }
  return true;
}

// The main thread's next call (or a second thread's first), watching the process's CPU time.
Server::Got Server::receive(std::vector<uint8_t>* msg, std::vector<int>* fds, std::string* why) {
  double cpu0 = -1;
  for (;;) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {ctl_, POLLIN, 0}};
    const int r = poll(p, 2, 200);
    if (r > 0) {
      if (p[1].revents & POLLIN) return Got::kThread;
      return read_msg(fd_, msg, fds) ? Got::kCall : Got::kEnded;
    }
    if (r < 0 && errno != EINTR) return Got::kEnded;
    if (!cpu_guard(&cpu0, why)) return Got::kStopped;
  }
}

void Server::answer(int fd, Header h, Msg& body) {
  std::vector<uint8_t> out(sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  out.insert(out.end(), body.bytes().begin(), body.bytes().end());
  (void)!send(fd, out.data(), out.size(), MSG_NOSIGNAL);
}

void Server::serve_call(int fd, std::vector<uint8_t>& raw, std::vector<int>& fds) {
  Header h{};
  Msg out;
  if (raw.size() < sizeof h) {
    h.ret = -1;
    h.err = EINVAL;
  } else {
    std::memcpy(&h, raw.data(), sizeof h);
    Msg in(std::vector<uint8_t>(raw.begin() + sizeof h, raw.end()));
    const Op op = Op(h.op);
    h.ret = 0;
    h.err = 0;
    // What the process's clock reads added since its last call, spent before this one.
    for (uint64_t ns = std::min<uint64_t>(h.spent_ns, 1ull << 50); ns > 0;) {
      const uint64_t step = std::min(ns, std::max<uint64_t>(r_.sleep_slice_ns, 1000));
      rnic_spend_ns(step);
      if (r_.clock_us) *r_.clock_us += step / 1000;
      ns -= step;
    }
    if (op != Op::kPollCq) last_cq_ = nullptr;
    calling_tid_ = pid_;
    for (const Thread& t : threads_)
      if (t.fd == fd) calling_tid_ = t.tid;
    Counter* counted = (h.flags & kLookAgain) ? r_.looks : r_.calls;
    if (counted) ++*counted;
    handle(op, in, fds, &h, &out);
    if (in.bad()) {  // a short request: refused, whatever it did
      h.ret = h.ret ? h.ret : -1;
      h.err = EINVAL;
    }
  }
  for (int f : fds) close(f);
  fds.clear();
  if (ended_) return;  // the process is gone
  h.now_ns = sc_core::sc_time_stamp().value() / 1000;
  answer(fd, h, out);
}

int Server::signal_from(int sig, bool queued, int64_t value, int from_vpid) {
  if (sig < 0 || sig >= 65) return -EINVAL;
  pid_t to = 0;  // a thread of its that waits for a signal and lets this one in
  if (sig > 0) {
    auto lets_in = [sig](uint64_t mask) { return !((mask >> (sig - 1)) & 1); };
    const auto m = signal_waits_.find(pid_);
    if (m != signal_waits_.end() && lets_in(m->second)) to = pid_;
    for (const auto& [tid, mask] : signal_waits_)
      if (!to && lets_in(mask)) to = tid;
  }
  siginfo_t si{};
  si.si_signo = sig;
  si.si_code = SI_QUEUE;
  si.si_pid = from_vpid;  // (sigqueue's sender as the target sees it; a kill's is rnicsim)
  si.si_uid = getuid();
  si.si_value.sival_ptr = reinterpret_cast<void*>(value);
  long r;
  if (to && queued)
    r = syscall(SYS_rt_tgsigqueueinfo, pid_, to, sig, &si);
  else if (to)
    r = syscall(SYS_tgkill, pid_, to, sig);
  else if (queued)
    r = syscall(SYS_rt_sigqueueinfo, pid_, sig, &si);
  else
    r = ::kill(pid_, sig);
  if (r != 0) return -errno;
  if (sig == 0) return 0;
  Keyed& k = keyed(kSignalKey);
  ++k.outside;
  k.ev.notify(sc_core::SC_ZERO_TIME);
  return 0;
}

bool Server::serve(std::string* why) {
  ctx_ = host::current_process();
  while (!multi_) {
    std::vector<uint8_t> raw;
    std::vector<int> fds;
    switch (receive(&raw, &fds, why)) {
      case Got::kCall: {
        const bool creates =
            raw.size() >= sizeof(Header) &&
            Op(reinterpret_cast<const Header*>(raw.data())->op) == Op::kThreadCreate;
        serve_call(fd_, raw, fds);
        if (!creates) break;
        // A second thread: from now on every thread has a worker, the main one first.
        multi_ = true;
        Thread m;
        m.tid = pid_;
        m.fd = fd_;
        m.go = std::make_unique<sc_core::sc_event>();
        threads_.push_back(std::move(m));
        start_worker(0);
        break;
      }
      case Got::kThread:  // a thread the process started without pthread_create
        *why = "it started a thread without pthread_create (clone): rnicsim stopped it";
        return false;
      case Got::kEnded:
        return true;
      case Got::kStopped:
        return false;
    }
  }
  const sc_core::sc_object* self = sc_core::sc_get_current_process_handle().get_process_object();
  for (;;) {
    if (!gather(why)) return why->empty();
    // What the process waits in (a run that stops now names it): its main thread's call, set
    // by its worker (host::blocked_for); its kernel, if the main thread is asleep there.
    if (threads_[0].st == Thread::kReady)
      host::blocked_calls().erase(self);
    else if (threads_[0].st == Thread::kRunning)
      host::blocked_calls()[self] = "a wait in its kernel (a lock, a join, a condition variable)";
    // The calls that came while the simulation stood still, in the order the threads were
    // created (their thread ids): never in the order the machine ran them.
    std::vector<Thread*> ready;
    for (Thread& t : threads_)
      if (t.st == Thread::kReady) ready.push_back(&t);
    std::sort(ready.begin(), ready.end(),
              [](const Thread* a, const Thread* b) { return a->tid < b->tid; });
    for (Thread* t : ready) {
      t->st = Thread::kInCall;
      t->go->notify();
    }
    sc_core::wait(answered_);
  }
}

bool Server::add_thread() {
  int32_t tid = 0;
  iovec iov{&tid, sizeof tid};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  char cbuf[CMSG_SPACE(sizeof(int))];
  mh.msg_control = cbuf;
  mh.msg_controllen = sizeof cbuf;
  ssize_t n;
  while ((n = recvmsg(ctl_, &mh, MSG_CMSG_CLOEXEC)) < 0)
    if (errno != EINTR) return false;
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  if (n != sizeof tid || !c || c->cmsg_type != SCM_RIGHTS) return n > 0;
  Thread t;
  t.tid = tid;
  std::memcpy(&t.fd, CMSG_DATA(c), sizeof(int));
  t.go = std::make_unique<sc_core::sc_event>();
  threads_.push_back(std::move(t));
  start_worker(threads_.size() - 1);
  return true;
}

// A thread's worker: a simulated thread of the process that serves that thread's calls as the
// supervisor hands them over.
void Server::start_worker(size_t i) {
  sc_core::sc_spawn_options o;
  // The main thread's waits are the process's (the supervisor's, which the run's report names).
  const sc_core::sc_object* process =
      i == 0 ? sc_core::sc_get_current_process_handle().get_process_object() : nullptr;
  sc_core::sc_spawn(
      [this, i, process] {
        host::bind_current_process(ctx_);
        const sc_core::sc_object* self =
            sc_core::sc_get_current_process_handle().get_process_object();
        if (process) host::blocked_for()[self] = process;
        struct Forget {
          const sc_core::sc_object* self;
          ~Forget() { host::blocked_for().erase(self); }
        } forget{process ? self : nullptr};
        for (;;) {
          Thread& t = threads_[i];
          while (t.st != Thread::kInCall && !ended_) sc_core::wait(*t.go);
          if (ended_) return;
          serve_call(t.fd, t.raw, t.fds);
          if (ended_) return;
          t.st = Thread::kRunning;
          answered_.notify(sc_core::SC_ZERO_TIME);
        }
      },
      sc_core::sc_gen_unique_name("exec_thread"), &o);
}

namespace {
// The signals pending for a thread (bit s-1: signal s): its own and its process's, from
// /proc/PID/task/TID/status.
uint64_t pending_signals(pid_t pid, pid_t tid) {
  std::ifstream f(fmt::format("/proc/{}/task/{}/status", pid, tid));
  std::string line;
  uint64_t p = 0;
  while (std::getline(f, line))
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0)
      p |= std::strtoull(line.c_str() + 7, nullptr, 16);
  return p;
}

// A task's scheduling state letter (/proc/PID/task/TID/stat): R running, S asleep, ...;
// 0 when it is gone.
char task_state(pid_t pid, pid_t tid) {
  char path[64], buf[512];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/stat", int(pid), int(tid));
  const int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0) return 0;
  const ssize_t n = read(f, buf, sizeof buf - 1);
  close(f);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}
std::vector<pid_t> tasks(pid_t pid) {
  std::vector<pid_t> v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fmt::format("/proc/{}/task", pid), ec))
    v.push_back(pid_t(std::atoi(e.path().filename().c_str())));
  return v;
}
}  // namespace

// Every thread of the process waits: in a call (its request here), or asleep in its kernel.
bool Server::quiescent() {
  // A main thread that has ended: the process is exiting (its other threads die), and its end
  // of the connection closes soon.
  const char main_st = task_state(pid_, pid_);
  if (main_st == 0 || main_st == 'Z' || main_st == 'X') return false;
  for (pid_t tid : tasks(pid_)) {
    auto it = std::find_if(threads_.begin(), threads_.end(),
                           [tid](const Thread& t) { return t.tid == tid; });
    if (it != threads_.end() && it->st != Thread::kRunning) continue;
    const char st = task_state(pid_, tid);
    if (st != 'S' && st != 0 && st != 'Z' && st != 'X') return false;
  }
  return true;
}

// Waits (the simulation stopped) until every thread of the process waits, taking the calls
// and threads that arrive meanwhile.
bool Server::gather(std::string* why) {
  double cpu0 = -1;
  auto last_check = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<pollfd> p{{ctl_, POLLIN, 0}};
    std::vector<size_t> who{SIZE_MAX};
    for (size_t i = 0; i < threads_.size(); ++i)
      if (threads_[i].st == Thread::kRunning) {
        p.push_back({threads_[i].fd, POLLIN, 0});
        who.push_back(i);
      }
    // Without a wait first: a process whose threads all wait is seen at once. With nothing to
    // take and a thread running, this thread sleeps a little (the process shares its CPU).
    int r = poll(p.data(), p.size(), 0);
    if (r == 0 && !quiescent()) {
      const timespec nap{0, 20000};
      r = ppoll(p.data(), p.size(), &nap, nullptr);
    } else if (r == 0) {
      // Every thread waits; a call sent while the states were read is taken first.
      for (pollfd& q : p) q.revents = 0;
      if (poll(p.data(), p.size(), 0) == 0) return true;
      continue;
    }
    if (r < 0 && errno != EINTR) return false;
    bool got = false;
    for (size_t k = 0; r > 0 && k < p.size(); ++k) {
      if (!(p[k].revents & (POLLIN | POLLHUP))) continue;
      got = true;
      if (who[k] == SIZE_MAX) {
        if (!add_thread()) return false;
        continue;
      }
      Thread& t = threads_[who[k]];
      t.raw.clear();
      t.fds.clear();
      if (read_msg(t.fd, &t.raw, &t.fds)) {
        t.st = Thread::kReady;
      } else {
        t.st = Thread::kDone;
        if (who[k] == 0) return false;  // the main thread's end closed: the process ended
      }
    }
    if (got) {
      cpu0 = -1;
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_check > std::chrono::milliseconds(200)) {
      last_check = now;
      if (!cpu_guard(&cpu0, why)) return false;
    }
  }
}

namespace {
ibv_gid gid_of(const MacAddr& m) {  // the card's GID 0, as ibv_query_gid gives it
  ibv_gid g{};
  g.raw[0] = 0xfe;
  g.raw[1] = 0x80;
  g.raw[8] = m[0] ^ 0x02;
  g.raw[9] = m[1];
  g.raw[10] = m[2];
  g.raw[11] = 0xff;
  g.raw[12] = 0xfe;
  g.raw[13] = m[3];
  g.raw[14] = m[4];
  g.raw[15] = m[5];
  return g;
}
}  // namespace

// The QP of a connection to RTR (towards the peer's card; its QP number, when known) or on to
// RTS, with the Read depths the program asked for (at least 1, at most the card's), as the
// kernel's connection manager moves it.
int Server::cm_connect_qp(ibv_qp* qp, ibv_qp_state to, const MacAddr& peer, uint32_t peer_qpn,
                          uint8_t role, const CmConn& mine, int64_t id) {
  const rnic::abi::CardCaps& caps = host::context_driver(qp->context).caps();
  auto depth = [](uint32_t v, int64_t most) { return uint8_t(std::clamp<int64_t>(v, 1, most)); };
  ibv_qp_attr a{};
  a.qp_state = to;
  a.dest_qp_num = peer_qpn;
  int mask = IBV_QP_STATE | IBV_QP_DEST_QPN;
  if (to == IBV_QPS_RTR) {
    a.ah_attr.is_global = 1;
    a.ah_attr.port_num = 1;
    a.ah_attr.grh.dgid = gid_of(peer);
    a.max_dest_rd_atomic = depth(mine.responder_resources, caps.ird);
    mask |= IBV_QP_AV | IBV_QP_MAX_DEST_RD_ATOMIC;
  } else {
    a.max_rd_atomic = depth(mine.initiator_depth, caps.ord);
    a.timeout = 14;  // the Read Response timer perftest and librdmacm leave by default
    a.retry_cnt = 7;
    mask |= IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT;
  }
  // The connection's ports are the connection manager's: its source and destination (an
  // accepted request's id has the listener's port as source).
  return host::cm_modify_qp(qp, &a, mask, role, r_.cm->src(id).port, r_.cm->dst(id).port);
}

void Server::cm_handle(Op op, Msg& in, Header* h, Msg* out) {
  auto rc = [h](int r) {
    h->ret = r;
    h->err = r;
  };
  CmNet* cm = r_.cm;
  if (!cm) return rc(ENODEV);
  if (op == Op::kCmCreateChannel) {
    const int64_t c = cm->create_channel();
    cm_chans_.insert(c);
    out->put(c);
    return;
  }
  const int64_t x = in.get<int64_t>();  // a channel or an id
  const bool chan_op =
      op == Op::kCmDestroyChannel || op == Op::kCmCreateId || op == Op::kCmGetEvent;
  if (in.bad() || (chan_op ? !cm_chans_.count(x) : !cm_ids_.count(x))) return rc(EINVAL);
  auto conn = [&in](CmParam* p) {
    const auto c = in.get<CmConn>();
    size_t n = 0;
    const uint8_t* d = in.get_bytes(&n);
    p->responder_resources = c.responder_resources;
    p->initiator_depth = c.initiator_depth;
    p->qpn = c.qp_num;
    if (d) p->private_data.assign(d, d + n);
    return c;
  };
  switch (op) {
    case Op::kCmDestroyChannel:
      cm->destroy_channel(x);
      cm_chans_.erase(x);
      return rc(0);
    case Op::kCmCreateId: {
      const int64_t i = cm->create_id(x, r_.ip, r_.mac);
      if (i < 0) return rc(EINVAL);
      cm_ids_.insert(i);
      out->put(i);
      return rc(0);
    }
    case Op::kCmDestroyId:
      cm_qp_.erase(x);
      cm_ids_.erase(x);
      return rc(cm->destroy_id(x));
    case Op::kCmBind: {
      const uint32_t ip = in.get<uint32_t>();
      const uint16_t port = in.get<uint16_t>();
      if (int e = cm->bind(x, ip, port)) return rc(e);
      out->put(cm->src(x).ip).put(cm->src(x).port);
      return rc(0);
    }
    case Op::kCmListen:
      return rc(cm->listen(x));
    case Op::kCmResolveAddr: {
      const uint32_t ip = in.get<uint32_t>();
      const uint16_t port = in.get<uint16_t>();
      MacAddr mac{};
      const bool found = r_.mac_of_ip && r_.mac_of_ip(ip, &mac);
      if (int e = cm->resolve_addr(x, ip, port, found, mac)) return rc(e);
      out->put(cm->src(x).ip).put(cm->src(x).port);
      return rc(0);
    }
    case Op::kCmResolveRoute:
      return rc(cm->resolve_route(x));
    case Op::kCmAttachQp: {
      ibv_qp* qp = find<ibv_qp>(qps_, in.get<uint64_t>());
      if (!qp || cm_qp_.count(x)) return rc(EINVAL);
      ibv_qp_attr a{};
      a.qp_state = IBV_QPS_INIT;
      a.port_num = 1;
      // Remote reads and atomics as InfiniBand's connection manager grants them together (the
      // kernel's iWARP one grants write and read, from before RFC 7306): docs/decisions.md.
      a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                          IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
      if (int e = ibv_modify_qp(
              qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return rc(e);
      cm_qp_[x] = qp;
      return rc(0);
    }
    case Op::kCmDetachQp:
      cm_qp_.erase(x);
      return rc(0);
    case Op::kCmConnect: {
      CmParam p;
      const CmConn c = conn(&p);
      auto q = cm_qp_.find(x);
      if (in.bad() || q == cm_qp_.end()) return rc(EINVAL);
      // Ready to receive from the peer's card at once (its first data may come before its
      // reply is seen here); sending waits for the reply's QP number.
      if (int e = cm_connect_qp(q->second, IBV_QPS_RTR, cm->peer_mac(x), 0, abi::kRoleActive, c, x))
        return rc(e);
      cm_asked_[x] = c;
      return rc(cm->connect(x, p));
    }
    case Op::kCmAccept: {
      CmParam p;
      const CmConn c = conn(&p);
      auto q = cm_qp_.find(x);
      if (in.bad() || q == cm_qp_.end()) return rc(EINVAL);
      if (int e = cm_connect_qp(q->second, IBV_QPS_RTR, cm->peer_mac(x), cm->request_qpn(x),
                                abi::kRolePassive, c, x))
        return rc(e);
      if (int e = cm_connect_qp(q->second, IBV_QPS_RTS, cm->peer_mac(x), cm->request_qpn(x),
                                abi::kRolePassive, c, x))
        return rc(e);
      return rc(cm->accept(x, p));
    }
    case Op::kCmReject: {
      size_t n = 0;
      const uint8_t* d = in.get_bytes(&n);
      return rc(cm->reject(x, d ? std::vector<uint8_t>(d, d + n) : std::vector<uint8_t>()));
    }
    case Op::kCmDisconnect: {
      auto q = cm_qp_.find(x);
      if (q != cm_qp_.end() && q->second->state != IBV_QPS_ERR) {
        ibv_qp_attr a{};
        a.qp_state = IBV_QPS_ERR;
        ibv_modify_qp(q->second, &a, IBV_QP_STATE);
      }
      return rc(cm->disconnect(x));
    }
    case Op::kCmGetEvent: {
      CmEvent e;
      if (int err = cm->get_event(x, &e, in.get<int32_t>() != 0)) return rc(err);
      if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST) cm_ids_.insert(e.id);
      auto q = cm_qp_.find(e.id);
      // The initiator's connection is established: its QP to RTS towards the acceptor's.
      if (e.type == RDMA_CM_EVENT_ESTABLISHED && q != cm_qp_.end() &&
          q->second->state == IBV_QPS_RTR) {
        if (int err = cm_connect_qp(q->second, IBV_QPS_RTS, cm->peer_mac(e.id), e.param.qpn,
                                    abi::kRoleActive, cm_asked_[e.id], e.id))
          return rc(err);
      }
      CmEventMsg m{};
      m.id = e.id;
      m.listen_id = e.listen_id;
      m.type = e.type;
      m.status = e.status;
      m.conn.responder_resources = e.param.responder_resources;
      m.conn.initiator_depth = e.param.initiator_depth;
      m.conn.qp_num = e.param.qpn;
      m.src_ip = cm->src(e.id).ip;
      m.src_port = cm->src(e.id).port;
      m.dst_ip = cm->dst(e.id).ip;
      m.dst_port = cm->dst(e.id).port;
      out->put(m).put_bytes(e.param.private_data.data(), e.param.private_data.size());
      return rc(0);
    }
    default:
      return rc(EINVAL);
  }
}

void Server::handle(Op op, Msg& in, const std::vector<int>& fds, Header* h, Msg* out) {
  // rc: a verb that returns an errno; fail(e): one that returns NULL or -1 with errno.
  auto rc = [h](int r) {
    h->ret = r;
    h->err = r;
  };
  auto fail = [h](int e) {
    h->ret = -1;
    h->err = e;
  };
  switch (op) {
    case Op::kGetDevice: {
      int n = 0;
      ibv_device** list = ibv_get_device_list(&n);
      if (!list || n < 1) return fail(ENODEV);
      out->put_str(list[0]->name).put_str(list[0]->dev_name);
      out->put(int32_t(list[0]->node_type)).put(int32_t(list[0]->transport_type));
      out->put(uint64_t(ibv_get_device_guid(list[0])));
      ibv_free_device_list(list);
      return;
    }
    case Op::kOpenDevice: {
      int n = 0;
      ibv_device** list = ibv_get_device_list(&n);
      ibv_context* c = list && n > 0 ? ibv_open_device(list[0]) : nullptr;
      ibv_free_device_list(list);
      if (!c) return fail(errno ? errno : ENODEV);
      ctxs_.insert(id(c));
      out->put(id(c));
      return;
    }
    case Op::kCloseDevice: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      if (!c) return rc(EINVAL);
      ctxs_.erase(id(c));
      return rc(ibv_close_device(c));
    }
    case Op::kQueryDevice: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      if (!c) return rc(EINVAL);
      ibv_device_attr a{};
      rc(ibv_query_device(c, &a));
      out->put(a);
      return;
    }
    case Op::kQueryDeviceEx: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      ibv_query_device_ex_input x{};
      x.comp_mask = in.get<uint32_t>();
      if (!c) return rc(EINVAL);
      ibv_device_attr_ex a{};
      rc(ibv_query_device_ex(c, &x, &a));
      out->put(a);
      return;
    }
    case Op::kQueryPort: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      const uint8_t port = in.get<uint8_t>();
      if (!c) return rc(EINVAL);
      ibv_port_attr a{};
      rc(ibv_query_port(c, port, &a));
      out->put(a);
      return;
    }
    case Op::kQueryGid: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      const uint8_t port = in.get<uint8_t>();
      const int32_t index = in.get<int32_t>();
      if (!c) return rc(EINVAL);
      ibv_gid g{};
      rc(ibv_query_gid(c, port, index, &g));
      out->put(g);
      return;
    }
    case Op::kAllocPd: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      ibv_pd* pd = c ? ibv_alloc_pd(c) : nullptr;
      if (!pd) return fail(c ? errno : EINVAL);
      pds_.insert(id(pd));
      out->put(id(pd)).put(pd->handle);
      return;
    }
    case Op::kDeallocPd: {
      ibv_pd* pd = find<ibv_pd>(pds_, in.get<uint64_t>());
      if (!pd) return rc(EINVAL);
      const int r = ibv_dealloc_pd(pd);
      if (r == 0) pds_.erase(id(pd));
      return rc(r);
    }
    case Op::kRegMr: {
      ibv_pd* pd = find<ibv_pd>(pds_, in.get<uint64_t>());
      const uint64_t addr = in.get<uint64_t>(), len = in.get<uint64_t>();
      const int32_t access = in.get<int32_t>();
      const uint32_t nruns = in.get<uint32_t>();
      if (!pd || in.bad() || nruns != fds.size()) return fail(EINVAL);
      host::Process& proc = host::context_process(pd->context);
      // The runs the process shared for it: mapped here and made the simulated process's pages.
      for (uint32_t i = 0; i < nruns; ++i) {
        const uint64_t va = in.get<uint64_t>(), rl = in.get<uint64_t>();
        if (in.bad()) return fail(EINVAL);
        void* p = mmap(nullptr, rl, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
        if (p == MAP_FAILED) {
          // A read-only run (the process's own protection): the card may only read it.
          p = mmap(nullptr, rl, PROT_READ, MAP_SHARED, fds[i], 0);
          if (p == MAP_FAILED) return fail(EFAULT);
        }
        maps_.push_back({p, rl});
        if (int e = proc.map_external(va, rl, static_cast<uint8_t*>(p))) return fail(e);
      }
      ibv_mr* mr = ibv_reg_mr(pd, reinterpret_cast<void*>(addr), len, access);
      if (!mr) return fail(errno);
      mrs_.insert(id(mr));
      out->put(id(mr)).put(mr->handle).put(mr->lkey).put(mr->rkey);
      return;
    }
    case Op::kDeregMr: {
      ibv_mr* mr = find<ibv_mr>(mrs_, in.get<uint64_t>());
      if (!mr) return rc(EINVAL);
      const int r = ibv_dereg_mr(mr);
      if (r == 0) mrs_.erase(id(mr));
      return rc(r);
    }
    case Op::kCreateChannel: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      ibv_comp_channel* ch = c ? ibv_create_comp_channel(c) : nullptr;
      if (!ch) return fail(c ? errno : EINVAL);
      chans_.insert(id(ch));
      out->put(id(ch));
      return;
    }
    case Op::kDestroyChannel: {
      ibv_comp_channel* ch = find<ibv_comp_channel>(chans_, in.get<uint64_t>());
      if (!ch) return rc(EINVAL);
      const int r = ibv_destroy_comp_channel(ch);
      if (r == 0) chans_.erase(id(ch));
      return rc(r);
    }
    case Op::kCreateCq: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      const int32_t cqe = in.get<int32_t>();
      const uint64_t chid = in.get<uint64_t>();
      const int32_t vec = in.get<int32_t>();
      ibv_comp_channel* ch = chid ? find<ibv_comp_channel>(chans_, chid) : nullptr;
      if (!c || (chid && !ch)) return fail(EINVAL);
      ibv_cq* cq = ibv_create_cq(c, cqe, nullptr, ch, vec);
      if (!cq) return fail(errno);
      cqs_.insert(id(cq));
      out->put(id(cq)).put(cq->handle).put(int32_t(cq->cqe));
      return;
    }
    case Op::kDestroyCq: {
      ibv_cq* cq = find<ibv_cq>(cqs_, in.get<uint64_t>());
      if (!cq) return rc(EINVAL);
      const int r = ibv_destroy_cq(cq);
      if (r == 0) cqs_.erase(id(cq));
      return rc(r);
    }
    case Op::kReqNotifyCq: {
      ibv_cq* cq = find<ibv_cq>(cqs_, in.get<uint64_t>());
      const int32_t sol = in.get<int32_t>();
      return rc(cq ? ibv_req_notify_cq(cq, sol) : EINVAL);
    }
    case Op::kGetCqEvent: {
      ibv_comp_channel* ch = find<ibv_comp_channel>(chans_, in.get<uint64_t>());
      const bool nonblock = in.get<int32_t>() != 0;
      if (!ch) return fail(EINVAL);
      if (nonblock && !host::channel_has_event(ch)) return fail(EAGAIN);
      ibv_cq* cq = nullptr;
      void* ctx = nullptr;
      if (ibv_get_cq_event(ch, &cq, &ctx)) return fail(errno);
      out->put(id(cq));
      return;
    }
    case Op::kAckCqEvents: {
      ibv_cq* cq = find<ibv_cq>(cqs_, in.get<uint64_t>());
      const uint32_t n = in.get<uint32_t>();
      if (cq) ibv_ack_cq_events(cq, n);
      return;
    }
    case Op::kPollCq: {
      ibv_cq* cq = find<ibv_cq>(cqs_, in.get<uint64_t>());
      const int32_t n = in.get<int32_t>();
      if (!cq || n < 1 || n > 1024) return fail(EINVAL);
      std::vector<ibv_wc> wc(static_cast<size_t>(n));
      int got = ibv_poll_cq(cq, n, wc.data());
      // A loop polling this CQ: wait for its next completion (up to a quantum), as it would.
      empty_polls_ = got == 0 && last_cq_ == cq ? empty_polls_ + 1 : 0;
      last_cq_ = cq;
      if (got == 0 && empty_polls_ >= kEmptyPollsBeforeWait && r_.quantum_ns > 0 &&
          rnic_wait_cq(cq, uint64_t(r_.quantum_ns)) == 1)
        got = ibv_poll_cq(cq, n, wc.data());
      h->ret = got;
      for (int i = 0; i < got; ++i) out->put(wc[size_t(i)]);
      return;
    }
    case Op::kCreateQp: {
      ibv_pd* pd = find<ibv_pd>(pds_, in.get<uint64_t>());
      ibv_cq* scq = find<ibv_cq>(cqs_, in.get<uint64_t>());
      ibv_cq* rcq = find<ibv_cq>(cqs_, in.get<uint64_t>());
      const uint64_t srq_id = in.get<uint64_t>();
      ibv_srq* srq = srq_id ? find<ibv_srq>(srqs_, srq_id) : nullptr;
      ibv_qp_init_attr a{};
      a.cap = in.get<ibv_qp_cap>();
      a.qp_type = ibv_qp_type(in.get<int32_t>());
      a.sq_sig_all = in.get<int32_t>();
      if (!pd || !scq || !rcq || (srq_id && !srq)) return fail(EINVAL);
      a.send_cq = scq;
      a.recv_cq = rcq;
      a.srq = srq;
      ibv_qp* qp = ibv_create_qp(pd, &a);
      if (!qp) return fail(errno);
      qps_.insert(id(qp));
      out->put(id(qp)).put(qp->qp_num).put(a.cap);
      return;
    }
    case Op::kModifyQp: {
      ibv_qp* qp = find<ibv_qp>(qps_, in.get<uint64_t>());
      ibv_qp_attr a = in.get<ibv_qp_attr>();
      const int32_t mask = in.get<int32_t>();
      return rc(qp && !in.bad() ? ibv_modify_qp(qp, &a, mask) : EINVAL);
    }
    case Op::kQueryQp: {
      ibv_qp* qp = find<ibv_qp>(qps_, in.get<uint64_t>());
      const int32_t mask = in.get<int32_t>();
      if (!qp) return rc(EINVAL);
      ibv_qp_attr a{};
      ibv_qp_init_attr ia{};
      rc(ibv_query_qp(qp, &a, mask, &ia));
      out->put(a).put(ia.cap).put(int32_t(ia.sq_sig_all));
      return;
    }
    case Op::kDestroyQp: {
      ibv_qp* qp = find<ibv_qp>(qps_, in.get<uint64_t>());
      if (!qp) return rc(EINVAL);
      const int r = ibv_destroy_qp(qp);
      if (r == 0) qps_.erase(id(qp));
      return rc(r);
    }
    case Op::kPostSend: {
      ibv_qp* qp = find<ibv_qp>(qps_, in.get<uint64_t>());
      const uint32_t n = in.get<uint32_t>();
      if (!qp || n > 4096) {
        out->put(uint32_t(0));
        return rc(EINVAL);
      }
      std::vector<ibv_send_wr> wrs(n);
      std::vector<std::vector<ibv_sge>> sges(n);
      std::vector<std::vector<uint8_t>> inl(n);
      for (uint32_t i = 0; i < n && !in.bad(); ++i) {
        const auto s = in.get<SendWr>();
        if (s.num_sge > 64) {
          out->put(i);
          return rc(EINVAL);
        }
        for (uint32_t k = 0; k < s.num_sge; ++k) {
          const auto g = in.get<Sge>();
          sges[i].push_back({g.addr, g.length, g.lkey});
        }
        ibv_send_wr& w = wrs[i];
        w.wr_id = s.wr_id;
        w.opcode = ibv_wr_opcode(s.opcode);
        w.send_flags = s.send_flags;
        w.invalidate_rkey = s.imm_or_inv;
        if (w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
          w.wr.atomic = {s.remote_addr, s.compare_add, s.swap, s.rkey};
        } else {
          w.wr.rdma.remote_addr = s.remote_addr;
          w.wr.rdma.rkey = s.rkey;
        }
        if (s.inline_bytes) {
          // The bytes came with the call: the WR takes them from here (rnicsim's memory).
          size_t len = 0;
          const uint8_t* p = in.get_bytes(&len);
          if (!p || len != s.inline_bytes) {
            out->put(i);
            return rc(EINVAL);
          }
          inl[i].assign(p, p + len);
          sges[i] = {{reinterpret_cast<uint64_t>(inl[i].data()), uint32_t(len), 0}};
        }
        w.sg_list = sges[i].data();
        w.num_sge = int(sges[i].size());
        w.next = i + 1 < n ? &wrs[i + 1] : nullptr;
      }
      if (in.bad() || n == 0) {
        out->put(uint32_t(0));
        return rc(n == 0 ? 0 : EINVAL);
      }
      ibv_send_wr* bad = nullptr;
      const int r = ibv_post_send(qp, wrs.data(), &bad);
      out->put(uint32_t(bad ? bad - wrs.data() : 0));
      return rc(r);
    }
    case Op::kPostRecv:
    case Op::kPostSrqRecv: {
      const uint64_t target = in.get<uint64_t>();
      ibv_qp* qp = op == Op::kPostRecv ? find<ibv_qp>(qps_, target) : nullptr;
      ibv_srq* srq = op == Op::kPostSrqRecv ? find<ibv_srq>(srqs_, target) : nullptr;
      const uint32_t n = in.get<uint32_t>();
      if ((!qp && !srq) || n > 4096) {
        out->put(uint32_t(0));
        return rc(EINVAL);
      }
      std::vector<ibv_recv_wr> wrs(n);
      std::vector<std::vector<ibv_sge>> sges(n);
      for (uint32_t i = 0; i < n && !in.bad(); ++i) {
        const auto r = in.get<RecvWr>();
        if (r.num_sge > 64) {
          out->put(i);
          return rc(EINVAL);
        }
        for (uint32_t k = 0; k < r.num_sge; ++k) {
          const auto g = in.get<Sge>();
          sges[i].push_back({g.addr, g.length, g.lkey});
        }
        wrs[i].wr_id = r.wr_id;
        wrs[i].sg_list = sges[i].data();
        wrs[i].num_sge = int(sges[i].size());
        wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
      }
      if (in.bad() || n == 0) {
        out->put(uint32_t(0));
        return rc(n == 0 ? 0 : EINVAL);
      }
      ibv_recv_wr* bad = nullptr;
      const int r =
          qp ? ibv_post_recv(qp, wrs.data(), &bad) : ibv_post_srq_recv(srq, wrs.data(), &bad);
      out->put(uint32_t(bad ? bad - wrs.data() : 0));
      return rc(r);
    }
    case Op::kCreateSrq: {
      ibv_pd* pd = find<ibv_pd>(pds_, in.get<uint64_t>());
      ibv_srq_init_attr a{};
      a.attr = in.get<ibv_srq_attr>();
      if (!pd || in.bad()) return fail(EINVAL);
      ibv_srq* srq = ibv_create_srq(pd, &a);
      if (!srq) return fail(errno);
      srqs_.insert(id(srq));
      out->put(id(srq)).put(srq->handle).put(a.attr);
      return;
    }
    case Op::kModifySrq: {
      ibv_srq* srq = find<ibv_srq>(srqs_, in.get<uint64_t>());
      ibv_srq_attr a = in.get<ibv_srq_attr>();
      const int32_t mask = in.get<int32_t>();
      return rc(srq && !in.bad() ? ibv_modify_srq(srq, &a, mask) : EINVAL);
    }
    case Op::kQuerySrq: {
      ibv_srq* srq = find<ibv_srq>(srqs_, in.get<uint64_t>());
      if (!srq) return rc(EINVAL);
      ibv_srq_attr a{};
      rc(ibv_query_srq(srq, &a));
      out->put(a);
      return;
    }
    case Op::kDestroySrq: {
      ibv_srq* srq = find<ibv_srq>(srqs_, in.get<uint64_t>());
      if (!srq) return rc(EINVAL);
      const int r = ibv_destroy_srq(srq);
      if (r == 0) srqs_.erase(id(srq));
      return rc(r);
    }
    case Op::kGetAsyncEvent: {
      ibv_context* c = find<ibv_context>(ctxs_, in.get<uint64_t>());
      const bool nonblock = in.get<int32_t>() != 0;
      if (!c) return fail(EINVAL);
      if (nonblock && !host::async_has_event(c)) return fail(EAGAIN);
      ibv_async_event e{};
      if (ibv_get_async_event(c, &e)) return fail(errno);
      out->put(int32_t(e.event_type));
      if (e.event_type == IBV_EVENT_CQ_ERR)
        out->put(id(e.element.cq));
      else if (e.event_type == IBV_EVENT_PORT_ACTIVE || e.event_type == IBV_EVENT_PORT_ERR)
        out->put(uint64_t(e.element.port_num));
      else if (e.event_type == IBV_EVENT_SRQ_ERR)
        out->put(id(e.element.srq));
      else
        out->put(id(e.element.qp));
      ibv_ack_async_event(&e);
      return;
    }
    case Op::kOobPut: {
      const std::string key = in.get_str();
      size_t n = 0;
      const uint8_t* p = in.get_bytes(&n);
      if (in.bad()) return fail(EINVAL);
      rnic_oob_put(key.c_str(), p, n);
      return;
    }
    case Op::kOobGet: {
      const std::string key = in.get_str();
      const uint64_t max = in.get<uint64_t>();
      if (in.bad() || max > kMaxMsg / 2) return fail(EINVAL);
      std::vector<uint8_t> b(max);
      h->ret = int32_t(rnic_oob_get(key.c_str(), b.data(), b.size()));
      b.resize(std::min<size_t>(b.size(), size_t(h->ret)));
      out->put_bytes(b.data(), b.size());
      return;
    }
    case Op::kHello:
      out->put(int32_t(r_.vpid)).put(int64_t(r_.clock_read_ns)).put(r_.ip).put(r_.cpu_mhz);
      out->put_str(r_.host).put(r_.mac);
      return;
    case Op::kResolve: {
      const std::string name = in.get_str();
      if (const uint32_t ip = r_.host_ip ? r_.host_ip(name) : 0) {
        out->put(ip);
        return;
      }
      unsigned a, b, c, d;
      char tail;
      if (std::sscanf(name.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a < 256 &&
          b < 256 && c < 256 && d < 256) {
        out->put(uint32_t(a << 24 | b << 16 | c << 8 | d));
        return;
      }
      if (name == "localhost") {
        out->put(r_.ip);
        return;
      }
      return fail(ENOENT);
    }
    case Op::kResolveAddr: {
      const uint32_t ip = in.get<uint32_t>();
      const std::string name = ip == 0x7F000001u ? std::string("localhost")
                               : r_.host_name    ? r_.host_name(ip)
                                                 : "";
      if (in.bad() || name.empty()) return fail(ENOENT);
      out->put_str(name);
      return;
    }
    case Op::kSockCreate: {
      if (!r_.net) return fail(EAFNOSUPPORT);
      const bool dgram = in.more() && in.get<int32_t>() == 1;
      const int64_t k = r_.net->socket(r_.ip, dgram);
      socks_.insert(k);
      out->put(k);
      return;
    }
    case Op::kSockBind:
    case Op::kSockListen:
    case Op::kSockAccept:
    case Op::kSockConnect:
    case Op::kSockSend:
    case Op::kSockRecv:
    case Op::kSockClose:
    case Op::kSockShutdown:
    case Op::kSockName:
    case Op::kSockError:
    case Op::kSockPeer:
    case Op::kSockSendTo:
    case Op::kSockRecvFrom: {
      const int64_t k = in.get<int64_t>();
      if (!r_.net || !socks_.count(k)) return fail(EBADF);
      MgmtNet& net = *r_.net;
      const bool dgram = net.is_dgram(k);
      int64_t v = 0;
      if ((op == Op::kSockListen || op == Op::kSockAccept) && dgram) {
        v = -EOPNOTSUPP;
      } else if (op == Op::kSockSendTo || (op == Op::kSockSend && dgram)) {
        uint32_t ip = 0;
        uint16_t port = 0;
        if (op == Op::kSockSendTo) {
          ip = in.get<uint32_t>();
          port = in.get<uint16_t>();
        }
        size_t n = 0;
        const uint8_t* p = in.get_bytes(&n);
        v = !p       ? -EINVAL
            : !dgram ? -EISCONN
                     : net.send_to(k, ip == 0x7F000001u ? r_.ip : ip, port, p, n);
      } else if (op == Op::kSockRecvFrom) {
        const uint64_t max = in.get<uint64_t>();
        const bool nonblock = in.get<int32_t>() != 0;
        const bool peek = in.get<int32_t>() != 0;
        const uint64_t limit = limit_ps(in.get<int64_t>());
        if (!dgram) return fail(EOPNOTSUPP);
        std::vector<uint8_t> b(std::min<uint64_t>(max, kMaxMsg / 2));
        uint32_t ip = 0;
        uint16_t port = 0;
        size_t full = 0;
        v = net.recv_from(k, b.data(), b.size(), nonblock, peek, &ip, &port, &full, limit);
        b.resize(v > 0 ? size_t(v) : 0);
        out->put_bytes(b.data(), b.size()).put(ip).put(port).put(uint64_t(full));
      } else if (op == Op::kSockRecv && dgram) {  // (a datagram comes with its source)
        v = -EOPNOTSUPP;
      } else if (op == Op::kSockShutdown && dgram) {  // (connected: nothing to shut here)
        (void)in.get<int32_t>();
        uint32_t ip = 0;
        uint16_t port = 0;
        v = net.peer(k, &ip, &port);
      } else if (op == Op::kSockBind) {
        const uint32_t ip = in.get<uint32_t>();
        const uint16_t port = in.get<uint16_t>();
        v = net.bind(k, ip == 0x7F000001u ? r_.ip : ip, port);
      } else if (op == Op::kSockListen) {
        v = net.listen(k);
      } else if (op == Op::kSockAccept) {
        const bool nonblock = in.get<int32_t>() != 0;
        const uint64_t limit = limit_ps(in.get<int64_t>());
        uint32_t ip = 0;
        uint16_t port = 0;
        v = net.accept(k, &ip, &port, nonblock, limit);
        if (v >= 0) {
          socks_.insert(v);
          out->put(v).put(ip).put(port);
          v = 0;
        }
      } else if (op == Op::kSockConnect) {
        const uint32_t ip = in.get<uint32_t>();
        const uint16_t port = in.get<uint16_t>();
        const bool nonblock = in.get<int32_t>() != 0;
        const uint64_t limit = limit_ps(in.get<int64_t>());
        v = net.connect(k, ip == 0x7F000001u ? r_.ip : ip, port, nonblock, limit);
      } else if (op == Op::kSockSend) {
        size_t n = 0;
        const uint8_t* p = in.get_bytes(&n);
        v = p ? net.send(k, p, n) : -EINVAL;
      } else if (op == Op::kSockRecv) {
        const uint64_t max = in.get<uint64_t>();
        const bool nonblock = in.get<int32_t>() != 0;
        const bool peek = in.get<int32_t>() != 0;
        const uint64_t want = in.get<uint64_t>();
        const uint64_t limit = limit_ps(in.get<int64_t>());
        std::vector<uint8_t> b(std::min<uint64_t>(max, kMaxMsg / 2));
        v = net.recv(k, b.data(), b.size(), nonblock, peek, want, limit);
        b.resize(v > 0 ? size_t(v) : 0);
        out->put_bytes(b.data(), b.size());
      } else if (op == Op::kSockShutdown) {
        v = net.shutdown(k, in.get<int32_t>());
      } else if (op == Op::kSockName || op == Op::kSockPeer) {
        uint32_t ip = 0;
        uint16_t port = 0;
        v = op == Op::kSockName ? net.name(k, &ip, &port) : net.peer(k, &ip, &port);
        out->put(ip).put(port);
      } else if (op == Op::kSockError) {
        v = net.error(k);
      } else {
        v = net.close(k);
        socks_.erase(k);
      }
      if (v < 0) return fail(int(-v));
      h->ret = int32_t(v);
      return;
    }
    case Op::kSpin: {
      const uint64_t addr = in.get<uint64_t>();
      const uint32_t n = in.get<uint32_t>();
      uint8_t seen[8] = {};
      for (uint32_t i = 0; i < n && i < 8; ++i) seen[i] = in.get<uint8_t>();
      if (in.bad() || n == 0 || n > 8 || (addr & 4095) + n > 4096) return rc(EINVAL);
      if (r_.spins) ++*r_.spins;
      const host::BlockedIn blocked("a spin on memory");
      return rc(host::wait_mem_change(reinterpret_cast<const void*>(addr), seen, n, kSpinWaitNs)
                    ? 0
                    : ETIMEDOUT);
    }
    case Op::kCmCreateChannel:
    case Op::kCmDestroyChannel:
    case Op::kCmCreateId:
    case Op::kCmDestroyId:
    case Op::kCmBind:
    case Op::kCmListen:
    case Op::kCmResolveAddr:
    case Op::kCmResolveRoute:
    case Op::kCmAttachQp:
    case Op::kCmDetachQp:
    case Op::kCmConnect:
    case Op::kCmAccept:
    case Op::kCmReject:
    case Op::kCmDisconnect:
    case Op::kCmGetEvent:
      return cm_handle(op, in, h, out);
    case Op::kSockPoll: {
      const uint32_t n = in.get<uint32_t>();
      if (n > 4096) return fail(EINVAL);
      struct Item {
        int64_t what;
        short events, revents;
      };
      std::vector<Item> items(n);
      bool channels = false;
      for (Item& it : items) {
        it.what = in.get<int64_t>();
        it.events = in.get<int16_t>();
        channels |= (it.what & kPollKinds) != 0;
      }
      const int64_t timeout = in.get<int64_t>();
      const uint64_t key = in.more() ? in.get<uint64_t>() : 0;
      const uint64_t seen = key ? in.get<uint64_t>() : 0;
      if (in.bad()) return fail(EINVAL);
      Keyed* woken = key ? &keyed(key) : nullptr;  // (a wake ends it: the process looks again)
      const uint64_t from_ps = sc_core::sc_time_stamp().value();
      const uint64_t limit = timeout < 0 ? UINT64_MAX : from_ps + uint64_t(timeout) * 1000;
      const host::BlockedIn blocked(channels ? "poll on sockets and channels" : "poll on sockets");
      int ready = 0;
      for (;;) {
        const uint64_t t = sc_core::sc_time_stamp().value();
        uint64_t next = limit;
        sc_core::sc_event_or_list evs;
        bool waits = false;  // (any item with an event to wait on)
        ready = 0;
        for (Item& it : items) {
          it.revents = poll_one(it.what, it.events, t, &next, evs, &waits);
          if (it.revents) ++ready;
        }
        if (ready || t >= limit || (woken && woken->wakes > seen)) break;
        if (woken) {
          evs |= woken->ev;
          waits = true;
        }
        if (!waits)
          host::host_wait(sc_core::sc_time::from_value(limit - t));
        else if (next == UINT64_MAX)
          host::host_wait(evs);
        else
          host::host_wait(sc_core::sc_time::from_value(next - t), evs);
      }
      h->ret = ready;
      if ((h->flags & kLookAgain) && r_.looked_us)
        *r_.looked_us += (sc_core::sc_time_stamp().value() - from_ps) / 1000000;
      for (const Item& it : items) out->put(int16_t(it.revents));
      return;
    }
    case Op::kThreadCreate:
      return;  // the server turns to several threads once it has answered
    case Op::kKill: {
      const int32_t vpid = in.get<int32_t>(), sig = in.get<int32_t>();
      const bool queued = in.get<int32_t>() != 0;
      const int64_t value = in.get<int64_t>();
      if (in.bad()) return fail(EINVAL);
      const auto t = servers().find(vpid);
      // Only a process of the same host (another host's processes are another machine's).
      if (t == servers().end() || t->second == this || t->second->r_.ip != r_.ip)
        return fail(ESRCH);
      if (const int e = t->second->signal_from(sig, queued, value, r_.vpid)) return fail(-e);
      return;
    }
    case Op::kWake: {
      const uint64_t key = in.get<uint64_t>(), wakes = in.get<uint64_t>();
      if (in.bad() || key == 0) return fail(EINVAL);
      Keyed& k = keyed(key);
      if (wakes > k.wakes) {
        k.wakes = wakes;
        k.ev.notify(sc_core::SC_ZERO_TIME);
      }
      return;
    }
    case Op::kSleep: {
      uint64_t ns = std::min<uint64_t>(in.get<uint64_t>(), 1ull << 50);
      const uint64_t key = in.more() ? in.get<uint64_t>() : 0;
      const uint64_t seen = key ? in.get<uint64_t>() : 0;
      Keyed* k = key ? &keyed(key) : nullptr;
      // A wait for a signal (its mask): another process's signal ends it too.
      const pid_t tid = calling_tid_;
      const bool for_signal = key == kSignalKey && in.more();
      if (for_signal) {
        const uint64_t mask = in.get<uint64_t>();
        // One another process sent while the thread looked: pending already.
        if (pending_signals(pid_, tid) & ~mask) return;
        signal_waits_[tid] = mask;
      }
      struct Done {
        std::map<pid_t, uint64_t>& w;
        pid_t tid;
        bool on;
        ~Done() {
          if (on) w.erase(tid);
        }
      } done{signal_waits_, tid, for_signal};
      const uint64_t outside = k ? k->outside : 0;
      const bool look = h->flags & kLookAgain;
      const host::BlockedIn blocked((h->flags & kLookForSignal) ? "a wait for a signal"
                                    : look ? "a wait on descriptors of its kernel"
                                           : "sleep");
      Counter* slept = look ? r_.looked_us : r_.slept_us;
      const uint64_t slice = std::max<uint64_t>(r_.sleep_slice_ns, 1000);
      while (ns > 0 && !(k && (k->wakes > seen || k->outside != outside))) {
        const uint64_t step = std::min(ns, slice);
        const uint64_t from = sc_core::sc_time_stamp().value();
        if (k)
          host::host_wait(sc_core::sc_time::from_value(step * 1000), k->ev);
        else
          host::host_wait(sc_core::sc_time::from_value(step * 1000));
        const uint64_t took =
            std::min<uint64_t>(ns, (sc_core::sc_time_stamp().value() - from) / 1000);
        if (slept) *slept += took / 1000;
        ns -= took;
      }
      return;
    }
  }
  fail(ENOSYS);  // an operation this simulator does not know
}

}  // namespace

traffic::ProgramEnd run_exec(const ExecRun& r) {
  traffic::ProgramEnd end;
  end.kind = traffic::ProgramEnd::kException;
  const std::string preload = preload_library();
  if (preload.empty()) {
    end.what =
        "librnicsim_exec.so (the preload library) is not beside rnicsim nor in ../lib/rnicsim";
    return end;
  }
  int sv[2], ctl[2];  // the main thread's connection; other threads' registrations
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0) {
    end.what = fmt::format("socketpair: {}", std::strerror(errno));
    return end;
  }
  int report[2];  // the child's exec failure, if any (closed by a successful exec)
  if (pipe2(report, O_CLOEXEC) != 0) {
    end.what = fmt::format("pipe: {}", std::strerror(errno));
    return end;
  }
  // Everything the child needs, built before the fork (after it only system calls).
  std::vector<std::string> env = {fmt::format("PATH={}", kPath),
                                  "HOME=/tmp",
                                  "LANG=C",
                                  "LC_ALL=C",
                                  fmt::format("LD_PRELOAD={}", preload),
                                  fmt::format("{}={}", kFdEnv, kFd)};
  // Debugging: each call and its answer on the process's stderr.
  if (std::getenv("RNICSIM_EXEC_TRACE")) env.push_back("RNICSIM_EXEC_TRACE=1");
  std::vector<char*> envp, argv;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = r.argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The process and the simulator take turns (lockstep), so they share one CPU: the simulator's
  // thread is pinned to the one it is on, and the process inherits it. A call's round trip then
  // wakes no other CPU (18 against 57 us per call on this machine, docs/verbs.md).
  static thread_local bool pinned = false;
  if (!pinned) {
    pinned = true;
    const int cpu = sched_getcpu();
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    end.what = fmt::format("fork: {}", std::strerror(errno));
    return end;
  }
  if (pid == 0) {
    auto die = [&](int e) {
      (void)!write(report[1], &e, sizeof e);
      syscall(SYS_exit_group, 127);
    };
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) syscall(SYS_exit_group, 127);
    personality(ADDR_NO_RANDOMIZE);
    const int in = open("/dev/null", O_RDONLY);
    const int out = open(r.out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(r.err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) die(errno);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(sv[1], kFd) < 0 ||
        dup2(ctl[1], kCtlFd) < 0)
      die(errno);
    execve(argv[0], argv.data(), envp.data());
    die(errno);
  }
  close(sv[1]);
  close(ctl[1]);
  close(report[1]);
  int exec_err = 0;
  const bool exec_failed = read(report[0], &exec_err, sizeof exec_err) == sizeof exec_err;
  close(report[0]);
  std::string why;
  bool stopped = false;
  if (!exec_failed) {
    // Workers of a process with several threads may still wait in a call when it ends: the
    // server outlives the run for them (it is small; finish() has let its resources go).
    auto* s = new Server(sv[0], ctl[0], pid, r);
    stopped = !s->serve(&why);
    s->finish();
    host::blocked_calls().erase(sc_core::sc_get_current_process_handle().get_process_object());
    if (!s->had_threads()) delete s;
  }
  close(sv[0]);
  close(ctl[0]);
  // Reap it, and anything it left in its group.
  if (stopped) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-pid, SIGKILL);
  if (exec_failed) {
    end.what = fmt::format("cannot run {}: {}", r.argv[0], std::strerror(exec_err));
    return end;
  }
  end.last_stderr = last_line(r.err_file);
  if (WIFEXITED(status)) {
    end.kind = traffic::ProgramEnd::kReturned;
    end.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    end.kind = traffic::ProgramEnd::kSignal;
    end.code = WTERMSIG(status);
    end.what = why;
  }
  return end;
}

}  // namespace rnic::exec
