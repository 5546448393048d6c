// Whole lowered programs: fused subgraphs as the partitioner makes them (conv+bias+relu+residual,
// reshape->transpose->matmul prologue, scaled softmax, ...), odd extents, rank-0 and rank-5
// tensors, constants baked in; the unscheduled program against the scheduled one; the plumbing
// (stage metadata, halide_view, rebinding inputs per run, concurrent compilation, Halide errors
// as exceptions, bad IR as UserErrors naming the node).
#include <algorithm>
#include <thread>

#include "hardware/hardware.h"
#include "lower/harness.h"

namespace tlm::testing_lower {
namespace {

constexpr DType kF = DType::F32, kI = DType::I64, kB = DType::Bool;

ValueId constant(Graph& g, Tensor t) { return g.add_constant(g.unique_name("c"), std::move(t)); }
ValueId scalar(Graph& g, float v) { return constant(g, Tensor::scalar<float>(v)); }

ValueId conv3x3(Graph& g, ValueId x, int64_t cout, bool bias) {
  int64_t cin = g.value(x).shape[1];
  std::vector<ValueId> ins = {x, in(g, {cout, cin, 3, 3})};
  if (bias) ins.push_back(in(g, {cout}));
  return g.add(Op::Conv, ins,
               {{"strides", Is({1, 1})},
                {"dilations", Is({1, 1})},
                {"pads", Is({1, 1, 1, 1})},
                {"group", I(1)}});
}

std::vector<Builder> fused_cases() {
  return {
      {"conv_bias_relu_residual",
       [](Graph& g) {
         ValueId x = in(g, {1, 6, 7, 13});
         ValueId y = conv3x3(g, x, 6, true);
         y = g.add(Op::Add, {y, in(g, {1, 6, 7, 13})});
         return g.add(Op::Relu, {y});
       }},
      {"reshape_transpose_matmul",
       [](Graph& g) {
         ValueId x = g.add(Op::Reshape, {in(g, {2, 6, 8})}, {{"shape", Is({2, 6, 2, 4})}});
         x = g.add(Op::Transpose, {x}, {{"perm", Is({0, 2, 1, 3})}});
         return g.add(Op::MatMul, {x, in(g, {4, 5})});
       }},
      {"scaled_masked_softmax",
       [](Graph& g) {
         ValueId s = g.add(Op::MatMul, {in(g, {2, 7, 8}), in(g, {2, 8, 7})});
         s = g.add(Op::Mul, {s, scalar(g, 0.35f)});
         s = g.add(Op::Where, {in(g, {7, 7}, kB), s, scalar(g, -1e4f)});
         return g.add(Op::Softmax, {s}, {{"axis", I(2)}});
       }},
      {"softmax_div_scale",
       [](Graph& g) {
         ValueId s = g.add(Op::Div, {in(g, {3, 13}), scalar(g, 8.f)});
         return g.add(Op::Softmax, {s}, {{"axis", I(1)}});
       },
       {{0, {-40, 40}}}},
      {"gemm_bias_tanh",
       [](Graph& g) {
         ValueId y =
             g.add(Op::Gemm, {in(g, {7, 13}), in(g, {5, 13}), in(g, {5})},
                   {{"alpha", F(1.f)}, {"beta", F(1.f)}, {"transA", I(0)}, {"transB", I(1)}});
         return g.add(Op::Tanh, {y});
       }},
      {"matmul_gelu_erf",
       [](Graph& g) {
         ValueId y = g.add(Op::MatMul, {in(g, {1, 7, 16}), in(g, {16, 13})});
         ValueId e = g.add(Op::Erf, {g.add(Op::Div, {y, scalar(g, 1.41421356f)})});
         e = g.add(Op::Add, {e, scalar(g, 1.f)});
         return g.add(Op::Mul, {g.add(Op::Mul, {y, e}), scalar(g, 0.5f)});
       }},
      {"layernorm_residual",
       [](Graph& g) {
         ValueId y = g.add(Op::LayerNormalization, {in(g, {2, 7, 16}), in(g, {16}), in(g, {16})},
                           {{"axis", I(2)}, {"epsilon", F(1e-5f)}});
         return g.add(Op::Add, {y, in(g, {2, 7, 16})});
       }},
      {"reduce_mean_sub_pow",  // the first half of a hand-written layernorm
       [](Graph& g) {
         ValueId x = in(g, {2, 13});
         ValueId m = g.add(Op::ReduceMean, {x}, {{"axes", Is({1})}, {"keepdims", I(1)}});
         ValueId d = g.add(Op::Sub, {x, m});
         return g.add(Op::Pow, {d, scalar(g, 2.f)});
       }},
      {"pool_then_clip",
       [](Graph& g) {
         ValueId y = g.add(Op::MaxPool, {in(g, {1, 3, 13, 7})},
                           {{"kernel_shape", Is({3, 3})},
                            {"strides", Is({2, 2})},
                            {"pads", Is({1, 1, 1, 1})},
                            {"dilations", Is({1, 1})},
                            {"ceil_mode", I(0)}});
         return g.add(Op::Clip, {y}, {{"min", F(0.f)}, {"max", F(0.5f)}});
       }},
      {"compare_where_injective",
       [](Graph& g) {
         ValueId x = in(g, {7, 13});
         ValueId c = g.add(Op::Greater, {x, scalar(g, 0.1f)});
         ValueId y = g.add(Op::Where, {c, x, g.add(Op::Neg, {x})});
         return g.add(Op::Transpose, {y}, {{"perm", Is({1, 0})}});
       }},
      {"baked_vector_constant",
       [](Graph& g) {
         ValueId k = constant(g, random_tensor(kF, {13}, 99));
         return g.add(Op::Mul, {in(g, {7, 13}), k});
       }},
      {"gather_embedding_add",
       [](Graph& g) {
         ValueId e = g.add(Op::Gather, {in(g, {50, 16}), in(g, {1, 7}, kI)}, {{"axis", I(0)}});
         return g.add(Op::Add, {e, in(g, {7, 16})});
       },
       {{1, {-50, 50}}}},
      {"matmul_then_transpose",  // not elementwise after the anchor: no tiling through it
       [](Graph& g) {
         ValueId y = g.add(Op::MatMul, {in(g, {16, 13}), in(g, {13, 16})});
         return g.add(Op::Transpose, {g.add(Op::Relu, {y})}, {{"perm", Is({1, 0})}});
       }},
      // Odd extents, rank 0, rank 5.
      {"extents_1_7_13",
       [](Graph& g) {
         return g.add(Op::Add, {in(g, {13, 7, 1}), in(g, {1, 7, 1})});
       }},
      {"matmul_1x7x13",
       [](Graph& g) {
         return g.add(Op::MatMul, {in(g, {1, 7}), in(g, {7, 13})});
       }},
      {"rank0_add",
       [](Graph& g) {
         return g.add(Op::Add, {in(g, {}), in(g, {})});
       }},
      {"rank0_from_reduce_then_sqrt",
       [](Graph& g) {
         ValueId s =
             g.add(Op::ReduceSum, {in(g, {7, 13})}, {{"axes", Is({0, 1})}, {"keepdims", I(0)}});
         return g.add(Op::Sqrt, {g.add(Op::Abs, {s})});
       }},
      {"rank5_broadcast_add",
       [](Graph& g) {
         return g.add(Op::Add, {in(g, {2, 1, 3, 1, 5}), in(g, {3, 4, 1})});
       }},
      {"rank5_softmax_axis2",
       [](Graph& g) {
         return g.add(Op::Softmax, {in(g, {2, 3, 7, 1, 5})}, {{"axis", I(2)}});
       }},
      {"rank5_conv3d_relu",
       [](Graph& g) {
         ValueId y = g.add(Op::Conv, {in(g, {1, 2, 3, 7, 5}), in(g, {4, 2, 1, 3, 3})},
                           {{"strides", Is({1, 1, 1})},
                            {"dilations", Is({1, 1, 1})},
                            {"pads", Is({0, 1, 1, 0, 1, 1})},
                            {"group", I(1)}});
         return g.add(Op::Relu, {y});
       }},
  };
}

class FusedTest : public ::testing::TestWithParam<Builder> {};
TEST_P(FusedTest, MatchesInterpreter) { check_case(GetParam().make()); }
INSTANTIATE_TEST_SUITE_P(Lower, FusedTest, ::testing::ValuesIn(fused_cases()), builder_name);

// The initial program s(0), with no schedule at all, computes the same values as the scheduled
// one (and the reference), on a spread of task kinds.
// The JIT target never names an AVX-512 family the CPU cannot run: Halide 14 calls a Zen 4
// "sapphirerapids" (it has AVX512-BF16 and VNNI), whose code uses AVX512-FP16 (SIGILL there).
TEST(LowerProgram, HostTargetOnlyHasFeaturesTheCpuRuns) {
  const Halide::Target t = host_target();
  if (!host_cpu_has("avx512_fp16"))
    EXPECT_FALSE(t.has_feature(Halide::Target::AVX512_SapphireRapids)) << t.to_string();
  else
    EXPECT_EQ(t.has_feature(Halide::Target::AVX512_SapphireRapids),
              Halide::get_host_target().has_feature(Halide::Target::AVX512_SapphireRapids));
  EXPECT_EQ(t.has_feature(Halide::Target::AVX512), host_cpu_has("avx512f")) << t.to_string();
  EXPECT_TRUE(cpu_flags_have("fpu avx512f avx512_bf16", "avx512_bf16"));
  EXPECT_FALSE(cpu_flags_have("fpu avx512_fp16x", "avx512_fp16"));
}

TEST(LowerProgram, UnscheduledMatchesScheduled) {
  std::vector<Builder> cases = fused_cases();
  for (const char* name : {"conv_bias_relu_residual", "reshape_transpose_matmul",
                           "scaled_masked_softmax", "layernorm_residual", "pool_then_clip",
                           "rank0_from_reduce_then_sqrt", "rank5_broadcast_add"}) {
    auto it =
        std::find_if(cases.begin(), cases.end(), [&](const Builder& b) { return b.name == name; });
    ASSERT_NE(it, cases.end()) << name;
    LowerCase c = it->make();
    SCOPED_TRACE(name);
    std::vector<Tensor> inputs = random_inputs(c, 77);
    Subgraph sub = as_subgraph(c.g);
    Tensor scheduled = run_lowered(sub, inputs, true);
    Tensor plain = run_lowered(sub, inputs, false);
    EXPECT_LE(max_rel_violation(plain, scheduled, 1e-5, 1e-5), 1.0);
    EXPECT_LE(max_rel_violation(plain, interpret(c.g, inputs).at(0), c.atol, c.rtol), 1.0);
  }
}

LowerCase conv_case() {
  Builder b{"conv", [](Graph& g) {
              return g.add(Op::Relu, {conv3x3(g, in(g, {1, 3, 7, 9}), 4, true)});
            }};
  return b.make();
}

// A blocked input layout (InputLayout): every rank-4 input (the conv weight, 4 output channels)
// lowered blocked along its output channels in blocks of 3, so the last block is padded. The
// packed copy has rank + 1 dims, zeros in the padding, and the program gives the interpreter's
// answer on it and on the dense weight (repacked per call).
TEST(LowerProgram, BlockedInputLayoutMatchesInterpreter) {
  LowerCase c = conv_case();
  Subgraph sub = as_subgraph(c.g);
  std::vector<InputLayout> blocked(c.g.inputs.size());
  int weights = 0;
  for (size_t i = 0; i < c.g.inputs.size(); i++)
    if (c.g.value(c.g.inputs[i]).shape.size() == 4 && c.g.value(c.g.inputs[i]).shape[0] == 4) {
      blocked[i].block_dim = 3;  // Halide dim 3 = ONNX dim 0, the output channels
      blocked[i].block = 3;
      weights++;
    }
  ASSERT_EQ(weights, 1);
  LoweredTask t = lower_subgraph(sub, blocked);
  apply_default_schedule(t, host_target());
  ASSERT_EQ(t.input_storage.size(), c.g.inputs.size());
  std::vector<Tensor> inputs = random_inputs(c, 31);
  Tensor ref = interpret(c.g, inputs).at(0);
  CompiledTask ct = compile_task(t, host_target());
  EXPECT_TRUE(ct.has_prepacked_inputs());
  std::vector<Halide::Buffer<>> dense, bound;
  for (size_t i = 0; i < inputs.size(); i++) {
    dense.push_back(halide_view(inputs[i].dtype(), inputs[i].raw(), inputs[i].shape()));
    bound.push_back(ct.prepare_input(i, dense.back()));
    if (blocked[i].block == 0) {
      EXPECT_EQ(bound.back().data(), dense.back().data());
      continue;
    }
    const Shape& shape = inputs[i].shape();
    const Halide::Buffer<>& b = bound.back();
    ASSERT_EQ(b.dimensions(), 5);
    EXPECT_EQ(b.dim(0).extent(), 3);
    EXPECT_EQ(b.dim(4).extent(), 2);  // ceil(4 / 3) blocks
    std::vector<halide_dimension_t> dims = storage_dims(shape, blocked[i]);
    ASSERT_EQ(dims.size(), 5u);
    for (int d = 0; d < 5; d++) EXPECT_EQ(b.dim(d).stride(), dims[d].stride) << d;
    // Output channel 3 is block 1, position 0; positions 1 and 2 of block 1 are padding.
    const float* w = inputs[i].data<float>();
    const float* p = static_cast<const float*>(b.data());
    const int64_t per_co = shape[1] * shape[2] * shape[3];
    for (int64_t k = 0; k < per_co; k++) {
      EXPECT_EQ(p[dims[4].stride + k * 3], w[3 * per_co + k]) << k;
      EXPECT_EQ(p[dims[4].stride + k * 3 + 1], 0.f) << k;
      EXPECT_EQ(p[k * 3 + 2], w[2 * per_co + k]) << k;
    }
    EXPECT_EQ(ct.prepare_input(i, b).data(), b.data()) << "already blocked: no second copy";
  }
  const Value& ov = c.g.value(c.g.outputs[0]);
  for (auto* ins : {&bound, &dense}) {
    Tensor out(ov.dtype, ov.shape);
    Halide::Buffer<> ob = halide_view(out.dtype(), out.raw(), out.shape());
    ct.run(*ins, ob);
    EXPECT_LE(max_rel_violation(out, ref, c.atol, c.rtol), 1.0);
  }
}

TEST(LowerProgram, StageMetadata) {
  LowerCase c = conv_case();
  LoweredTask t = lower_subgraph(as_subgraph(c.g));
  ASSERT_EQ(t.inputs.size(), 3u);
  EXPECT_EQ(t.inputs[0].dimensions(), 4);
  ASSERT_GE(t.anchor, 0);
  const Stage& a = t.stages[t.anchor];
  EXPECT_EQ(a.role, StageRole::Anchor);
  EXPECT_TRUE(a.has_update);
  ASSERT_NE(a.node, nullptr);
  EXPECT_EQ(a.node->op, Op::Conv);
  EXPECT_EQ(a.vars.size(), 4u);
  EXPECT_EQ(a.extents, (std::vector<int64_t>{9, 7, 4, 1}));  // Halide order: W, H, C, N
  EXPECT_EQ(a.rextents, (std::vector<int64_t>{3, 3, 3}));    // kw, kh, cin
  EXPECT_EQ(a.rdom.dimensions(), 3);
  const Stage& out = t.stages.back();
  EXPECT_FALSE(out.has_update);
  EXPECT_EQ(out.node->op, Op::Relu);
  int pads = 0;
  for (const Stage& s : t.stages) {
    if (&s == &a) continue;
    pads += s.role == StageRole::Pad;
    EXPECT_TRUE(s.role == StageRole::Pure || s.role == StageRole::Pad);
  }
  EXPECT_EQ(pads, 1);  // pads = 1 on both spatial dims
  // Node pointers of a copy point into the copy's own subgraph.
  LoweredTask copy = t;
  for (size_t i = 0; i < copy.stages.size(); i++) {
    EXPECT_EQ(copy.stages[i].node->name, t.stages[i].node->name);
    EXPECT_GE(copy.stages[i].node, copy.sub.graph.nodes.data());
    EXPECT_LT(copy.stages[i].node, copy.sub.graph.nodes.data() + copy.sub.graph.nodes.size());
  }
}

TEST(LowerProgram, SoftmaxReductionsAreReused) {
  Builder b{"sm", [](Graph& g) { return g.add(Op::Softmax, {in(g, {3, 13})}, {{"axis", I(1)}}); }};
  LoweredTask t = lower_subgraph(as_subgraph(b.make().g));
  int reused = 0;
  for (const Stage& s : t.stages) reused += s.role == StageRole::Reused;
  EXPECT_EQ(reused, 2);
}

TEST(LowerProgram, HalideViewAliasesReversedDims) {
  Tensor x(kF, {2, 3, 5});
  Halide::Buffer<> b = halide_view(kF, x.raw(), x.shape());
  ASSERT_EQ(b.dimensions(), 3);
  EXPECT_EQ(b.dim(0).extent(), 5);
  EXPECT_EQ(b.dim(1).extent(), 3);
  EXPECT_EQ(b.dim(2).extent(), 2);
  EXPECT_EQ(b.dim(0).stride(), 1);
  EXPECT_EQ(b.dim(1).stride(), 5);
  EXPECT_EQ(b.dim(2).stride(), 15);
  EXPECT_EQ(b.data(), (void*)x.raw());
  Halide::Buffer<float> fb(b);
  fb(4, 2, 1) = 42.f;  // ONNX index [1, 2, 4]
  EXPECT_EQ(x.data<float>()[1 * 15 + 2 * 5 + 4], 42.f);
  Tensor s = Tensor::scalar<int64_t>(7);
  Halide::Buffer<> sb = halide_view(kI, s.raw(), s.shape());
  EXPECT_EQ(sb.dimensions(), 0);
  EXPECT_EQ(sb.type(), Halide::Int(64));
  EXPECT_EQ(halide_view(kB, s.raw(), {}).type(), Halide::UInt(8));
}

// One compiled task, run twice on different buffers: inputs are bound per call.
TEST(LowerProgram, RebindsInputsPerRun) {
  LowerCase c = conv_case();
  LoweredTask t = lower_subgraph(as_subgraph(c.g));
  apply_default_schedule(t, host_target());
  CompiledTask ct = compile_task(t, host_target());
  for (uint64_t seed : {1, 2}) {
    std::vector<Tensor> inputs = random_inputs(c, seed);
    std::vector<Halide::Buffer<>> bufs;
    for (Tensor& x : inputs) bufs.push_back(halide_view(x.dtype(), x.raw(), x.shape()));
    Tensor out(kF, c.g.value(c.g.outputs[0]).shape);
    Halide::Buffer<> ob = halide_view(kF, out.raw(), out.shape());
    ct.run(bufs, ob);
    EXPECT_LE(max_rel_violation(out, interpret(c.g, inputs).at(0), 1e-4, 1e-4), 1.0) << seed;
  }
}

// Two threads compile (and run) different tasks at the same time.
TEST(LowerProgram, ConcurrentCompilation) {
  std::vector<Builder> cases = fused_cases();
  std::vector<LowerCase> work = {cases[0].make(), cases[1].make(), cases[2].make(),
                                 cases[4].make()};
  std::vector<double> violation(work.size(), 1e9);
  std::vector<std::string> errors(work.size());
  auto worker = [&](size_t first) {
    for (size_t i = first; i < work.size(); i += 2) {
      try {
        std::vector<Tensor> inputs = random_inputs(work[i], 5);
        Tensor got = run_lowered(as_subgraph(work[i].g), inputs, true);
        violation[i] = max_rel_violation(got, interpret(work[i].g, inputs).at(0), 1e-4, 1e-4);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  for (size_t i = 0; i < work.size(); i++) {
    EXPECT_EQ(errors[i], "") << work[i].name;
    EXPECT_LE(violation[i], 1.0) << work[i].name;
  }
}

// Halide's errors are exceptions, never aborts.
TEST(LowerProgram, WrongBufferShapeIsRuntimeError) {
  LowerCase c = conv_case();
  LoweredTask t = lower_subgraph(as_subgraph(c.g));
  apply_default_schedule(t, host_target());
  CompiledTask ct = compile_task(t, host_target());
  std::vector<Tensor> inputs = random_inputs(c, 3);
  Tensor wrong(kF, {1, 3, 7, 8});  // x is [1, 3, 7, 9]
  std::vector<Halide::Buffer<>> bufs = {halide_view(kF, wrong.raw(), wrong.shape())};
  for (size_t i = 1; i < inputs.size(); i++)
    bufs.push_back(halide_view(kF, inputs[i].raw(), inputs[i].shape()));
  Tensor out(kF, c.g.value(c.g.outputs[0]).shape);
  Halide::Buffer<> ob = halide_view(kF, out.raw(), out.shape());
  EXPECT_THROW(ct.run(bufs, ob), Halide::RuntimeError);
}

TEST(LowerProgram, BadScheduleIsCompileError) {
  LowerCase c = conv_case();
  LoweredTask t = lower_subgraph(as_subgraph(c.g));
  Halide::Func f = t.output();
  EXPECT_THROW(f.vectorize(Halide::Var("no_such_var"), 8), Halide::CompileError);
  // An anchor computed at a loop of a Func that does not use it.
  LoweredTask t2 = lower_subgraph(as_subgraph(c.g));
  t2.stages[t2.anchor].func.compute_at(t.output(), Halide::Var::outermost());
  EXPECT_THROW(compile_task(t2, host_target()), Halide::CompileError);
}

// Malformed IR that shape inference did not see (attributes edited after Graph::add) is a
// UserError naming the node.
TEST(LowerProgram, BadNodeIsUserError) {
  Graph g;
  ValueId x = in(g, {3, 5});
  ValueId y =
      g.add(Op::Slice, {x}, {{"starts", Is({0, 1})}, {"ends", Is({3, 4})}, {"steps", Is({1, 1})}},
            "my_slice");
  g.mark_output(y);
  g.nodes[0].attrs["steps"] = Is({1, 2});  // now reads element 1 + 2*2 = 5, past the end
  try {
    lower_subgraph(as_subgraph(g));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("my_slice"), std::string::npos) << e.what();
  }
  g.nodes[0].attrs["steps"] = Is({1});
  EXPECT_THROW(lower_subgraph(as_subgraph(g)), UserError);
}

}  // namespace
}  // namespace tlm::testing_lower
