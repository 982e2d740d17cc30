// A std::deque that takes no memory until its first element: per-QP queues of a card exist for
// every QP number the card offers (core.qps), and libstdc++'s std::deque allocates its map and a
// 512-byte node when made. A card's seven per-QP queues cost about 4 KiB a QP that way (4 MiB a
// host at 1,024 QPs) whether or not the QP is ever created. The same interface, as far as the
// card's queues use it.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <utility>

namespace rnic {

template <class T>
class LazyDeque {
 public:
  using Deque = std::deque<T>;
  using iterator = typename Deque::iterator;
  using const_iterator = typename Deque::const_iterator;

  LazyDeque() = default;
  LazyDeque(const LazyDeque& o) : d_(o.d_ ? std::make_unique<Deque>(*o.d_) : nullptr) {}
  LazyDeque& operator=(const LazyDeque& o) {
    d_ = o.d_ ? std::make_unique<Deque>(*o.d_) : nullptr;
    return *this;
  }
  LazyDeque(LazyDeque&&) noexcept = default;
  LazyDeque& operator=(LazyDeque&&) noexcept = default;

  bool empty() const { return !d_ || d_->empty(); }
  size_t size() const { return d_ ? d_->size() : 0; }
  void clear() { d_.reset(); }

  T& front() { return d_->front(); }
  const T& front() const { return d_->front(); }
  T& back() { return d_->back(); }
  const T& back() const { return d_->back(); }
  T& operator[](size_t i) { return (*d_)[i]; }
  const T& operator[](size_t i) const { return (*d_)[i]; }

  void push_back(const T& v) { made().push_back(v); }
  void push_back(T&& v) { made().push_back(std::move(v)); }
  void push_front(const T& v) { made().push_front(v); }
  void push_front(T&& v) { made().push_front(std::move(v)); }
  template <class... A>
  T& emplace_back(A&&... a) {
    return made().emplace_back(std::forward<A>(a)...);
  }
  void pop_front() { d_->pop_front(); }
  void pop_back() { d_->pop_back(); }

  iterator begin() { return d_ ? d_->begin() : none().begin(); }
  iterator end() { return d_ ? d_->end() : none().end(); }
  const_iterator begin() const { return d_ ? d_->cbegin() : none().cbegin(); }
  const_iterator end() const { return d_ ? d_->cend() : none().cend(); }
  iterator erase(const_iterator it) { return d_->erase(it); }
  iterator erase(const_iterator first, const_iterator last) { return d_->erase(first, last); }

 private:
  Deque& made() {
    if (!d_) d_ = std::make_unique<Deque>();
    return *d_;
  }
  // What an unmade queue iterates: always empty (nothing is ever put in it).
  static Deque& none() {
    static Deque empty;
    return empty;
  }
  std::unique_ptr<Deque> d_;
};

}  // namespace rnic
