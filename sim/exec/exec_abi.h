// The calls between an executable run as a simulated process (sim/exec/exec_process.h) and the
// simulator that serves them: the preload library in the process (sim/exec/exec_preload.cc)
// sends a request, the process's simulated thread (sim/exec/exec_process.h) performs it on the
// simulated host in simulated time and answers. Each thread's requests one at a time, each
// answered before the thread goes on; simulated time moves only while every thread of the
// process waits (in a call or asleep): lockstep (docs/verbs.md, "Your own programs").
//
// Transport: a SOCK_SEQPACKET socket pair, one message per request and per answer; memory the
// process registers travels as memfd descriptors (SCM_RIGHTS) beside a registration. A message
// is a Header and the operation's fields, packed by Msg (host byte order: both ends are one
// machine). Objects are named by the simulator's ids (never dereferenced by the process); an id
// the simulator did not hand to this process is refused with EINVAL.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace rnic::exec {

// The environment variable that names the process's end of the socket pair (a descriptor
// number); without it the preload library stays out of the way.
constexpr const char* kFdEnv = "RNICSIM_EXEC_FD";
// The descriptor number the process gets it as (high: clear of what programs open).
constexpr int kFd = 1000;
// The descriptor a thread other than the main one hands its own connection through, at its first
// call: a message of its thread id (int32) with the descriptor beside it (SCM_RIGHTS).
constexpr int kCtlFd = 1001;
// The largest message.
constexpr size_t kMaxMsg = 1 << 20;

