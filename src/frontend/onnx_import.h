// ONNX import: a .onnx file (opsets 11 to 17 of the default domain) becomes the canonical graph
// IR of docs/ir.md, built node by node through Graph::add (which infers shapes and folds nodes
// whose inputs are all constant, so PyTorch's Shape->Gather->Concat->Reshape chains vanish).
//
//   import_onnx_file / import_onnx_bytes   the entry points; every problem with the model is a
//                                          UserError naming the node, its op and the attribute
//   ImportOptions::dims                    values for symbolic input dimensions (dim_param)
//
// Where things live: onnx_import.cc checks the model as a whole (opset, graph inputs, names) and
// walks the nodes; onnx_node.h/.cc is the per-node toolkit (validated attribute and constant-input
// access); onnx_ops_*.cc hold one converter per ONNX operator, grouped by family, each turning
// ONNX's version-dependent spelling (constant inputs vs attributes, auto_pad, defaults, negative
// axes) into the one canonical form.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "graph/graph.h"

namespace tlm {

struct ImportOptions {
  // Value of each symbolic dimension (dim_param) of the graph inputs, e.g. {"batch": 1}.
  // A name that no input dimension uses is rejected.
  std::map<std::string, int64_t> dims;
};

Graph import_onnx_file(const std::string& path, const ImportOptions& opts = {});
// `what` names the model in messages (a path, or "<memory>").
Graph import_onnx_bytes(const std::string& bytes, const std::string& what,
                        const ImportOptions& opts = {});

// True if the importer knows the ONNX operator (default domain).
bool onnx_op_supported(const std::string& op_type);
// True if input `index` of `op_type` must be a constant (an initializer or something that folds
// to one), e.g. Reshape's shape (1) or Slice's starts (1).
bool onnx_input_needs_constant(const std::string& op_type, int index);

}  // namespace tlm
