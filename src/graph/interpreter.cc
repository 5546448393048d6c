// The reference interpreter's driver: the per-Op table (rows are eval_<Op> functions defined by
// family in interp_elemwise.cc, interp_anchor.cc, interp_reduce.cc, interp_movement.cc),
// evaluate_node(), interpret() for whole graphs, and the two shared compute helpers
// (parallel_rows, gemm_acc).
//
// interpret() frees every intermediate tensor after its last consumer ran, so whole models run
// in the memory of their widest cut. Output shapes come from shape inference; each row computes
// into a tensor of that shape, and the driver checks it did.
// Threads: compute_threads() (support/threads.h), the project's one threads knob.
#include "graph/interpreter.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "graph/interp_common.h"
#include "support/parallel.h"
#include "support/threads.h"

namespace tlm {
namespace {

constexpr EvalFn kEvalRows[] = {
#define TLM_EVAL_ROW(name, pattern) eval_##name,
    TLM_OP_LIST(TLM_EVAL_ROW)
#undef TLM_EVAL_ROW
};
static_assert(sizeof(kEvalRows) / sizeof(kEvalRows[0]) == kOpCount, "one row per Op");

}  // namespace

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (int d = (int)s.size() - 1; d >= 0; d--) {
    st[d] = acc;
    acc *= s[d];
  }
  return st;
}

void parallel_rows(int64_t n, double work, const std::function<void(int64_t, int64_t)>& fn) {
  // Below ~1 MFLOP, starting threads costs more than it saves.
  parallel_ranges(n, work < 1e6 ? 1 : compute_threads(), fn);
}

