#include "sim/ranks.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "sim/ranks_backend.h"

namespace rnic::ranks {

namespace {

int g_rank = 0, g_size = 1;
const RnicsimRanksBackend* g_mpi = nullptr;
std::vector<Receiver>& receivers() {
  static std::vector<Receiver> r;
  return r;
}
// Per destination rank: (channel, length, bytes) records.
std::vector<std::vector<uint8_t>>& outbox() {
  static std::vector<std::vector<uint8_t>> o;
  return o;
}
uint64_t g_out_not_before = UINT64_MAX;  // the earliest of the messages in the outbox
bool g_out_any = false;
uint64_t g_ran_until = 0;  // this rank has simulated every time before this

void put(std::vector<uint8_t>& b, const void* p, size_t n) {
  const auto* c = static_cast<const uint8_t*>(p);
  b.insert(b.end(), c, c + n);
}

// The plugin beside rnicsim (a build tree), or in ../lib/rnicsim (an installed one).
const RnicsimRanksBackend* load_backend(std::string* why) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const std::filesystem::path& p :
       {exe.parent_path() / "librnicsim_mpi.so",
        exe.parent_path().parent_path() / "lib" / "rnicsim" / "librnicsim_mpi.so"}) {
    if (!std::filesystem::exists(p, ec)) continue;
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
      *why = dlerror();
      return nullptr;
    }
    auto entry =
        reinterpret_cast<const RnicsimRanksBackend* (*)()>(dlsym(h, "rnicsim_ranks_backend"));
    if (entry) return entry();
    *why = p.string() + " has no rnicsim_ranks_backend";
    return nullptr;
  }
  *why =
      "librnicsim_mpi.so is not beside rnicsim nor in ../lib/rnicsim (this build found no Open "
      "MPI: ./scripts/setup installs libopenmpi-dev, then rebuild)";
  return nullptr;
}

}  // namespace

void init(int* argc, char*** argv) {
  // Started by mpirun (Open MPI sets these), or by srun under Slurm with PMIx.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK")) {
    // Every rank on this machine: Open MPI's ob1 messaging over shared memory, unless the user
    // chose (its default tries UCX first, 0.2 s more start-up on one machine).
    const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (world && local && std::string(world) == local) setenv("OMPI_MCA_pml", "ob1", 0);
    std::string why;
    g_mpi = load_backend(&why);
    if (!g_mpi) {
      fmt::print(stderr, "rnicsim: started by mpirun, but {}\n", why);
      std::exit(2);
    }
    g_mpi->init(argc, argv, &g_rank, &g_size);
  }
  outbox().assign(size_t(g_size), {});
}

void finish() {
  if (g_mpi) g_mpi->finalize();
  g_mpi = nullptr;
}

int rank() { return g_rank; }
int size() { return g_size; }

uint32_t channel(Receiver r) {
  receivers().push_back(std::move(r));
  return uint32_t(receivers().size() - 1);
}

void drop_channel(uint32_t ch) {
  if (ch < receivers().size()) receivers()[ch] = [](int, const uint8_t*, size_t) {};
}

void send(int to, uint32_t ch, const void* data, size_t len, uint64_t not_before_ps) {
  if (to == g_rank || to < 0 || to >= g_size) throw std::logic_error("ranks::send: bad rank");
  std::vector<uint8_t>& b = outbox()[size_t(to)];
  const uint32_t l = uint32_t(len);
  put(b, &ch, 4);
  put(b, &l, 4);
  put(b, &not_before_ps, 8);
  put(b, data, len);
  g_out_any = true;
  g_out_not_before = std::min(g_out_not_before, not_before_ps);
}

void broadcast(uint32_t ch, const void* data, size_t len, uint64_t not_before_ps) {
  for (int r = 0; r < g_size; ++r)
    if (r != g_rank) send(r, ch, data, len, not_before_ps);
}

