// A FIFO of at most a fixed number of elements, in one array: a block's hardware queue (the
// DMAC's free tags, issue and done queues) is bounded by its depth, and a ring of that depth
// costs a mask where std::deque walks its node map. Pushing onto a full ring is a logic error.
// GrowRing below is the same without a bound.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <utility>
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

// A FIFO in one array that doubles when full: a model's unbounded queue (the packets on a link)
// without std::deque's allocation of a node each few elements. Elements are indexed from the
// front.
template <class T>
class GrowRing {
 public:
  bool empty() const { return head_ == tail_; }
  size_t size() const { return tail_ - head_; }
  T& front() { return buf_[head_ & mask_]; }
  const T& front() const { return buf_[head_ & mask_]; }
  T& operator[](size_t i) { return buf_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & mask_]; }
  void pop_front() { buf_[head_++ & mask_] = T{}; }
  // The front element goes; its slot keeps what it held (moved from, or not) until reused.
  void drop_front() { ++head_; }
  // The front element, moved out (its slot keeps the moved-from husk until reused).
  T take_front() { return std::move(buf_[head_++ & mask_]); }
  void push_back(T&& v) {
    if (size() == buf_.size()) grow();
    buf_[tail_++ & mask_] = std::move(v);
  }
  // A new element at the back, to be filled in place: its slot as the last element left it.
  T& emplace_back() {
    if (size() == buf_.size()) grow();
    return buf_[tail_++ & mask_];
  }
  // v before the element at i (i == size(): at the back); those from i on move back one.
  void insert(size_t i, T&& v) {
    push_back(std::move(v));
    for (size_t k = size() - 1; k > i; --k) std::swap((*this)[k], (*this)[k - 1]);
  }
  // The element at i goes; those after it move up one.
  void drop(size_t i) {
    for (size_t k = i; k + 1 < size(); ++k) (*this)[k] = std::move((*this)[k + 1]);
    --tail_;
  }
  // The element at i, moved out; those after it move up one.
  T take(size_t i) {
    T v = std::move((*this)[i]);
    drop(i);
    return v;
  }

 private:
  void grow() {
    std::vector<T> b(buf_.empty() ? 8 : 2 * buf_.size());
    for (size_t i = 0; i < size(); ++i) b[i] = std::move(buf_[(head_ + i) & mask_]);
    tail_ = size();
    head_ = 0;
    buf_.swap(b);
    mask_ = buf_.size() - 1;
  }
  std::vector<T> buf_;
  size_t mask_ = 0, head_ = 0, tail_ = 0;
};

}  // namespace rnic
