// Hand-written points of the space for the two kernels the benchmarks report as a fraction of the
// machine's peak: a 1024^3 matmul and ResNet-50's first 3x3 convolution. They show the space
// contains fast schedules (tests/space checks they are valid, correct points; bench/kernels.cc
// times them and their neighbours). Programs are values aligned with build_space()'s slots.
//
//   matmul_subgraph(m, k, n)       [m,k] x [k,n] with a constant right operand, as one task
//   resnet50_conv3x3_subgraph()    conv 64->64, 3x3, pad 1 on [1,64,56,56] + relu (resnet50 task 3)
//   kMatmul1024Program, kConv3x3Program
#pragma once

#include <cstdint>
#include <vector>

#include "partition/partition.h"

namespace tlm {

Subgraph matmul_subgraph(int64_t m, int64_t k, int64_t n);
Subgraph resnet50_conv3x3_subgraph();

// GotoBLAS-like: 128-column panels per parallel task (S0); the accumulator computed per 256-row
// S1 tile; K split by 128 outside 64x4 register blocks (four 16-wide vectors x 4 rows, unrolled);
// B packed per 64-column micro-panel (contiguous, stays in L1) reused by the register blocks
// walking down the rows (S2 order: rows innermost).
extern const std::vector<int64_t> kMatmul1024Program;
// Vectorized over output channels (32 = two vectors) x 8 columns, padded input and
// channel-innermost weights packed per tile of 4 rows.
extern const std::vector<int64_t> kConv3x3Program;

}  // namespace tlm
