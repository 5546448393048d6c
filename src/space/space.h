// The space builder (paper §4.1): for a lowered task, the ordered list of decisions a schedule
// must make, each with its set of valid values; a Program is one value per decision position;
// replaying a Program on the task's initial program (lower_subgraph) gives a scheduled Halide
// pipeline.
//
//   build_space(task, hw)       derives the decision slots from sketch rules in the spirit of
//                               Ansor's CPU rules (rules.cc): multi-level tiling of the anchor
//                               (4 levels on spatial axes, 2 on reduction axes: SSRSRS), where
//                               the accumulator is computed in the fused epilogue's tiles,
//                               packing of operands inside a tile (Func::in()), parallel outer
//                               loops, the vectorized axis, unrolling; rules for reductions
//                               (rfactor, where the Reused stages are computed) and injective
//                               tasks.
//   next_options(space, prefix) the valid values of the next position given the values before
//                               it (tile factors divide what earlier factors left of the var's
//                               extent, or of its padded extent after a pad decision; compile-time
//                               explosions are never offered). Sampling, the language model and
//                               the search all choose through this one function, so everything
//                               they produce is valid by construction.
//   apply_program(...)          deterministic replay: the same Program always gives the same
//                               Halide schedule (apply_tiled.cc, apply_rows.cc).
//
// A schedule is a value (STYLE.md habit 1): a Program is a plain vector of small integers aligned
// with the space's slots. The sentence writer prints slot_header() + the slot's values.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "lower/lower.h"

