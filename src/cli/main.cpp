// The `tlm` executable: everything lives in the tlm_cli library (cli/cli.h). Before anything
// loads, it fixes the environment that libtorch's BLAS and OpenMP read once, at load time, and
// re-executes itself when it had to change it:
//   OMP_WAIT_POLICY=PASSIVE     libgomp's spinning barriers make the language model up to ~50x
//                               slower when the cores are shared with measurement or compiles
//   OPENBLAS_CORETYPE=SkylakeX  OpenBLAS 0.3.21 misdetects AVX-512 Xeons (only where avx512f is)
// A variable the user set is left alone. Loading libtorch itself costs ~0.5-1 s at every start
// (linked into the binary); loading the model library on demand would remove that.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "cli/cli.h"

namespace {

bool cpu_has_avx512f() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("flags", 0) == 0) return line.find(" avx512f") != std::string::npos;
  return false;
}

// Only the commands that run the language model need it (`run --schedules tlm` too) (re-executing costs a second: libtorch
// loads twice).
bool runs_language_model(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    for (const char* cmd : {"train", "generate", "tune", "finetune", "loop"})
      if (std::strcmp(argv[i], cmd) == 0) return true;
    if (std::strncmp(argv[i], "--schedules", 11) == 0) return true;
  }
  return false;
}

void settle_environment(int argc, char** argv) {
  if (!runs_language_model(argc, argv)) return;
  bool changed = false;
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    changed = true;
  }
  if (!std::getenv("OPENBLAS_CORETYPE") && cpu_has_avx512f()) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    changed = true;
  }
  if (changed && !std::getenv("TLM_REEXECUTED")) {
    setenv("TLM_REEXECUTED", "1", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
  }
}

}  // namespace

int main(int argc, char** argv) {
  settle_environment(argc, argv);
  return tlm::run_cli(argc, argv);
}
