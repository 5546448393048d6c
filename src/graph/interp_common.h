// Private helpers shared by shape inference (shape_infer.cc) and the reference interpreter
// (interpreter.cc, interp_*.cc); not part of the graph API.
//
//  TLM_NODE_ERROR(node)   a UserError prefixed with "<Op> node '<name>': "
//  resolve_slice()        ONNX clamping of one Slice dimension, used by both sides so that the
//                         inferred extent and the interpreted elements cannot disagree
//  EvalCtx, EvalFn        the interpreter's per-op row signature; the rows live in interp_*.cc
//  parallel_rows()         splits a range over std::thread for the big anchors
//  gemm_acc()             the one matrix kernel behind Conv, ConvTranspose, MatMul and Gemm
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/graph.h"

#define TLM_NODE_ERROR(node) \
  TLM_USER_ERROR() << ::tlm::op_name((node).op) << " node '" << (node).name << "': "

namespace tlm {

// Extents beyond this (per dimension and per tensor) are rejected as malformed: they cannot be
// real models and would overflow int64 index arithmetic.
constexpr int64_t kMaxExtent = int64_t(1) << 40;

struct SliceDim {
  int64_t start = 0;  // first element read (valid only when extent > 0)
  int64_t step = 1;
  int64_t extent = 0;  // number of elements read
};

// ONNX Slice semantics for one dimension of size `dim` (>= 0); step != 0.
inline SliceDim resolve_slice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
  SliceDim s;
  s.step = step;
  if (dim == 0) return s;  // nothing to read (the clamping below assumes dim >= 1)
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = clamp(start, 0, dim);
    end = clamp(end, 0, dim);
  } else {
    start = clamp(start, 0, dim - 1);
    end = clamp(end, -1, dim - 1);
  }
  s.start = start;
  int64_t diff = end - start;  // both in [-1, dim]: cannot overflow
  // max(0, ceil(diff / step)), written so that |step| up to 2^63 cannot overflow.
  if (step > 0)
    s.extent = diff > 0 ? (diff - 1) / step + 1 : 0;
  else
    s.extent = diff >= 0 ? 0 : step == INT64_MIN ? 1 : (-diff - 1) / -step + 1;
  return s;
}

// What one interpreter row sees: the node, its input tensors (nullptr for an absent optional
// input) and the already-inferred output dtype and shape.
struct EvalCtx {
  const Node& node;
  const std::vector<const Tensor*>& in;
  DType out_dtype;
  const Shape& out_shape;
};
using EvalFn = Tensor (*)(const EvalCtx&);

// Row-major strides of a shape.
std::vector<int64_t> strides_of(const Shape& s);

// Runs fn(begin, end) over [0, n) split into contiguous chunks, one per hardware thread, when
// `work` (a rough operation count) is large enough to pay for thread start-up.
void parallel_rows(int64_t n, double work, const std::function<void(int64_t, int64_t)>& fn);

// C[M,N] += A[M,K] * B[K,N] (row-major with leading dimensions), single-threaded; callers split
// rows across threads. Loop order keeps the innermost loop on contiguous N so it vectorizes.
void gemm_acc(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
              int64_t ldb, float* C, int64_t ldc);

// Per-family interpreter rows (interp_elemwise.cc, interp_anchor.cc, interp_reduce.cc,
// interp_movement.cc).
#define TLM_DECLARE_EVAL(name, pattern) Tensor eval_##name(const EvalCtx& c);
TLM_OP_LIST(TLM_DECLARE_EVAL)
#undef TLM_DECLARE_EVAL

}  // namespace tlm
