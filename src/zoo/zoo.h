// The model zoo: training workloads by name, built directly as canonical graph IR (docs/ir.md)
// with random weights, so no model file is needed to tune a well-known network.
//
//   parse_zoo_spec("bert-base:seq=64,batch=2")  name plus optional key=value overrides; every
//                                               key is checked against the model's parameter
//                                               table (unknown keys and bad values are UserErrors
//                                               that list the valid choices)
//   build_zoo_model(text, seed)                 the Graph; weights are drawn from `seed`
//   zoo_models()                                one ZooInfo per model, for `tlm zoo`
//
// Graph inputs: image models "input" f32 [batch,3,image,image] (r3d_18: [batch,3,frames,image,
// image]); token models (bert-*, gpt2) "input_ids" i64 [batch,seq]; llama_layer "input" f32
// [batch,seq,hidden] (it is a decoder layer, fed hidden states); dcgan "z" f32 [batch,nz,1,1].
// The CNN families mirror torchvision 0.14's ONNX export node for node after prepare_graph()
// (tests/zoo/torchvision_parity_test.cc checks the partitioned task lists agree).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tlm {

struct ZooSpec {
  std::string name;                       // "resnet50"
  std::map<std::string, int64_t> params;  // every parameter of the model, defaults filled in
};

struct ZooParamInfo {
  std::string name;  // "image"
  int64_t def = 0;   // default value
  int64_t min = 1;   // accepted range, inclusive
  int64_t max = 1;
  std::string help;  // one line
};

struct ZooInfo {
  std::string name;         // "resnet50"
  std::string family;       // "cnn", "transformer", "generative"
  std::string description;  // one line
  std::vector<ZooParamInfo> params;
};

// "name" or "name:key=value,key=value". UserError on an unknown model, an unknown or repeated
// key, a non-numeric or out-of-range value.
ZooSpec parse_zoo_spec(const std::string& text);

// Parses `text` and builds the model. Architectural constraints that the parameter ranges cannot
// express (heads must divide hidden, image too small for the downsampling) are UserErrors.
Graph build_zoo_model(const std::string& text, uint64_t seed = 0);

// True if the part of `text` before any ':' is the name of a zoo model.
bool is_zoo_name(const std::string& text);

std::vector<ZooInfo> zoo_models();

}  // namespace tlm
