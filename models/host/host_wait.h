// Every wait of host software (a program's thread, the driver) goes through host_wait: the
// simulated processes share the simulator's one OS thread, so errno is theirs only if each
// keeps its own across the switch to another (saved before the wait, restored after).
#pragma once

#include <cerrno>
#include <systemc>
#include <utility>

namespace rnic::host {

template <class... A>
void host_wait(A&&... a) {
  const int e = errno;
  sc_core::wait(std::forward<A>(a)...);
  errno = e;
}

}  // namespace rnic::host
