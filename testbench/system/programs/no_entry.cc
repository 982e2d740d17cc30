// A shared object without rnic_main: refused when its workload is loaded.
extern "C" int not_the_entry() { return 0; }
