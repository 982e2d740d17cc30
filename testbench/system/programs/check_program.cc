// A verbs program for the `programs` check: `globals KEY` counts its runs in a global (each
// simulated process has its own copy, so the count must be 1) and keeps errno across a wait;
// `exit N` returns N.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "models/host/verbs/verbs.h"

static int g_runs = 0;

RNIC_PROGRAM {
  if (argc == 3 && std::strcmp(argv[1], "exit") == 0) return std::atoi(argv[2]);
  if (argc != 3 || std::strcmp(argv[1], "globals") != 0) return 100;
  ++g_runs;
  errno = 1000 + g_runs;
  rnic_spend_ns(1000);  // the other processes run meanwhile
  const int e = errno;
  rnic_oob_put(argv[2], &g_runs, sizeof g_runs);
  return g_runs == 1 && e == 1001 ? 0 : 10 + g_runs;
}