namespace {

// Blocked so that 4 rows of C (4 x kNB floats) stay in L1 and the B panel (kKB x kNB floats,
// 512 KB) in L2; the innermost loop runs over contiguous columns and vectorizes.
inline __attribute__((always_inline)) void gemm_loops(int64_t M, int64_t N, int64_t K,
                                                      const float* A, int64_t lda, const float* B,
                                                      int64_t ldb, float* C, int64_t ldc) {
  constexpr int64_t kNB = 512, kKB = 256;
  for (int64_t j0 = 0; j0 < N; j0 += kNB) {
    const int64_t nb = std::min(kNB, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += kKB) {
      const int64_t kb = std::min(kKB, K - k0);
      int64_t i = 0;
      for (; i + 4 <= M; i += 4) {
        float* __restrict c0 = C + (i + 0) * ldc + j0;
        float* __restrict c1 = C + (i + 1) * ldc + j0;
        float* __restrict c2 = C + (i + 2) * ldc + j0;
        float* __restrict c3 = C + (i + 3) * ldc + j0;
        for (int64_t k = k0; k < k0 + kb; k++) {
          const float a0 = A[(i + 0) * lda + k], a1 = A[(i + 1) * lda + k];
          const float a2 = A[(i + 2) * lda + k], a3 = A[(i + 3) * lda + k];
          const float* __restrict b = B + k * ldb + j0;
          for (int64_t j = 0; j < nb; j++) {
            c0[j] += a0 * b[j];
            c1[j] += a1 * b[j];
            c2[j] += a2 * b[j];
            c3[j] += a3 * b[j];
          }
        }
      }
      for (; i < M; i++) {
        float* __restrict c0 = C + i * ldc + j0;
        for (int64_t k = k0; k < k0 + kb; k++) {
          const float a0 = A[i * lda + k];
          const float* __restrict b = B + k * ldb + j0;
          for (int64_t j = 0; j < nb; j++) c0[j] += a0 * b[j];
        }
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same loops compiled for AVX2+FMA, used when the CPU has them: about 2x baseline SSE2.
// (An AVX-512 build of this loop nest measured slower than AVX2, so there is none.)
__attribute__((target("avx2,fma"))) void gemm_loops_avx2(int64_t M, int64_t N, int64_t K,
                                                         const float* A, int64_t lda,
                                                         const float* B, int64_t ldb, float* C,
                                                         int64_t ldc) {
  gemm_loops(M, N, K, A, lda, B, ldb, C, ldc);
}
bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#endif

}  // namespace

void gemm_acc(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
              int64_t ldb, float* C, int64_t ldc) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (have_avx2()) return gemm_loops_avx2(M, N, K, A, lda, B, ldb, C, ldc);
#endif
  gemm_loops(M, N, K, A, lda, B, ldb, C, ldc);
}

std::vector<Tensor> evaluate_node(const Graph& g, const Node& node,
                                  const std::vector<const Tensor*>& inputs) {
  TLM_CHECK(inputs.size() == node.inputs.size()) << node.name << ": " << inputs.size() << " inputs";
  for (size_t k = 0; k < inputs.size(); k++) {
    if (node.inputs[k] == kNoValue) continue;
    const Value& v = g.value(node.inputs[k]);
    TLM_CHECK(inputs[k] && inputs[k]->dtype() == v.dtype && inputs[k]->shape() == v.shape)
        << node.name << ": input " << k << " does not match value " << v.name;
  }
  const Value& out = g.value(node.outputs.at(0));
  // Shape inference admits up to 2^40 elements; materializing more than 4 GB here only
  // happens for malformed models (e.g. a constant Expand to a huge shape during folding).
  if ((double)numel(out.shape) * dtype_size(out.dtype) > std::ldexp(1.0, 32))
    TLM_NODE_ERROR(node) << "output " << dtype_name(out.dtype) << shape_str(out.shape)
                         << " is too large for the reference interpreter (over 4 GB)";
  EvalCtx c{node, inputs, out.dtype, out.shape};
  Tensor t = kEvalRows[(int)node.op](c);
  TLM_CHECK(t.dtype() == out.dtype && t.shape() == out.shape)
      << node.name << " computed " << dtype_name(t.dtype()) << shape_str(t.shape()) << ", expected "
      << dtype_name(out.dtype) << shape_str(out.shape);
  std::vector<Tensor> res;
  res.push_back(std::move(t));
  return res;
}

std::vector<Tensor> interpret(const Graph& g, const std::vector<Tensor>& inputs) {
  if (inputs.size() != g.inputs.size())
    TLM_USER_ERROR() << "graph '" << g.name << "' takes " << g.inputs.size() << " inputs, got "
                     << inputs.size();
  const size_t nv = g.values.size();
  std::vector<const Tensor*> ptr(nv, nullptr);
  std::vector<Tensor> owned(nv);
  for (size_t v = 0; v < nv; v++)
    if (g.values[v].is_constant()) ptr[v] = g.values[v].data.get();
  for (size_t k = 0; k < inputs.size(); k++) {
    const Value& v = g.value(g.inputs[k]);
    if (inputs[k].dtype() != v.dtype || inputs[k].shape() != v.shape)
      TLM_USER_ERROR() << "input '" << v.name << "' must be " << dtype_name(v.dtype)
                       << shape_str(v.shape) << ", got " << dtype_name(inputs[k].dtype())
                       << shape_str(inputs[k].shape());
    ptr[g.inputs[k]] = &inputs[k];
  }
  // Index of the last node reading each value; graph outputs live to the end.
  std::vector<int> last_use(nv, -1);
  for (size_t i = 0; i < g.nodes.size(); i++)
    for (ValueId in : g.nodes[i].inputs)
      if (in != kNoValue) last_use[in] = (int)i;
  for (ValueId o : g.outputs) last_use[o] = INT_MAX;

  for (size_t i = 0; i < g.nodes.size(); i++) {
    const Node& n = g.nodes[i];
    std::vector<const Tensor*> args;
    for (ValueId in : n.inputs) {
      if (in != kNoValue && !ptr[in])
        TLM_NODE_ERROR(n) << "reads value '" << g.value(in).name << "' before it is computed";
      args.push_back(in == kNoValue ? nullptr : ptr[in]);
    }
    std::vector<Tensor> res = evaluate_node(g, n, args);
    ValueId out = n.outputs[0];
    owned[out] = std::move(res[0]);
    ptr[out] = &owned[out];
    for (ValueId in : n.inputs)
      if (in != kNoValue && last_use[in] == (int)i && ptr[in] == &owned[in]) {
        owned[in] = Tensor();
        ptr[in] = nullptr;
      }
  }
  std::vector<Tensor> result;
  for (ValueId o : g.outputs) {
    if (!ptr[o]) TLM_USER_ERROR() << "graph output '" << g.value(o).name << "' is never computed";
    result.push_back(*ptr[o]);
  }
  return result;
}

}  // namespace tlm
