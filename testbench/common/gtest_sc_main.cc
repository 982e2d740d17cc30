// main() for GoogleTest binaries that use SystemC: SystemC owns main() and calls sc_main.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/sc_main_entry.h"
#include "sim/default_rtl.h"
#include "sim/run_record.h"
#include "testbench/common/trace_option.h"

namespace rnic::tb {
std::string& trace_format() {
  static std::string f;
  return f;
}
}  // namespace rnic::tb

namespace {

extern "C" char** environ;

// Runs this binary again with `args` (the model run of --compare-with-model); its exit status.
int run_self(const std::vector<std::string>& args) {
  std::vector<char*> v;
  for (const auto& a : args) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, v.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int sc_main(int argc, char** argv) {
  const std::vector<std::string> given(argv, argv + argc);
  ::testing::InitGoogleTest(&argc, argv);
  // What GoogleTest left: `--trace fst`; `--rtl LIST|all` (the blocks every Cluster of the
  // test runs as RTL, sim/default_rtl.h); `--record FILE` (the run record, sim/run_record.h);
  // `--compare-with-model` (with --rtl: the same tests run first with models only, and the two
  // run records must be the same, or the first difference is reported and the run fails).
  std::string record;
  bool compare = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--compare-with-model") compare = true;
    if (std::string(argv[i]) == "--record" && i + 1 < argc) record = argv[i + 1];
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--rtl") {
      std::string list = argv[i + 1];
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) rnic::default_rtl().push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    }
    if (std::string(argv[i]) == "--trace") {
      rnic::tb::trace_format() = argv[i + 1];
      if (rnic::tb::trace_format() != "fst") {
        fprintf(stderr, "--trace: only fst is supported by the test benches\n");
        return 2;
      }
    }
  }
  if (compare && rnic::default_rtl().empty()) {
    fprintf(stderr, "--compare-with-model: give --rtl LIST|all too\n");
    return 2;
  }
  std::string model_record;
  if (compare) {
    const std::string base = fmt::format("/tmp/rnicsim-record-{}", ::getpid());
    model_record = base + ".model";
    record = base + ".rtl";
    std::vector<std::string> args;
    for (size_t i = 0; i < given.size(); ++i) {
      if (given[i] == "--compare-with-model") continue;
      if ((given[i] == "--rtl" || given[i] == "--record") && i + 1 < given.size()) {
        ++i;
        continue;
      }
      args.push_back(given[i]);
    }
    args.insert(args.end(), {"--record", model_record});
    const int st = run_self(args);
    if (st != 0) {
      fprintf(stderr, "--compare-with-model: the model run failed (exit %d)\n", st);
      std::remove(model_record.c_str());
      return 1;
    }
  }
  if (!record.empty()) rnic::RunRecord::get().open(record);
  int rc = RUN_ALL_TESTS();
  rnic::RunRecord::get().close();
  if (compare) {
    const std::string skip = rnic::RunRecord::not_comparable_reason(record);
    const std::string diff = skip.empty() ? rnic::RunRecord::compare(model_record, record) : "";
    if (!skip.empty()) {
      fprintf(stderr, "the RTL run is not compared with the model run: %s\n", skip.c_str());
    } else if (!diff.empty()) {
      fprintf(stderr, "the RTL run differs from the model run: %s\n", diff.c_str());
      rc = rc ? rc : 1;
    } else {
      fprintf(stderr, "the RTL run's record is the model run's (%s)\n", record.c_str());
    }
    if (!std::getenv("RNIC_KEEP_RECORD")) {
      std::remove(model_record.c_str());
      std::remove(record.c_str());
    }
  }
  return rc;
}

RNIC_SYSTEMC_MAIN
