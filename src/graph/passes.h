// Graph-to-graph passes, free functions applied in a fixed order by prepare_graph().
#pragma once

#include <string>

#include "graph/graph.h"

namespace tlm {

// Folds BatchNormalization that directly follows a Conv/ConvTranspose with constant weights
// into that conv's weights and bias; rewrites other BatchNormalizations with constant
// parameters into Mul+Add with folded per-channel scale and shift.
void fold_batchnorm(Graph& g);

// Evaluates every node whose inputs are all constant and replaces it by a constant.
// (Graph::add already folds eagerly; this pass catches graphs edited after construction.)
void fold_constants(Graph& g);

// Puts the weight of a commutative binary op second: Add(W, x) and Mul(W, x), W a constant of
// more than one element and x computed, become Add(x, W) and Mul(x, W). Exporters differ (PyTorch
// writes a Linear's bias add as Add(bias, matmul)); one form makes the same computation one task
// and one tensor sentence, whichever exporter wrote it. Scalars stay where they are (they are
// printed inline, by value).
// True when it swapped any.
bool canonicalize_operands(Graph& g);

// Zero padding written as data (an imported Pad: Concat of all-zero constants and x along spatial
// axes, possibly nested) read by a Conv or an AveragePool (ceil_mode 0; with pads of its own only
// when it counts them, count_include_pad = 1) becomes that op reading x with the border added to
// its pads; the AveragePool then counts the padded zeros (count_include_pad = 1), as the Pad made
// it do. Returns the number of ops rewritten (the Concats are left to remove_dead).
int fold_zero_padding(Graph& g);

// MatMul(x, W) with a constant 2-D W [K, N] and an x whose row dims (all but the last) have two
// or more above 1, the innermost at most 28 (ConvNeXt's MLP over [1, 7, 7, K] to [1, 28, 28, K]
// tokens; passes.cc, kFlatRowWidth, says why not wider), runs over the rows flattened:
// Reshape x to [1, M, K], the MatMul, and the elementwise ops after it that apply per column (a
// bias, a scale: every other input a constant of at most one dim; single consumers) on [1, M, N],
// then a Reshape back into the value the rest of the graph reads. A register block then spans
// rows of the whole token grid (7 x 7 tokens allowed 7-row blocks only: 2.6 ms against 1.65 for
// 768 x 3072 on 49 tokens, Intel, BENCHMARKS.md session 72), and the dense task reads [1, M, K]
// as BERT-like models' do (the Reshape, kept out of its prologue, is a view). x [1, 128, K] (one
// row dim) is left as it is. Returns the number of MatMuls rewritten.
int flatten_matmul_rows(Graph& g);

// Channel-blocked activations (docs/layout.md, graph/layout.cc): 2-D convolutions whose output
// channels are a multiple of `block` become ConvNchwc over [N, C/block, H, W, block] values, and
// the elementwise ops and pools between them follow; values are converted between the layouts
// (Reshape + Transpose) only where a consumer needs the other one. Graph outputs stay NCHW, with
// their names: the graph computes the same function. 1x1 convolutions of narrow maps run over
// the flattened pixels unless `flat_pixels` is false or TLM_FLAT_PIXELS=0.
void block_channels(Graph& g, int block, bool flat_pixels = true);

// The block of a layout name: "nchw" -> 0 (none), "nchwc" -> `lanes` (the machine's vector lanes),
// "nchw<B>c" -> B (2 <= B <= 99). UserError naming the text otherwise.
int layout_block(const std::string& layout, int lanes);

// The standard pipeline run on every imported or built model before partitioning:
// fold_batchnorm, fold_constants, canonicalize_operands, fold_zero_padding, flatten_matmul_rows,
// remove_dead; then checks that every graph
// output is produced by a node or is an input, and that no value has a zero-size dimension.
void prepare_graph(Graph& g);

}  // namespace tlm