enum class Op : uint32_t {
  kGetDevice = 1,  // -> name, dev_name, node_type, transport, guid
  kOpenDevice,     // -> ctx
  kCloseDevice,    // ctx
  kQueryDevice,    // ctx -> ibv_device_attr
  kQueryDeviceEx,  // ctx, comp_mask -> ibv_device_attr_ex
  kQueryPort,      // ctx, port -> ibv_port_attr
  kQueryGid,       // ctx, port, index -> ibv_gid
  kAllocPd,        // ctx -> pd, handle
  kDeallocPd,      // pd
  kRegMr,    // pd, addr, length, access, n runs (va, len) + their memfds -> mr, handle, lkey, rkey
  kDeregMr,  // mr
  kCreateChannel,   // ctx -> channel
  kDestroyChannel,  // channel
  kCreateCq,        // ctx, cqe, channel (0: none), comp_vector -> cq, handle, cqe
  kDestroyCq,       // cq
  kReqNotifyCq,     // cq, solicited_only
  kGetCqEvent,      // channel, nonblock -> cq (EAGAIN: none, non-blocking)
  kAckCqEvents,     // cq, n
  kPollCq,          // cq, n -> count, ibv_wc[count]
  kCreateQp,        // pd, send cq, recv cq, srq (0: none), cap, type, sq_sig_all -> qp, qp_num, cap
  kModifyQp,        // qp, ibv_qp_attr, mask
  kQueryQp,         // qp, mask -> ibv_qp_attr, cap, sq_sig_all
  kDestroyQp,       // qp
  kPostSend,        // qp, n, WRs (SendWr, its SGEs, its inline bytes) -> rc, index of the bad one
  kPostRecv,        // qp, n, WRs (RecvWr, its SGEs) -> rc, index of the bad one
  kGetAsyncEvent,   // ctx, nonblock -> type, element (cq or qp id, or port)
  kOobPut,          // key, bytes (rnicsim's out-of-band board, rnic_oob_put)
  kOobGet,          // key, max -> bytes (waits for the key), its full length as ret
  // The process's environment (sim/exec/exec_process.h): its first call, then the management
  // network's sockets (sim/exec/mgmt_net.h) and sleeps.
  // -> virtual pid, clock read cost (ns), the host's address, CPU clock (MHz), its name, the
  // card's MAC
  kHello,
  kResolve,     // host name or dotted address -> address (ENOENT: none)
  kSockCreate,  // [type: 1 UDP] -> socket
  kSockBind,    // socket, address, port
  kSockListen,  // socket
  // limit: the simulated time (ns; -1: none) at which a timer's signal ends a blocking wait
  kSockAccept,   // socket, nonblock, limit -> new socket, peer address, peer port
  kSockConnect,  // socket, address, port, nonblock, limit
  kSockSend,     // socket, bytes -> count
  kSockRecv,     // socket, max, nonblock, peek, bytes to wait for (1..max), limit -> bytes
  kSockClose,    // socket
  // key, seen (optional): a sleep that ends at once when the key's wakes (kWake) pass `seen`;
  // with kSignalKey and the wait's signal mask (bit s-1: signal s blocked), a signal from
  // another process (kKill) ends it too
  kSleep,  // ns[, key, seen[, mask]]
  // Shared receive queues (appended: the numbers above stay).
  kCreateSrq,    // pd, ibv_srq_attr -> srq, handle, ibv_srq_attr
  kModifySrq,    // srq, ibv_srq_attr, mask
  kQuerySrq,     // srq -> ibv_srq_attr
  kDestroySrq,   // srq
  kPostSrqRecv,  // srq, n, WRs (RecvWr, its SGEs) -> rc, index of the bad one
  // The process spins on registered memory (docs/verbs.md, "Spinning on memory"): it waits
  // until the bytes change, or kSpinWaitNs of simulated time.
  kSpin,  // address, n (1..8, within a page), the n bytes as the process read them
  // librdmacm (sim/exec/cm_net.h): ids on event channels, the connection manager's calls.
  kCmCreateChannel,   // -> channel
  kCmDestroyChannel,  // channel
  kCmCreateId,        // channel -> id
  kCmDestroyId,       // id
  kCmBind,            // id, address, port -> address, port
  kCmListen,          // id
  kCmResolveAddr,     // id, address, port -> source address, port
  kCmResolveRoute,    // id
  kCmAttachQp,        // id, qp (made by kCreateQp): the QP goes to INIT, the id's from now
  kCmDetachQp,        // id (before the QP is destroyed)
  kCmConnect,         // id, CmConn
  kCmAccept,          // id, CmConn
  kCmReject,          // id, private data
  kCmDisconnect,      // id
  kCmGetEvent,        // channel, nonblock -> CmEventMsg, private data, the id's addresses
  kThreadCreate,      // the process is about to start a thread (pthread_create)
  // key, seen (optional): the poll ends, none ready, when the key's wakes pass `seen` (kSleep)
  kSockPoll,      // n, n x (item, events), timeout ns (-1: none)[, key, seen] -> ready, n revents
  kSockShutdown,  // socket, how (SHUT_RD, SHUT_WR, SHUT_RDWR)
  kSockName,      // socket -> address, port
  kSockError,     // socket -> its pending error (SO_ERROR), as ret
  kSockPeer,      // socket -> the peer's address, port
  // A thread's signal, broadcast, post or sent signal that waits keyed by it end at once: the
  // key's wakes are now `wakes` (kSleep).
  kWake,  // key, wakes
  // UDP sockets (kSockCreate's optional type 1; kSockSend sends a datagram to the connected
  // peer; a datagram is taken by kSockRecvFrom, with its source).
  kSockSendTo,    // socket, address (0: the connected peer), port, bytes -> count
  kSockRecvFrom,  // socket, max, nonblock, peek, limit -> bytes, source address, port, length
  // A signal to another process of the same host, by its simulated pid (ESRCH: none there);
  // queued: sigqueue's, with its value.
  kKill,         // pid, signal, queued, value
  kResolveAddr,  // address -> the host's name (ENOENT: none)
};

// kSleep's and kWake's key for a signal sent to the process (a condition variable's or a
// semaphore's key is its address).
constexpr uint64_t kSignalKey = 1;
// The key of the process's looks at its kernel's descriptors: a thread wrote to or closed one a
// poll may watch (a pipe, a socket of the kernel's, an eventfd).
constexpr uint64_t kKernelFdKey = 2;

// rdma_conn_param as it travels (private data beside it).
struct CmConn {
  uint8_t responder_resources, initiator_depth;
  uint16_t pad;
  uint32_t qp_num;
};
struct CmEventMsg {
  int64_t id, listen_id;
  int32_t type, status;
  CmConn conn;
  uint32_t src_ip, dst_ip;
  uint16_t src_port, dst_port;
};

