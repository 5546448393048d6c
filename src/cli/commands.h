// The `tlm` subcommands as plain functions of their options; cli.cc parses flags into these
// structs and maps exceptions to exit codes. Each returns the process exit code.
//
//   cmd_zoo()       list zoo models and their parameters
//   cmd_extract(o)  print the task table of a model
//   cmd_run(o)      compile with default schedules, verify against the reference interpreter,
//                   time, print per-task and end-to-end latency
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlm {

struct ExtractOptions {
  std::string model;              // zoo spec or .onnx path
  std::vector<std::string> dims;  // --dim NAME=VALUE
  uint64_t seed = 0;              // zoo weights
};

struct RunOptions {
  std::string model;
  std::vector<std::string> dims;
  uint64_t seed = 0;                // zoo weights and random inputs
  std::vector<std::string> inputs;  // --input IN.pb, graph-input order; empty: random inputs
  std::string output;               // --output OUT.pb: the first output as a TensorProto
  int repeat = 10;                  // timed runs; the median is reported
  int warmup = 2;                   // untimed runs before them
  int threads = 0;                  // compile threads; 0: one per core
  bool verify = true;               // compare with the reference interpreter
  // Verification passes when |got - ref| <= atol + rtol * |ref| everywhere (max_rel_violation
  // <= 1). Both sides compute in f32 but sum in different orders; 1e-3 leaves room for that
  // over deep networks while still catching any indexing or fusion bug.
  double atol = 1e-3;
  double rtol = 1e-3;
};

int cmd_zoo();
int cmd_extract(const ExtractOptions& o);
int cmd_run(const RunOptions& o);

}  // namespace tlm
