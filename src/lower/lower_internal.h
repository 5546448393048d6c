// Private to src/lower: the state shared by the per-family lowering files (anchors.cc,
// reductions.cc, elementwise.cc, injective.cc) and the driver (lower.cc).
//
//   Ctx        the program being built: how each IR value is read, the stages made so far.
//   Index      an element index in ONNX order (idx[d] for ONNX dim d); read() reverses it into
//              Halide order. Every lowering writes its formulas in ONNX order.
//   new_func   a Func with fresh pure vars; add_stage registers it; bind() makes it the value
//              of a node's output.
//   lower_<Op> one function per row of graph/op.h, gathered into a table in lower.cc.
//
// Value types: f32 -> Float(32), i64 -> Int(64), bool -> UInt(8) holding 0/1 (a bool tensor is
// one byte per element, and UInt(8) loads/stores it without Halide's 1-bit bool handling).
#pragma once

#include <Halide.h>

#include <string>
#include <vector>

#include "lower/lower.h"

namespace tlm {
namespace lower_detail {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

using Index = std::vector<Expr>;

// How one IR value is read inside the program.
struct Source {
  enum Kind { kNone, kScalar, kFunc, kParam, kBuffer } kind = kNone;
  Expr scalar;               // kScalar: a constant with one element, baked in
  Func func;                 // kFunc: the Func of the node that produces it
  Halide::ImageParam param;  // kParam: a subgraph input
  int block_dim = -1;        // kParam of a blocked input (InputLayout): the Halide dim cut into
  int block = 0;             // blocks of `block`, read at (i % block, ..., i / block)
  Halide::Buffer<> buffer;   // kBuffer: a constant with several elements, copied into the program
};

struct Ctx {
  const Graph& g;
  std::vector<Source> src;  // by ValueId
  std::vector<Stage> stages;
  int anchor = -1;
  int name_counter = 0;
  explicit Ctx(const Graph& graph) : g(graph), src(graph.values.size()) {}
};

// A Func with fresh pure vars. vars are in Halide order; idx[d] = vars[rank-1-d] (ONNX order).
struct PureFunc {
  Func f;
  std::vector<Var> vars;
  Index idx;
  Shape shape;  // ONNX order
};

Halide::Type halide_type(DType t);
const Shape& shape_of(const Ctx& c, ValueId v);

// The element of value `v` at `idx` (ONNX order, one entry per dim of v).
Expr read(const Ctx& c, ValueId v, const Index& idx);
// numpy broadcasting: the index into a value of shape `in` for output element `out_idx`.
Index broadcast_index(const Shape& in, const Shape& out, const Index& out_idx);

// A new Func named after the node plus `what`, with `shape.size()` pure vars.
PureFunc new_func(Ctx& c, const Node& n, const std::string& what, const Shape& shape);
// An RDom over `extents` (ONNX order: extents[0] is the outermost reduction loop), returned with
// its vars in ONNX order too: rv[j] goes with extents[j].
struct Reduction {
  Halide::RDom rdom;
  std::vector<Expr> rv;           // ONNX order
  std::vector<int64_t> rextents;  // rdom order (innermost first)
};
Reduction new_rdom(Ctx& c, const Node& n, const std::string& what,
                   const std::vector<int64_t>& extents);

// Registers a stage; returns its index. `r` is given for stages with an update definition.
int add_stage(Ctx& c, const PureFunc& p, const Node& n, StageRole role,
              const Reduction* r = nullptr);
// Makes p.f the value of the node's (single) output.
void bind(Ctx& c, const Node& n, const PureFunc& p);

// A Pad stage equal to value `v` inside [0, shape) and to `pad` outside; reads are clamped so
// bounds inference stays inside the value. Used for convolution/pooling borders; read it with
// call().
PureFunc pad_value(Ctx& c, const Node& n, ValueId v, Expr pad);
Expr call(const PureFunc& p, const Index& idx);  // p.f at an ONNX-order index

// Attribute helpers that turn malformed attributes into user errors naming the node.
std::vector<int64_t> ints_n(const Node& n, const std::string& key, size_t count, int64_t def);
[[noreturn]] void bad_node(const Node& n, const std::string& what);

#define TLM_LOWER_DECL(name, pattern) void lower_##name(Ctx& c, const Node& n);
TLM_OP_LIST(TLM_LOWER_DECL)
#undef TLM_LOWER_DECL

}  // namespace lower_detail
}  // namespace tlm
