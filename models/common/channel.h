// A typed, bounded channel from one block to another (DESIGN.md §4): the sender hands over a
// message stamped with the time its last beat crosses (a core edge, or now); the receiver's
// handler runs at that time in the receiver's own event queue, never inside the
// sender's. Messages are delivered in the order they were sent when their times are equal.
//
// Depth: at most `depth` messages are in flight (sent, not yet delivered). The blocks that use a
// channel keep within its depth by construction (their own queues bound what they send); a send
// beyond it is a model bug and stops the run naming the channel. The deepest it has been is
// kept (max_in_flight) for the tests that pin the bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/common/event_queue.h"
#include "models/common/trace_sink.h"

namespace rnic {

template <class T>
class Channel {
 public:
  Channel(std::string name, size_t depth) : name_(std::move(name)), depth_(depth) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // The receiving side: its event queue and what it does with each message.
  void bind(EventQueue& rx, std::function<void(T&&)> on_receive) {
    rx_ = &rx;
    on_receive_ = std::move(on_receive);
  }

  // Delivers msg at at_ps (now when earlier).
  void send(T msg, uint64_t at_ps) {
    if (!rx_) throw std::logic_error("channel " + name_ + " is not bound");
    if (in_flight_ >= depth_)
      throw std::logic_error("channel " + name_ + " overflows its depth of " +
                             std::to_string(depth_));
    ++in_flight_;
    ++sent_;
    if (in_flight_ > max_in_flight_) max_in_flight_ = in_flight_;
    rx_->at(at_ps, [this, m = std::move(msg)]() mutable {
      --in_flight_;
      on_receive_(std::move(m));
    });
  }
  void send(T msg) { send(std::move(msg), now_ps()); }

  const std::string& name() const { return name_; }
  size_t depth() const { return depth_; }
  size_t in_flight() const { return in_flight_; }
  size_t max_in_flight() const { return max_in_flight_; }
  uint64_t sent() const { return sent_; }

 private:
  std::string name_;
  size_t depth_;
  EventQueue* rx_ = nullptr;
  std::function<void(T&&)> on_receive_;
  size_t in_flight_ = 0, max_in_flight_ = 0;
  uint64_t sent_ = 0;
};

// Waveform (DESIGN.md §6): a channel named "<scope>.<name>" shows as <name>_in_flight (messages
// sent and not yet delivered: its FIFO occupancy) and <name>_sent (messages sent: each step is
// one message crossing) under <scope>.
template <class T>
void trace_channel(TraceSink& t, const Channel<T>& c) {
  const std::string& n = c.name();
  const size_t dot = n.rfind('.');
  const std::string scope = dot == std::string::npos ? "" : n.substr(0, dot);
  const std::string leaf = dot == std::string::npos ? n : n.substr(dot + 1);
  t.add_value(scope, leaf + "_in_flight", 16, [&c] { return c.in_flight(); });
  t.add_value(scope, leaf + "_sent", 32, [&c] { return c.sent(); });
}

}  // namespace rnic
