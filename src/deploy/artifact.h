// `tlm compile`: a deployable artifact of a model with the best recorded schedules (or the
// language model's, `tlm compile --tlm`; ArtifactOptions::best is where they come in). The directory
// holds everything needed to run the model without tlm or Halide installed:
//
//   task_<id>.o / .h   one ahead-of-time compiled Halide function per task, scheduled with the
//                      task's best program in the records (tasks without one: default schedule)
//   runtime.o          Halide's runtime (thread pool, allocation), compiled once for the target
//   weights.bin        every constant the tasks read, concatenated; offsets are in model.cc
//   model.h, model.cc  tlm_model_init(weights path) / tlm_model_run(inputs, outputs): the
//                      activations at fixed offsets in one arena (runtime/memory_plan.h, as
//                      the executor lays them out), the tasks called in the partition's order
//   main.cc            the runner: loads weights and input_<i>.bin, runs, compares with
//                      expected_<i>.bin (the interpreter's outputs), times; exit 0 on PASS
//   HalideRuntime.h, build.sh    `sh build.sh` links `runner` with the system C++ compiler
//   schedules.txt      per task, the program it was compiled with ("task <id> <kind>: <sentence>",
//                      or "default")
//
// emit_artifact() writes the directory; build_and_verify_artifact() runs build.sh and the runner
// (tlm compile does both unless --no-build).
#pragma once

#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "partition/partition.h"

namespace tlm {

struct ArtifactOptions {
  std::string dir;                  // created if missing; existing files are overwritten
  std::string model_name;           // recorded in the generated files
  std::vector<std::string> best;    // per Partition::tasks entry: best sentence, marker or ""
                                    // (measure/recorded_schedules.h)
  std::vector<Tensor> inputs;       // sample inputs, written as input_<i>.bin
  std::vector<Tensor> expected;     // the reference outputs for them, expected_<i>.bin
  double atol = 1e-3, rtol = 1e-3;  // the runner's verification tolerance
};

struct ArtifactReport {
  int tasks = 0;
  int tuned_tasks = 0;       // tasks compiled with a recorded program
  int64_t weight_bytes = 0;  // size of weights.bin
};

ArtifactReport emit_artifact(const Graph& g, const Partition& p, const HardwareInfo& hw,
                             const ArtifactOptions& o);

// Runs `sh DIR/build.sh` and then `DIR/runner DIR`, echoing their output; returns the runner's
// exit code (1 when the build fails).
int build_and_verify_artifact(const std::string& dir);

}  // namespace tlm
