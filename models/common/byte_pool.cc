#include "models/common/byte_pool.h"

#include <array>

namespace rnic {

namespace {

constexpr int kMinShift = 6;   // 64 B
constexpr int kMaxShift = 16;  // 64 KiB
constexpr size_t kKeptPerClass = 256;

using Pool = std::array<std::vector<Bytes>, kMaxShift - kMinShift + 1>;

// Made on a thread's first take or give and never freed (a trivial thread-local: no wrapper on
// each access); what it holds is kept until the process ends.
thread_local Pool* t_pool = nullptr;
Pool& pool() {
  if (__builtin_expect(t_pool == nullptr, 0)) t_pool = new Pool;
  return *t_pool;
}

int floor_log2(size_t v) { return 63 - __builtin_clzll(uint64_t(v)); }

}  // namespace

Bytes take_bytes(size_t capacity) {
  const int shift = capacity <= (size_t(1) << kMinShift)
                        ? kMinShift
                        : floor_log2(capacity - 1) + 1;  // the class that holds `capacity`
  if (shift > kMaxShift) {
    Bytes b;
    b.reserve(capacity);
    return b;
  }
  std::vector<Bytes>& c = pool()[size_t(shift - kMinShift)];
  if (c.empty()) {
    Bytes b;
    b.reserve(size_t(1) << shift);
    return b;
  }
  Bytes b(std::move(c.back()));
  c.pop_back();
  return b;
}

void give_bytes(Bytes&& b) {
  const size_t cap = b.capacity();
  if (cap < (size_t(1) << kMinShift)) return;
  const int shift = floor_log2(cap);  // every buffer of a class holds at least its size
  if (shift > kMaxShift) return;
  std::vector<Bytes>& c = pool()[size_t(shift - kMinShift)];
  if (c.size() >= kKeptPerClass) return;
  b.clear();
  c.push_back(std::move(b));
}

namespace {
// A shared buffer that goes back to the pool with its last owner.
struct Returned : Bytes {
  explicit Returned(Bytes&& b) : Bytes(std::move(b)) {}
  Returned(const Returned&) = delete;
  Returned& operator=(const Returned&) = delete;
  ~Returned() { give_bytes(std::move(static_cast<Bytes&>(*this))); }
};
}  // namespace

std::shared_ptr<const Bytes> share_bytes(Bytes&& b) {
  return std::make_shared<const Returned>(std::move(b));
}

size_t kept_bytes_buffers() {
  size_t n = 0;
  for (const std::vector<Bytes>& c : pool()) n += c.size();
  return n;
}

}  // namespace rnic
