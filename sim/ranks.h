// The processes of one run over MPI (`mpirun -n N build/rnicsim ...`; docs/performance.md, "Runs
// over several processes"): this process's rank, how many there are, and what passes between
// them. Started without mpirun there is one rank and nothing passes; under mpirun rnicsim loads
// its MPI plugin (librnicsim_mpi.so, built where Open MPI is installed: sim/ranks_backend.h). Every
// rank runs the same elaboration, so channels registered in the same order have the same numbers
// everywhere.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rnic::ranks {

// MPI_Init when started by mpirun (its environment says so); call first thing in main.
void init(int* argc, char*** argv);
// MPI_Finalize (after the last collective call).
void finish();

int rank();
int size();
inline bool parallel() { return size() > 1; }

// A channel: bytes sent to a rank are handed to the channel's receiver there at the next
// exchange, in the order of their source rank, then of their sending.
using Receiver = std::function<void(int from, const uint8_t* data, size_t len)>;
uint32_t channel(Receiver r);
// A channel's receiver goes (its owner does); nothing more is sent on it.
void drop_channel(uint32_t ch);
// `not_before_ps`: nothing the message sets off at its receiver happens before then (it bounds
// the next window's start).
void send(int to, uint32_t ch, const void* data, size_t len, uint64_t not_before_ps);
// To every other rank.
void broadcast(uint32_t ch, const void* data, size_t len, uint64_t not_before_ps);

// The end of a window, one collective call in the common case: the ranks agree on the earliest
// next event of any (each rank's own `next_ps`, and what its messages set off), the earliest
// timer of any that does not keep the run going (`idle_ps`, StatRegistry::on_idle_timer),
// whether every rank is `done` and whether any had an `error`; when any rank sent messages they
// are then delivered (a second exchange). `send_known_ps` and `send_after_ps`: nothing this rank
// has not sent yet takes effect at another rank before min(send_known_ps, E + send_after_ps),
// E the agreed next event; the agreement carries the smallest of each over the ranks.
struct Agreement {
  uint64_t next_ps;
  bool all_done;
  bool error;
  uint64_t idle_ps;
  uint64_t send_known_ps = UINT64_MAX;
  uint64_t send_after_ps = 0;
  // A message for a time this rank has already simulated (a sender's bound broken): dropped,
  // and said here; the caller stops every rank at the next agreement.
  std::string late;
};
Agreement settle(uint64_t next_ps, bool done, bool error, uint64_t idle_ps = UINT64_MAX,
                 uint64_t send_known_ps = UINT64_MAX, uint64_t send_after_ps = 0);
// This rank has simulated every time before t_ps: a message that sets off something earlier is
// an error (Agreement::late), not a silent reordering.
void ran_until(uint64_t t_ps);
uint64_t max_all(uint64_t v);
// A value (>= 0) that one rank has, at every rank (the others give `have` false).
double from_the_one(double v, bool have);
uint64_t sum_all(uint64_t v);
void sum_all(std::vector<uint64_t>& v);
// Every rank's string, at rank 0 (empty elsewhere).
std::vector<std::string> gather(const std::string& s);
// Every rank's string, at every rank.
std::vector<std::string> all_gather(const std::string& s);

// A message's bytes: plain values one after another, in this machine's byte order (every rank
// runs the same binary on the same kind of machine).
class Packer {
 public:
  template <class T>
  Packer& put(const T& v) {
    return put_bytes(&v, sizeof(T));
  }
  Packer& put_bytes(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
    return *this;
  }
  // A string or a byte vector: its length, then its bytes (Unpacker::get_sized).
  template <class C>
  Packer& put_sized(const C& c) {
    static_assert(sizeof(*c.data()) == 1, "a string or a vector of bytes");
    return put(uint64_t(c.size())).put_bytes(c.data(), c.size());
  }
  const uint8_t* data() const { return b_.data(); }
  size_t size() const { return b_.size(); }

 private:
  std::vector<uint8_t> b_;
};

// Reads what a Packer wrote, in the same order.
class Unpacker {
 public:
  Unpacker(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  // The next n bytes (throws past the end).
  const uint8_t* take(size_t n) {
    if (size_t(end_ - p_) < n) throw std::runtime_error("ranks: a message ends early");
    const uint8_t* at = p_;
    p_ += n;
    return at;
  }
  size_t left() const { return size_t(end_ - p_); }
  // What Packer::put_sized wrote: a std::string or a std::vector<uint8_t>.
  template <class C>
  C get_sized() {
    static_assert(sizeof(typename C::value_type) == 1, "a string or a vector of bytes");
    const auto n = size_t(get<uint64_t>());
    const uint8_t* p = take(n);
    return C(p, p + n);
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace rnic::ranks