namespace tlm {

// One row per kind in space/steps.cc (name token, options, how its values enter a schedule, how
// they read in words, their cost-model features); kStepKindCount is static_asserted there.
enum class StepKind : uint8_t {
  Tile,       // split a loop into levels; values: inner factors, outermost first (a divisor chain)
  ComputeAt,  // where a stage is computed; the levels are listed per rule in rules.cc
  Pack,       // copy an operand tile into a contiguous buffer at a loop level (0 = no packing)
  Vectorize,  // which pure var of a stage is vectorized innermost (index into its vars; -1 none)
  Parallel,   // how many outermost tile loops are fused and run in parallel
  Unroll,     // an unroll limit: the innermost loops whose extents multiply to <= it are unrolled
  RFactor,    // reductions: 0 = serial, f = split the innermost reduction loop by f and keep f
              // vectorized partial results (Halide rfactor)
  Order,      // loop order where it matters: which var's loop is innermost in a tile level
  Pad,        // tile a var as if its extent were rounded up to a multiple m (1 = not padded), so
              // extents without good divisors (7, 56, 1024 for 6-row blocks, 50257) get
              // register- and vector-friendly tiles; the last tile is shifted inwards (it
              // recomputes a little of its neighbour's) and the waste is bounded
};
constexpr int kStepKindCount = 9;

// Which family of rules shaped a task's space.
enum class SpaceRule : uint8_t {
  TiledAnchor,  // conv / matmul / dense whose epilogue has the anchor's shape: SSRSRS tiling
  Rows,         // everything else: the output tiled once, reductions computed at root or in tiles
};

// One decision the schedule must make.
struct Slot {
  StepKind kind;
  int stage = -1;          // index into TaskSpace::stages (= LoweredTask::stages)
  int var = -1;            // pure var (Halide order), rdom dimension, or operand index (Pack)
  bool reduction = false;  // Tile: var indexes the rdom rather than the pure vars
  int64_t extent = 0;      // Tile: the extent split; Pad: the extent rounded up
  int arity = 1;           // values the slot takes (3 for a 4-level spatial tile)
  std::string subject;     // stable, human-readable name, e.g. "f1_conv.d0", "f1_conv.pack.in0_x"
};

// An operand the anchor's update reads: a stage or a task input.
struct SpaceOperand {
  int stage = -1;    // index into stages, or -1
  int input = -1;    // index into LoweredTask::inputs, or -1
  std::string name;  // stable name (for slot subjects)
  // How the anchor's update indexes it (its first call there): per argument (the operand's dims,
  // innermost first), the coefficient of each of the anchor's vars (Halide order) and then of
  // each reduction dim (rdom order); kNotAffine where the argument is not affine in that one
  // (e.g. a prepacked block's i % 16). A conv's input: x * stride + r_x. Cost-model features
  // (features.h) read footprints from it; the schedule does not.
  std::vector<std::vector<int64_t>> index;
};
constexpr int64_t kNotAffine = -1;

// What the rules saw of one lowered stage; enough to list options without Halide.
struct SpaceStage {
  std::string name;  // Halide Func name without Halide's "$n" uniquifier (stable across lowerings)
  StageRole role = StageRole::Pure;
  std::vector<int64_t> extents;        // Halide order
  std::vector<int64_t> rextents;       // rdom order (empty without an update)
  int lanes = 1;                       // native vector lanes for its element type
  std::vector<int> consumers;          // stages whose definitions call it directly
  std::vector<SpaceOperand> operands;  // TiledAnchor anchor: what its update reads, in order
};

struct TaskSpace {
  SpaceRule rule = SpaceRule::Rows;
  int anchor = -1;  // TiledAnchor: the anchor stage
  std::vector<SpaceStage> stages;
  std::vector<Slot> slots;
  // log10 of the number of distinct programs (the paper reports ~10^6 per CPU subgraph); option
  // counts depend on earlier values, so this is Knuth's unbiased path estimate (steps.cc).
  double log10_size = 0;
  // The anchor is a dense (group 1) channel-blocked convolution, ConvNchwc: its programs can split
  // the output's channel blocks or its rows between threads (row_split.cc).
  bool blocked_conv = false;
  // The task slices a value with a step above 1 (ResNet's downsampling shortcuts: a 1x1
  // convolution over the flattened pixels of every other input pixel, session 62): the experts of
  // a 1x1 anchor also copy its input densely once per run (expert.cc).
  bool strided_input = false;
  // The anchor's first input is converted from the plain layout inside the task (a Transpose
  // prologue: ConvNeXt's depthwise convolutions read the residual stream that its LayerNorm and
  // linear layers keep plain): the experts of a blocked convolution with kernel taps read it
  // copied once per run instead of through the Transpose at every tap (expert.cc).
  bool converted_input = false;
};

// A program: for every slot, its `arity` values, flattened in slot order.
struct Program {
  std::vector<int64_t> values;
  bool operator==(const Program& o) const { return values == o.values; }
  bool operator!=(const Program& o) const { return values != o.values; }
};

TaskSpace build_space(const LoweredTask& task, const HardwareInfo& hw);

// Valid values for the next position, given `prefix` (all values chosen so far, flattened in
// slot order). Never empty for a valid prefix shorter than program_length(); empty when the
// prefix is complete. Only meaningful for a valid prefix (is_valid_program checks programs).
std::vector<int64_t> next_options(const TaskSpace& space, const std::vector<int64_t>& prefix);

// Number of values a complete program has.
size_t program_length(const TaskSpace& space);

// The most outer loops any of p's Parallel slots fuses into its parallel loop (0: p runs on one
// thread).
int64_t parallel_loops(const TaskSpace& space, const Program& p);

// The largest stage's iterations: its pure extents times its reduction extents.
double largest_stage_work(const TaskSpace& space);
// At two or more cores, a task whose largest stage runs at least this many iterations (2^18, e.g.
// BERT-base's GELU over 128 x 3072) is not left on one thread: among the records at two cores a
// serial program was the fastest in 1 of 84 tasks whose best took >= 100 us (BENCHMARKS.md, "AVX2
// again"), and in 1 of the 440 Intel training tasks' best programs (session 49). The language
// model's generation (model/generate.h) and the zero-shot ranking (tune/lm_search.h) hold to it;
// the space itself keeps serial programs (search may still measure them).
constexpr double kParallelWork = 1 << 18;
// Whether a task at this many cores must have a parallel loop under the bound `work` (< 0: never).
inline bool needs_parallel_loop(const TaskSpace& space, int cores, double work) {
  return work >= 0 && cores >= 2 && largest_stage_work(space) >= work;
}

// Random sampling (the paper's; Ansor's too): uniform choice at every position, except rows with a
// prior on their first option (a pad slot keeps its extent with chance 3/4, steps.cc).
Program sample_program(const TaskSpace& space, std::mt19937_64& rng);

// Expert programs (expert.cc): a few points of a task's space written from what fast CPU kernels
// do (TiledAnchor: register blocks that fit hw's vector registers, K chunks, packed panels, and
// convolutions also vectorized along their width with output channels as rows; Rows:
// the contiguous var vectorized, reductions vectorized or rfactored, in the tile or at root),
// each valid by construction; distinct, in a fixed order. Empty only when the space has a single
// program.
// They seed measurement; like every program they are checked and timed before they count.
std::vector<Program> expert_programs(const TaskSpace& space, const HardwareInfo& hw);
// One of them, MLAS's pointwise loop order (a dense channel-blocked 1x1 convolution of unit stride
// on AVX-512: the input blocks summed 8 at a time outside the register blocks' walk over whole
// output rows, each weight read once per tile): false for any other task. The zero-shot ranker's
// weight rule puts it first (tune/lm_search.h, ZeroShotOptions::pointwise_weights).
bool pointwise_expert(const TaskSpace& space, const HardwareInfo& hw, Program* out);
// True when `p` is one of the streaming experts over a weight packed once (a matrix product whose
// weight is larger than hw's last-level cache, e.g. GPT-2's 768 x 50257 logits: the weight
// blocked by the register block's width when the model loads, read in long K chunks by every row
// block of an S0 tile). The zero-shot ranker's streamed-weight rule puts the first of them first
// (tune/lm_search.h, ZeroShotOptions::streamed_root).
bool streamed_root_expert(const TaskSpace& space, const HardwareInfo& hw, const Program& p);
// Copy twins: two programs that differ only in one Pack slot, one reading the operand where it
// lies and the other copying it at root (e.g. a blocked 3x3 convolution's expert and its twin
// with the padded input copied). The zero-shot ranker's order keeps them side by side
// (tune/lm_search.h, ZeroShotOptions::copy_twins).
bool copy_twins(const TaskSpace& space, const Program& a, const Program& b);

// Row splits (row_split.cc). At two or more threads, a blocked convolution whose parallel loop
// splits the output's channel blocks makes every thread read its whole input, half of it written
// by the other core; in these VMs' slow mode that costs ResNet-50's 1x1 convolutions up to 2x
// inside the model, while the task timed alone (its input hot) cannot tell (BENCHMARKS.md, "Row
// splits"). Splitting rows keeps each core on the rows it wrote when the producer splits rows too.
//   splits_rows(space, p, threads)        p's parallel loop splits the output's rows: the
//                                         channel-block var's S0 loop has extent 1 and the rows'
//                                         S0 loop, of extent >= threads, is fused into it
//   row_split_variant(space, p, threads)  p with the channel blocks' S0 factor moved into S1 (pad
//                                         dropped) and the parallel loop widened to the rows; false
//                                         when p splits rows already, the space is not a blocked
//                                         convolution's, or the variant is not a valid program
//   row_split_shared_bytes(space)         bytes of the anchor's operands that the rows do not
//                                         index (a convolution's weights): under a row split every
//                                         thread reads all of them (SpaceOperand::index; f32)
bool splits_rows(const TaskSpace& space, const Program& p, int threads);
bool row_split_variant(const TaskSpace& space, const Program& p, int threads, Program* out);
int64_t row_split_shared_bytes(const TaskSpace& space);

// True when the program has program_length() values, each among next_options of its prefix.
bool is_valid_program(const TaskSpace& space, const Program& p);

// Replays the program as a Halide schedule on `task` (freshly lowered: schedules accumulate on
// Halide Funcs). UserError when the program does not belong to this space or the task does not
// match it.
void apply_program(LoweredTask& task, const TaskSpace& space, const Program& p);

// Ascending divisors of n (n >= 1): the options of a tile factor are the divisors of what the
// earlier factors of its slot left.
std::vector<int64_t> divisors(int64_t n);

// The values of a Pad slot of a var of this extent: m = 1 (not padded) and each modulus m whose
// rounded-up extent is new (not the extent, not reached by a smaller m) and wastes at most a
// seventh of it (7 -> 8, 56 -> 64 and 1024 -> 1026 qualify; 7 -> 12 does not). A var gets a Pad
// slot only when this offers more than m = 1.
std::vector<int64_t> pad_options(int64_t extent);

// Printing, for sentences and debugging.
const char* step_kind_name(StepKind k);  // "tile", "compute_at", ...
// What one decision's values mean, in words (no header): "7 x 2 x 4 [outer 1]", "level 2", ...
std::string describe_decision(const TaskSpace& space, const Slot& slot, const int64_t* values);
std::string slot_header(const Slot& s);  // "tile f1_conv.d0 56"
// One line per slot: header then its values ("tile f1_conv.d0 56 = 1 4 2").
std::string program_str(const TaskSpace& space, const Program& p);
// The Halide loop nest of an applied task (Halide's print_loop_nest), for determinism checks.
std::string loop_nest_str(const LoweredTask& task);

}  // namespace tlm
