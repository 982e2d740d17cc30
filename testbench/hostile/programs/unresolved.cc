// A program that calls a function nothing defines: it cannot load.
#include "models/host/verbs/verbs.h"

extern "C" int rnic_no_such_function(int);

RNIC_PROGRAM { return rnic_no_such_function(argc); }
