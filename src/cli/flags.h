// Flags several `tlm` subcommands share, declared in one place so that they read the same in
// every --help:
//
//   add_model_flags(cmd, ...)   MODEL (zoo spec or .onnx path), --dim NAME=VALUE, --seed
//   apply_global_threads(app)   the global --threads N -> HL_NUM_THREADS, before Halide's thread
//                               pool first starts; subcommand callbacks run inside app.parse(),
//                               so each calls it before touching Halide
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tlm {

void add_model_flags(CLI::App* cmd, std::string* model, std::vector<std::string>* dims,
                     uint64_t* seed,
                     const std::string& seed_help = "seed of the random weights (zoo) and inputs");

void apply_global_threads(CLI::App& app);

}  // namespace tlm
