// A FIFO of at most a fixed number of elements, in one array: a block's hardware queue (the
// DMAC's free tags, issue and done queues) is bounded by its depth, and a ring of that depth
// costs a mask where std::deque walks its node map. Pushing onto a full ring is a logic error.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace rnic {

template <class T>
class Ring {
 public:
  explicit Ring(size_t capacity = 1) {
    size_t n = 1;
    while (n < capacity) n *= 2;
    buf_.resize(n);
    mask_ = n - 1;
  }
  bool empty() const { return head_ == tail_; }
  size_t size() const { return tail_ - head_; }
  void clear() { head_ = tail_ = 0; }
  const T& front() const { return buf_[head_ & mask_]; }
  void pop_front() { ++head_; }
  void push_back(const T& v) {
    if (size() > mask_) throw std::logic_error("Ring: push onto a full ring");
    buf_[tail_++ & mask_] = v;
  }

 private:
  std::vector<T> buf_;
  size_t mask_ = 0, head_ = 0, tail_ = 0;
};

}  // namespace rnic
