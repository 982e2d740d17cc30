// A shared object whose rnic_main is an int, not a function.
extern "C" int rnic_main = 7;
