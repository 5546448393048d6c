// Flags several `tlm` subcommands share, declared in one place so that they read the same in
// every --help:
//
//   add_model_flags(cmd, ...)   MODEL (zoo spec or .onnx path), --dim NAME=VALUE, --seed,
//                               --layout (auto | nchw | nchwc | nchw<B>c: graph/passes.h block_channels)
//   describe_inputs(g)          "input f32[1,3,224,224], ..." for the first line of a command
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tlm {

void add_model_flags(CLI::App* cmd, std::string* model, std::vector<std::string>* dims,
                     uint64_t* seed, std::string* layout,
                     const std::string& seed_help = "seed of the random weights (zoo) and inputs");

std::string type_str(const Value& v);  // "f32[1,3,224,224]"
std::string describe_inputs(const Graph& g);

}  // namespace tlm
