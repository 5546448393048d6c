// Lowering: a task's Subgraph becomes a Halide pipeline -- the paper's *initial program* s(0)
// (§4.1) -- plus the simple default schedule that untuned models run with.
//
//   lower_subgraph(sub)       one Halide Func per IR node (elementwise epilogues and injective
//                             prologues as their own Funcs; anchors and reductions as a Func with
//                             clean pure vars and a single RDom update), one ImageParam per
//                             subgraph input with exact static bounds and dense strides; the last
//                             stage is always a pure Func (a copy when the last node is a
//                             reduction). No scheduling: every Func is inlined except the output
//                             (Funcs with an update are computed where Halide puts them).
//   apply_default_schedule(t) output tiled, parallel and vectorized; the anchor computed inside
//                             its tiles; other reductions and padding at root (schedule.cc).
//                             Runs in seconds for whole models; never tuned.
//   compile_task(t, target)   JIT-compiles; the result runs on raw tensor memory.
//   prepacked constants       a schedule may ask for a constant input (a model weight, "w*") in
//                             another layout (LoweredTask::input_storage, InputLayout: another
//                             dim order, or blocked along one dim; the packing of a whole
//                             operand at root, paid once instead of on every run);
//                             CompiledTask::prepare_input makes that copy once, when the caller
//                             binds the weights (the executor, the measurement harness, the AOT
//                             artifact's weights file), and run() makes it per call for a caller
//                             that passed dense buffers (correct, not fast).
//
// Dimension order: ONNX is row-major (last dim fastest), Halide's dim 0 is fastest, so ONNX dim
// d of a rank-r tensor is Halide dim r-1-d everywhere (halide_view() does the reversal).
// Types: f32 -> Float(32), i64 -> Int(64), bool -> UInt(8) holding 0/1 (one byte per element,
// as tlm stores bools).
// Errors: malformed IR that shape inference let through is a UserError naming the node; Halide's
// own errors (Halide::CompileError, RuntimeError, InternalError, all std::runtime_error) propagate
// as exceptions from apply_default_schedule/compile_task/run -- Halide is built with exceptions.
// Threads: compile_task and run of *different* tasks may run concurrently (tested, no lock).
#pragma once

#include <Halide.h>

#include <string>
#include <tuple>
#include <vector>

#include "partition/partition.h"

namespace tlm {

// What a stage is for; the default schedule (and the schedule space built on it) places stages
// by role.
enum class StageRole : uint8_t {
  Pure,    // elementwise, injective, zero padding, copies: inlined unless scheduled otherwise
  Anchor,  // the compute-heavy reduction of the task (conv, matmul, pooling, the sum of a Reduce)
  Reused,  // a reduction whose result every output element of a row reads (softmax max/sum,
           // layernorm mean/variance): computed once, never inlined
  Pad,     // the zero (or -inf) border around an anchor's input: pure, but worth materializing
           // so that the anchor reads dense memory instead of a clamped select per tap
};

// One Func of the lowered program, with what a scheduler needs to know about it.
struct Stage {
  Halide::Func func;
  const Node* node = nullptr;     // the IR node it computes (points into LoweredTask::sub.graph)
  std::vector<Halide::Var> vars;  // pure vars, Halide order (vars[0] is innermost)
  Halide::RDom rdom;              // reduction domain of the update, if any (anchors, reductions)
  bool has_update = false;        // true when the Func has an update definition over `rdom`
  StageRole role = StageRole::Pure;
  std::vector<int64_t> extents;   // extent of each var over the whole task, Halide order
  std::vector<int64_t> rextents;  // extent of each rdom dimension, rdom order (r[0] innermost)
};

// The layout of a constant input packed once (lower.h, prepacked constants). Either
//   order  the Halide dims innermost first (empty: dense, Halide dim order); the buffer keeps the
//          input's rank and only its strides change; or
//   block  > 0: blocked along Halide dim `block_dim` (MLAS's packed B, oneDNN's OIhw16o): that
//          dim is cut into blocks of `block` elements (the last one zero-padded) and stored
//          [block index][the other dims, Halide order][position in the block] -- a dense buffer
//          of rank + 1 whose dim 0 is the position in the block and whose last dim the block
//          index, so a register block of `block` lanes walks the other dims in one contiguous
//          stream. The program reads element i of that dim at (i % block, ..., i / block);
//          lower_subgraph() builds the input that way when asked to.
struct InputLayout {
  std::vector<int> order;
  int block_dim = -1;
  int block = 0;
  bool dense() const { return order.empty() && block == 0; }
  bool operator==(const InputLayout& o) const {
    return order == o.order && block_dim == o.block_dim && block == o.block;
  }
  bool operator<(const InputLayout& o) const {
    return std::tie(order, block_dim, block) < std::tie(o.order, o.block_dim, o.block);
  }
};

// Halide Funcs are handles: copying a LoweredTask shares its Funcs (and their schedules) with the
// original; lower again for an independent program. Copies re-point Stage::node into their own sub.
struct LoweredTask {
  Subgraph sub;                            // a copy: stages point into it
  std::vector<Halide::ImageParam> inputs;  // one per sub.graph.inputs, same order
  std::vector<Stage> stages;               // topological order; the last one is the output
  Halide::Func output() const { return stages.back().func; }
  int anchor = -1;  // index into stages of the anchor/reduction, or -1
  // Per input (empty, or one entry per input): the layout its buffer must have (dense, as
  // halide_view makes it, by default). Only constant inputs get another one
  // (space/apply_tiled.cc: a weight packed at root).
  std::vector<InputLayout> input_storage;