namespace {
// Returns what went wrong, if anything: a message for a time this rank has simulated (dropped).
std::string exchange() {
  std::string late;
  const size_t n = size_t(g_size);
  std::vector<int> scount(n), rcount(n), sdisp(n), rdisp(n);
  std::vector<uint8_t> sbuf;
  for (size_t r = 0; r < n; ++r) {
    sdisp[r] = int(sbuf.size());
    scount[r] = int(outbox()[r].size());
    sbuf.insert(sbuf.end(), outbox()[r].begin(), outbox()[r].end());
    outbox()[r].clear();
  }
  g_mpi->alltoall_int(scount.data(), rcount.data());
  int total = 0;
  for (size_t r = 0; r < n; ++r) {
    rdisp[r] = total;
    total += rcount[r];
  }
  std::vector<uint8_t> rbuf(size_t(total) + 1);
  g_mpi->alltoallv_bytes(sbuf.data(), scount.data(), sdisp.data(), rbuf.data(), rcount.data(),
                         rdisp.data());
  for (size_t r = 0; r < n; ++r) {
    size_t at = size_t(rdisp[r]);
    const size_t end = at + size_t(rcount[r]);
    while (at < end) {
      uint32_t ch = 0, len = 0;
      uint64_t not_before = 0;
      std::memcpy(&ch, &rbuf[at], 4);
      std::memcpy(&len, &rbuf[at + 4], 4);
      std::memcpy(&not_before, &rbuf[at + 8], 8);
      at += 16;
      if (ch >= receivers().size()) throw std::logic_error("ranks::exchange: unknown channel");
      // What the windows rest on: nothing arrives for a time this rank has simulated. (Not
      // thrown here: the other ranks, past this collective, would wait for this one in the next.)
      if (not_before < g_ran_until) {
        if (late.empty())
          late = fmt::format(
              "ranks: a message from rank {} sets off something at {} ps, but this rank has "
              "simulated up to {} ps",
              r, not_before, g_ran_until);
      } else {
        receivers()[ch](int(r), &rbuf[at], len);
      }
      at += len;
    }
  }
  return late;
}

}  // namespace

Agreement settle(uint64_t next_ps, bool done, bool error, uint64_t idle_ps, uint64_t send_known_ps,
                 uint64_t send_after_ps) {
  if (g_size == 1) return {next_ps, done, error, idle_ps, send_known_ps, send_after_ps, {}};
  // One MPI_MAX over seven values: the smallest times as their complements.
  uint64_t v[7] = {UINT64_MAX - std::min(next_ps, g_out_not_before),
                   done ? 0u : 1u,
                   error ? 1u : 0u,
                   g_out_any ? 1u : 0u,
                   UINT64_MAX - idle_ps,
                   UINT64_MAX - send_known_ps,
                   UINT64_MAX - send_after_ps};
  g_mpi->allreduce_u64(v, 7, 1);
  g_out_not_before = UINT64_MAX;
  g_out_any = false;
  std::string late = v[3] ? exchange() : std::string();
  return {UINT64_MAX - v[0], v[1] == 0,         v[2] != 0,      UINT64_MAX - v[4],
          UINT64_MAX - v[5], UINT64_MAX - v[6], std::move(late)};
}

void ran_until(uint64_t t_ps) { g_ran_until = std::max(g_ran_until, t_ps); }

uint64_t max_all(uint64_t v) {
  if (g_size > 1) g_mpi->allreduce_u64(&v, 1, 1);
  return v;
}

double from_the_one(double v, bool have) {
  if (g_size == 1) return v;
  // (A non-negative double's bits order as the double does; the others give 0.)
  uint64_t bits = 0;
  if (have) std::memcpy(&bits, &v, sizeof bits);
  bits = max_all(bits);
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

uint64_t sum_all(uint64_t v) {
  if (g_size > 1) g_mpi->allreduce_u64(&v, 1, 2);
  return v;
}

void sum_all(std::vector<uint64_t>& v) {
  if (g_size > 1 && !v.empty()) g_mpi->allreduce_u64(v.data(), int(v.size()), 2);
}

std::vector<std::string> all_gather(const std::string& s) {
  if (g_size == 1) return {s};
  const size_t n = static_cast<size_t>(g_size);
  std::vector<int> lens(n), disp(n);
  g_mpi->allgather_int(int(s.size()), lens.data());
  int total = 0;
  for (size_t r = 0; r < n; ++r) {
    disp[r] = total;
    total += lens[r];
  }
  std::vector<char> buf(size_t(total) + 1);
  g_mpi->allgatherv_chars(s.data(), int(s.size()), buf.data(), lens.data(), disp.data());
  std::vector<std::string> out;
  for (size_t r = 0; r < n; ++r) out.emplace_back(buf.data() + disp[r], size_t(lens[r]));
  return out;
}

std::vector<std::string> gather(const std::string& s) {
  std::vector<std::string> all = all_gather(s);
  if (g_rank != 0) return {};
  return all;
}

}  // namespace rnic::ranks
