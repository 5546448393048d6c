#include "space/known_programs.h"

#include "graph/graph.h"
#include "support/error.h"

namespace tlm {
namespace {

using V = std::vector<int64_t>;

ValueId constant(Graph& g, const Shape& s, uint64_t seed) {
  return g.add_constant(g.unique_name("w"), random_tensor(DType::F32, s, seed));
}

Subgraph only_task(const Graph& g) {
  Partition p = partition_graph(g);
  TLM_CHECK(p.tasks.size() == 1) << "known program graphs are one task each";
  return p.tasks[0].sub;
}

}  // namespace

Subgraph matmul_subgraph(int64_t m, int64_t k, int64_t n) {
  Graph g;
  ValueId a = g.add_input("a", DType::F32, {m, k});
  g.mark_output(g.add(Op::MatMul, {a, constant(g, {k, n}, 3)}));
  return only_task(g);
}

Subgraph resnet50_conv3x3_subgraph() {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 64, 56, 56});
  ValueId y = g.add(Op::Conv, {x, constant(g, {64, 64, 3, 3}, 4)},
                    {{"strides", V{1, 1}},
                     {"dilations", V{1, 1}},
                     {"pads", V{1, 1, 1, 1}},
                     {"group", int64_t(1)}});
  g.mark_output(g.add(Op::Relu, {y}));
  return only_task(g);
}

const V kMatmul1024Program = {1,   2,  64,  // d0 (columns): S1 S2 S3 -> S0 = 8 panels of 128
                              4,   64, 4,   // d1 (rows): S0 = 1, S1 = 4 tiles of 256, S3 = 4
                              128,          // k: R1 = 128, R0 = 8
                              1,            // order: d1 innermost at S2
                              2,   0,  2,   // compute_at level 2, vectorize d0, parallel: both S0
                              0,   5,       // pack A: no, pack B: micro-panel at S2
                              32};          // unroll limit: the 4 x 4 register block

const V kConv3x3Program = {1,  7, 8,   // x: S2 = 7, S3 = 8
                           1,  2, 1,   // y: S0 = 28 tiles of 2 rows
                           1,  2, 32,  // c: S2 = 2, S3 = 32
                           3,  3, 64,  // kx, ky, ci: all in R1
                           0,          // order: x innermost at S2
                           1,  2, 3,   // compute_at level 1, vectorize c, parallel: all S0
                           2,  1,      // pack the padded input per tile, the weights once (root)
                           128};       // unroll limit: 2 x 8 block and the 3 kx taps

}  // namespace tlm
