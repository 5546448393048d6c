// Where the CLI's models and inputs come from.
//
//   load_model(text, dims, seed)  a zoo spec ("resnet50", "bert-base:seq=128") or an .onnx path,
//                                 prepared (graph/passes.h), in the chosen activation layout,
//                                 and ready to partition
//   parse_dims(["batch=1", ...])  the --dim flags
//   random_inputs(g, seed)        seeded inputs: f32 uniform in [-1, 1); i64 (token ids) uniform
//                                 in [0, n) where n is the smallest data extent of a Gather that
//                                 indexes with the input (through reshapes), else [0, 100)
//   read_inputs(g, paths)         TensorProto files, in graph-input order, checked against g
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "runtime/random_inputs.h"  // random_inputs, used with load_model

namespace tlm {

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& flags);

// `layout`: "nchw" (as imported), "nchwc" (convolutions channel-blocked by the host's vector
// lanes, graph/passes.h block_channels), "nchw<B>c" (blocked by B) or "auto" (nchwc); UserError
// otherwise. A zoo spec's own suffix ("resnet50@nchw16c", the workload lists' spelling) wins over
// "auto" and "nchw"; any other layout that disagrees with it is an error. A model without
// convolutions is the same in every layout.
Graph load_model(const std::string& text, const std::map<std::string, int64_t>& dims,
                 uint64_t seed, const std::string& layout = "nchw");

std::vector<Tensor> read_inputs(const Graph& g, const std::vector<std::string>& paths);

}  // namespace tlm
