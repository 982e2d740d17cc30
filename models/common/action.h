// A void() callable that keeps what it captures inside itself when that fits (kInline bytes),
// where std::function allocates past 16 bytes: a block's timed action (EventQueue) usually
// captures a pointer, a frame's shared pointer and a few times. Move-only; larger callables go
// to the heap as with std::function.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace rnic {

class Action {
 public:
  static constexpr size_t kInline = 96;

  Action() = default;
  template <class F, class D = std::decay_t<F>,
            std::enable_if_t<!std::is_same_v<D, Action> && std::is_invocable_v<D&>, int> = 0>
  Action(F&& f) {  // NOLINT(google-explicit-constructor): stands where a lambda is passed
    make<D>(std::forward<F>(f));
  }
  // Holds f from now on, made in place (no move of a temporary Action).
  template <class F, class D = std::decay_t<F>,
            std::enable_if_t<!std::is_same_v<D, Action> && std::is_invocable_v<D&>, int> = 0>
  void emplace(F&& f) {
    reset();
    make<D>(std::forward<F>(f));
  }
  Action(Action&& o) noexcept { take(o); }
  Action& operator=(Action&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  Action(const Action&) = delete;
  Action& operator=(const Action&) = delete;
  ~Action() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(buf_); }
  void reset() {
    if (ops_) ops_->destroy(buf_);
    ops_ = nullptr;
  }

 private:
  struct Ops {
    void (*invoke)(void*);
    void (*move)(void* from, void* to);  // constructs `to` from `from` and destroys `from`
    void (*destroy)(void*);
  };
  template <class D>
  static constexpr bool fits() {
    return sizeof(D) <= kInline && alignof(D) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<D>;
  }
  template <class D>
  static constexpr Ops kInlineOps{[](void* p) { (*static_cast<D*>(p))(); },
                                  [](void* from, void* to) {
                                    new (to) D(std::move(*static_cast<D*>(from)));
                                    static_cast<D*>(from)->~D();
                                  },
                                  [](void* p) { static_cast<D*>(p)->~D(); }};
  template <class D>
  static constexpr Ops kHeapOps{
      [](void* p) { (**static_cast<D**>(p))(); },
      [](void* from, void* to) { *static_cast<D**>(to) = *static_cast<D**>(from); },
      [](void* p) { delete *static_cast<D**>(p); }};

  template <class D, class F>
  void make(F&& f) {
    if constexpr (fits<D>()) {
      new (buf_) D(std::forward<F>(f));
      ops_ = &kInlineOps<D>;
    } else {
      *reinterpret_cast<D**>(buf_) = new D(std::forward<F>(f));
      ops_ = &kHeapOps<D>;
    }
  }
  void take(Action& o) {
    if (!o.ops_) return;
    o.ops_->move(o.buf_, buf_);
    ops_ = o.ops_;
    o.ops_ = nullptr;
  }

  alignas(std::max_align_t) unsigned char buf_[kInline];
  const Ops* ops_ = nullptr;
};

}  // namespace rnic