  LoweredTask() = default;
  LoweredTask(const LoweredTask& o);
  LoweredTask& operator=(const LoweredTask& o);
  LoweredTask(LoweredTask&&) = default;  // moving the node vector keeps the node addresses
  LoweredTask& operator=(LoweredTask&&) = default;
};

// `blocked`: empty, or one layout per input; an input whose layout has block > 0 becomes a
// blocked buffer (InputLayout) and is read through it, and input_storage records the layout.
LoweredTask lower_subgraph(const Subgraph& sub, const std::vector<InputLayout>& blocked = {});
void apply_default_schedule(LoweredTask& t, const Halide::Target& target);

// A Halide::Buffer aliasing tensor memory (no copy); dims reversed as described above.
Halide::Buffer<> halide_view(DType dtype, void* data, const Shape& shape);
// Prepacked constants (LoweredTask::input_storage): the dims (min 0, extent, stride; Halide order)
// of the buffer holding a tensor of ONNX `shape` in `layout` (rank + 1 dims when blocked), and a
// copy of a dense buffer in that layout (blocked: the padding is zero).
std::vector<halide_dimension_t> storage_dims(const Shape& shape, const InputLayout& layout);
Halide::Buffer<> packed_copy(const Halide::Buffer<>& dense, const InputLayout& layout);

class CompiledTask {
 public:
  CompiledTask() = default;
  // Runs the task: `inputs` in sub.graph.inputs order, `output` preallocated. Thread-compatible
  // (one call at a time per CompiledTask). A dense input whose program asks for another layout
  // (input_storage) is repacked for this call.
  void run(const std::vector<Halide::Buffer<>>& inputs, Halide::Buffer<>& output);
  // Input j as run() wants it: `dense` itself, or (an input the program wants in another
  // layout) a new buffer in that layout holding the same values. For constant inputs:
  // call once when binding them, pass the result to every run().
  Halide::Buffer<> prepare_input(size_t j, const Halide::Buffer<>& dense) const;
  // True when some input wants another layout than the dense one.
  bool has_prepacked_inputs() const;

 private:
  friend CompiledTask compile_task(const LoweredTask& t, const Halide::Target& target);
  bool in_layout(size_t j, const Halide::Buffer<>& b) const;
  Halide::Pipeline pipeline_;
  std::vector<Halide::ImageParam> params_;
  std::vector<InputLayout> input_storage_;
  Halide::Target target_;
};

// JIT-compiles the (scheduled) lowered task. Compilation of different tasks may run
// concurrently in separate threads.
CompiledTask compile_task(const LoweredTask& t, const Halide::Target& target);

// Writes what Halide makes of the (scheduled) task for `target`, for reading: the lowered
// statement (`<prefix>.stmt`, loops and allocations after scheduling) and the assembly
// (`<prefix>.s`). UserError when a file cannot be written.
void write_task_code(const LoweredTask& t, const Halide::Target& target, const std::string& prefix);

// The target tlm compiles for: the host, with its vector ISA features (AVX-512 where the CPU has
// it). The first call also fixes Halide's thread pool size: export_halide_threads()
// (support/threads.h).
Halide::Target host_target();

}  // namespace tlm