// What kSockPoll's items name: a socket, or (these bits set over its id) a completion channel,
// an rdma_cm event channel or a context's async events, whose descriptors are readable when an
// event is there to get.
constexpr int64_t kPollCompChannel = int64_t(1) << 60;
constexpr int64_t kPollCmChannel = int64_t(2) << 60;
constexpr int64_t kPollAsync = int64_t(3) << 60;  // a context's async events (its async_fd)
constexpr int64_t kPollKinds = int64_t(15) << 60;

// The longest one kSpin waits in simulated time (the process then looks again, and spins on).
constexpr uint64_t kSpinWaitNs = 1'000'000;

// A request's flag: the call is one more look of a wait that has no end of its own (no timeout,
// no real-time timer pending) and watches descriptors of the process's kernel, which the
// simulator cannot see change. Such looks are not progress for the watchdog: a wait that only
// they keep going ends the run as a program still waiting when nothing is left to end it.
constexpr uint32_t kLookAgain = 1;
// With kLookAgain: the wait is pause's or sigsuspend's, for a signal another thread or process
// may send (none of the simulator's timers is pending): the wait is named so.
constexpr uint32_t kLookForSignal = 2;

struct Header {
  uint32_t op = 0;
  int32_t ret = 0;     // answers: the verb's return value
  int32_t err = 0;     // answers: errno
  uint32_t flags = 0;  // requests: kLookAgain, kLookForSignal
  // Requests: the simulated time the process spent on its own since its last call (its clock
  // reads, each cost.clock_read_ns), which the simulator spends before serving the call.
  uint64_t spent_ns = 0;
  // Answers: simulated time when the call returned, ns: the process's clock until its next call.
  uint64_t now_ns = 0;
};

// A send WR's fixed part; its SGEs follow, then (IBV_SEND_INLINE) the bytes they name.
struct SendWr {
  uint64_t wr_id;
  uint32_t opcode, send_flags;
  uint32_t imm_or_inv;
  uint32_t num_sge;
  uint64_t remote_addr;  // wr.rdma's, or an atomic's wr.atomic's
  uint32_t rkey;
  uint32_t inline_bytes;       // bytes of inline data after the SGEs
  uint64_t compare_add, swap;  // an atomic's
};
struct Sge {
  uint64_t addr;
  uint32_t length, lkey;
};
struct RecvWr {
  uint64_t wr_id;
  uint32_t num_sge;
  uint32_t pad;
};

// A message under construction or being read: fields in order, trivially copyable ones by
// value, strings and byte runs with their length. Reading past the end sets bad().
class Msg {
 public:
  Msg() = default;
  explicit Msg(std::vector<uint8_t> b) : b_(std::move(b)) {}
  template <class T>
  Msg& put(const T& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b_.insert(b_.end(), p, p + sizeof v);
    return *this;
  }
  Msg& put_bytes(const void* p, size_t n) {
    put(uint64_t(n));
    const auto* q = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), q, q + n);
    return *this;
  }
  Msg& put_str(const std::string& s) { return put_bytes(s.data(), s.size()); }
  template <class T>
  T get() {
    T v{};
    if (at_ + sizeof v > b_.size()) {
      bad_ = true;
      return v;
    }
    std::memcpy(&v, b_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  bool more() const { return at_ < b_.size(); }
  // The next byte run: its start and length (nullptr when the message is short).
  const uint8_t* get_bytes(size_t* n) {
    const uint64_t len = get<uint64_t>();
    if (bad_ || at_ + len > b_.size()) {
      bad_ = true;
      *n = 0;
      return nullptr;
    }
    const uint8_t* p = b_.data() + at_;
    at_ += len;
    *n = size_t(len);
    return p;
  }
  std::string get_str() {
    size_t n = 0;
    const uint8_t* p = get_bytes(&n);
    return p ? std::string(reinterpret_cast<const char*>(p), n) : std::string();
  }
  bool bad() const { return bad_; }
  std::vector<uint8_t>& bytes() { return b_; }

 private:
  std::vector<uint8_t> b_;
  size_t at_ = 0;
  bool bad_ = false;
};

}  // namespace rnic::exec
