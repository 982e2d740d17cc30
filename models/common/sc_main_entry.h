// main() for every rnicsim binary: keeps glibc's allocator from ever returning memory to the
// kernel (no mmap'd chunks, no trimming, one arena), so a program's buffer that the host model
// backs a registered frame with stays mapped after free() (models/host/phys_mem.h), and keeps
// no fast bins (a request of 1 KiB or more, a frame's, sweeps every fast bin into the heap
// first: glibc's malloc_consolidate, which a heap of gigabytes makes slow); silences
// SystemC's banner (it prints before sc_main runs unless the environment says otherwise); then
// hands over to SystemC, which calls sc_main.
#pragma once

#include <malloc.h>

#include <cstdlib>
#include <systemc>

#define RNIC_SYSTEMC_MAIN                                \
  int main(int argc, char** argv) {                      \
    mallopt(M_MMAP_MAX, 0);                              \
    mallopt(M_TRIM_THRESHOLD, -1);                       \
    mallopt(M_ARENA_MAX, 1);                             \
    mallopt(M_MXFAST, 0);                                \
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); \
    return sc_core::sc_elab_and_sim(argc, argv);         \
  }
