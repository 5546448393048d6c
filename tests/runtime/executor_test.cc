// Whole-model compile and run: small graphs built with Graph::add (conv chains, a transformer
// block with token embedding), compiled with the default schedules and checked against the
// reference interpreter; input checking, in/out aliasing cases, the schedule hook, timing.
#include "runtime/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <set>

#include "fixtures/task_cases.h"
#include "graph/interpreter.h"
#include "graph/passes.h"

namespace tlm {
namespace {

using Ints = std::vector<int64_t>;

// Tolerance of the executor vs. the interpreter: both compute in f32, in different orders.
constexpr double kAtol = 1e-4, kRtol = 1e-4;

ValueId constant(Graph& g, const Shape& shape, uint64_t seed, double scale = 0.3) {
  return g.add_constant(g.unique_name("c"), random_tensor(DType::F32, shape, seed, -scale, scale));
}

ValueId conv(Graph& g, ValueId x, int64_t cout, int64_t k, uint64_t seed) {
  int64_t cin = g.value(x).shape[1];
  int64_t pad = k / 2;
  ValueId w = constant(g, {cout, cin, k, k}, seed);
  ValueId b = constant(g, {cout}, seed + 1);
  return g.add(Op::Conv, {x, w, b},
               {{"strides", Ints{1, 1}},
                {"dilations", Ints{1, 1}},
                {"pads", Ints{pad, pad, pad, pad}},
                {"group", int64_t{1}}});
}

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed) {
  std::vector<Tensor> ins;
  for (ValueId v : g.inputs) {
    const Value& val = g.value(v);
    if (val.dtype == DType::I64)
      ins.push_back(random_tensor(DType::I64, val.shape, seed++, 0, 50));
    else
      ins.push_back(random_tensor(val.dtype, val.shape, seed++));
  }
  return ins;
}

// Compiles g, runs it twice (the second run reuses the arena) and compares with interpret().
void expect_matches_interpreter(Graph g) {
  prepare_graph(g);
  Partition p = partition_graph(g);
  CompileOptions o;
  o.compile_threads = 2;
  CompiledModel m = compile_model(g, p, o);
  for (uint64_t seed : {1, 2}) {
    std::vector<Tensor> ins = random_inputs(g, seed * 100);
    std::vector<Tensor> got = m.run(ins);
    std::vector<Tensor> want = interpret(g, ins);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) {
      ASSERT_EQ(got[i].dtype(), want[i].dtype());
      ASSERT_EQ(got[i].shape(), want[i].shape());
      EXPECT_LE(max_rel_violation(got[i], want[i], kAtol, kRtol), 1.0)
          << "output " << i << " seed " << seed;
    }
  }
}

TEST(Executor, ConvReluAddChain) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 12, 12});
  ValueId a = g.add(Op::Relu, {conv(g, x, 8, 3, 10)});
  ValueId b = g.add(Op::Relu, {conv(g, a, 8, 3, 20)});
  ValueId c = g.add(Op::Add, {conv(g, b, 8, 1, 30), a});  // residual
  ValueId d = g.add(Op::Relu, {c});
  ValueId e = g.add(Op::Relu, {conv(g, d, 8, 3, 40)});
  ValueId f = g.add(Op::Add, {conv(g, e, 8, 3, 50), d});
  ValueId pooled = g.add(Op::GlobalAveragePool, {g.add(Op::Relu, {f})});
  g.mark_output(pooled);
  g.mark_output(f);
  expect_matches_interpreter(std::move(g));
}

// Token embedding + one pre-norm transformer block (two heads, causal mask, erf-GELU MLP).
Graph tiny_transformer(int64_t seq, int64_t hidden, int64_t heads) {
  const int64_t dh = hidden / heads;
  Graph g;
  ValueId ids = g.add_input("ids", DType::I64, {1, seq});
  ValueId emb = constant(g, {50, hidden}, 1, 1.0);
  ValueId x = g.add(Op::Gather, {emb, ids}, {{"axis", int64_t{0}}});  // [1,seq,hidden]
  auto layer_norm = [&](ValueId v, uint64_t seed) {
    return g.add(Op::LayerNormalization,
                 {v, constant(g, {hidden}, seed, 1.0), constant(g, {hidden}, seed + 1)},
                 {{"axis", int64_t{2}}, {"epsilon", 1e-5f}});
  };
  auto linear = [&](ValueId v, int64_t out, uint64_t seed) {
    int64_t in = g.value(v).shape.back();
    ValueId m = g.add(Op::MatMul, {v, constant(g, {in, out}, seed)});
    return g.add(Op::Add, {m, constant(g, {out}, seed + 1)});
  };
  auto split_heads = [&](ValueId v, Ints perm) {
    ValueId r = g.add(Op::Reshape, {v}, {{"shape", Ints{1, seq, heads, dh}}});
    return g.add(Op::Transpose, {r}, {{"perm", perm}});
  };
  ValueId h = layer_norm(x, 10);
  ValueId q = split_heads(linear(h, hidden, 20), {0, 2, 1, 3});  // [1,heads,seq,dh]
  ValueId k = split_heads(linear(h, hidden, 30), {0, 2, 3, 1});  // [1,heads,dh,seq]
  ValueId v = split_heads(linear(h, hidden, 40), {0, 2, 1, 3});
  ValueId s = g.add(Op::Div, {g.add(Op::MatMul, {q, k}),
                              g.add_constant("scale", Tensor::scalar<float>(std::sqrt(dh)))});
  std::vector<bool> causal;
  for (int64_t i = 0; i < seq; i++)
    for (int64_t j = 0; j < seq; j++) causal.push_back(j <= i);
  Tensor mask(DType::Bool, {seq, seq});
  for (int64_t i = 0; i < seq * seq; i++) mask.raw()[i] = causal[i];
  s = g.add(Op::Where,
            {g.add_constant("mask", mask), s, g.add_constant("neg", Tensor::scalar<float>(-1e9f))});
  ValueId prob = g.add(Op::Softmax, {s}, {{"axis", int64_t{3}}});
  ValueId o = g.add(Op::MatMul, {prob, v});                     // [1,heads,seq,dh]
  o = g.add(Op::Transpose, {o}, {{"perm", Ints{0, 2, 1, 3}}});  // [1,seq,heads,dh]
  o = g.add(Op::Reshape, {o}, {{"shape", Ints{1, seq, hidden}}});
  x = g.add(Op::Add, {x, linear(o, hidden, 50)});
  ValueId m = linear(layer_norm(x, 60), 2 * hidden, 70);
  ValueId erf = g.add(
      Op::Erf, {g.add(Op::Mul, {m, g.add_constant("rsqrt2", Tensor::scalar<float>(0.70710678f))})});
  ValueId one = g.add_constant("one", Tensor::scalar<float>(1.f));
  ValueId half = g.add_constant("half", Tensor::scalar<float>(0.5f));
  ValueId gelu = g.add(Op::Mul, {g.add(Op::Mul, {m, half}), g.add(Op::Add, {erf, one})});
  x = g.add(Op::Add, {x, linear(gelu, hidden, 80)});
  g.mark_output(x);
  return g;
}

// A reshaped dense output read by two matmuls (GPT-2's pattern): the standalone Reshape is a view
// that does not run (0 ms), the trailing Reshape that is the graph output runs; both with the
// views turned off (TLM_RESHAPE_VIEWS=0) give the same numbers.
TEST(Executor, ReshapeTasksRunAsViews) {
  Graph g = testing_tune::view_model();
  prepare_graph(g);
  Partition p = partition_graph(g);
  std::vector<Tensor> ins = random_inputs(g, 7);
  std::vector<Tensor> want = interpret(g, ins);
  CompiledModel m = compile_model(g, p);
  const MemoryPlan& plan = m.memory_plan();
  ASSERT_EQ(plan.views, 1) << latency_table(p, m.time(ins, 0, 1));
  std::vector<Tensor> got = m.run(ins);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(max_rel_violation(got[0], want[0], kAtol, kRtol), 1.0);
  Timing t = m.time(ins, 0, 2);
  std::vector<double> alone = m.time_alone(ins, AloneOptions{});
  for (size_t k = 0; k < p.instances.size(); k++) {
    const bool reshape = is_view_subgraph(p.tasks[p.instances[k].task].sub.graph);
    EXPECT_EQ(plan.view[k], reshape && p.instances[k].output != g.outputs[0]) << k;
    if (plan.view[k]) {
      EXPECT_EQ(t.instance_ms[k], 0.0);
      EXPECT_EQ(alone[k], 0.0);
    }
  }
  EXPECT_NE(latency_table(p, t).find("injective_reshape (view)"), std::string::npos)
      << latency_table(p, t);

  setenv("TLM_RESHAPE_VIEWS", "0", 1);
  CompiledModel copies = compile_model(g, p);
  unsetenv("TLM_RESHAPE_VIEWS");
  EXPECT_EQ(copies.memory_plan().views, 0);
  std::vector<Tensor> copied = copies.run(ins);
  ASSERT_EQ(copied.size(), 1u);
  ASSERT_EQ(copied[0].nbytes(), got[0].nbytes());
  EXPECT_EQ(std::memcmp(copied[0].raw(), got[0].raw(), got[0].nbytes()), 0);
}

TEST(Executor, TinyTransformerBlock) { expect_matches_interpreter(tiny_transformer(8, 32, 2)); }

TEST(Executor, WrongInputsAreUserErrors) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 8, 8});
  g.mark_output(g.add(Op::Relu, {conv(g, x, 4, 3, 1)}));
  prepare_graph(g);
  Partition p = partition_graph(g);
  CompiledModel m = compile_model(g, p);
  try {
    m.run({Tensor(DType::F32, {1, 3, 8})});
    FAIL() << "wrong rank accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "input 'x' expects f32[1,3,8,8], got f32[1,3,8]");
  }
  try {
    m.run({Tensor(DType::I64, {1, 3, 8, 8})});
    FAIL() << "wrong dtype accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "input 'x' expects f32[1,3,8,8], got i64[1,3,8,8]");
  }
  EXPECT_THROW(m.run({}), UserError);
  // The model still runs after rejected calls.
  Tensor in = random_tensor(DType::F32, {1, 3, 8, 8}, 5);
  EXPECT_LE(max_rel_violation(m.run({in})[0], interpret(g, {in})[0], kAtol, kRtol), 1.0);
}

// Outputs that are not produced by an instance are copied: a graph input, a constant, and the
// same computed value listed twice.
TEST(Executor, OutputsThatAreInputsOrConstantsAreCopied) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 5});
  ValueId c = g.add_constant("c", random_tensor(DType::F32, {3}, 9));
  ValueId y = g.add(Op::Tanh, {g.add(Op::Mul, {x, x})});
  g.mark_output(x);
  g.mark_output(y);
  g.mark_output(c);
  g.mark_output(y);
  Partition p = partition_graph(g);
  CompiledModel m = compile_model(g, p);
  Tensor in = random_tensor(DType::F32, {2, 5}, 3);
  std::vector<Tensor> out = m.run({in});
  std::vector<Tensor> want = interpret(g, {in});
  ASSERT_EQ(out.size(), 4u);
  for (int i = 0; i < 4; i++) EXPECT_LE(max_rel_violation(out[i], want[i], kAtol, kRtol), 1.0);
  EXPECT_EQ(0, std::memcmp(out[0].raw(), in.raw(), in.nbytes()));
  EXPECT_NE(out[0].raw(), in.raw());
  EXPECT_EQ(0, std::memcmp(out[2].raw(), g.value(c).data->raw(), 12));
}

TEST(Executor, ScheduleHookSeesEveryTaskAndTimingCoversEveryInstance) {
  Graph g = tiny_transformer(4, 16, 2);
  prepare_graph(g);
  Partition p = partition_graph(g);
  std::mutex mu;
  std::set<int> seen;
  CompileOptions o;
  o.compile_threads = 2;
  o.schedule = [&](int task_id, LoweredTask& t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(task_id);
    }
    apply_default_schedule(t, host_target());
  };
  CompiledModel m = compile_model(g, p, o);
  std::set<int> ids;
  for (const Task& t : p.tasks) ids.insert(t.id);
  EXPECT_EQ(seen, ids);

  std::vector<Tensor> ins = random_inputs(g, 7);
  Timing t = m.time(ins, 1, 3);
  EXPECT_EQ(t.repeat, 3);
  ASSERT_EQ(t.instance_ms.size(), p.instances.size());
  for (double ms : t.instance_ms) EXPECT_GE(ms, 0.0);
  EXPECT_GT(t.end_to_end_ms, 0.0);
  std::string table = latency_table(p, t);
  EXPECT_NE(table.find("sum"), std::string::npos) << table;
  EXPECT_NE(table.find(p.tasks[0].sub.kind), std::string::npos) << table;
  EXPECT_THROW(m.time(ins, 0, 0), UserError);

  const MemoryPlan& plan = m.memory_plan();
  EXPECT_GT(plan.arena_bytes, 0);
  EXPECT_LE(plan.arena_bytes,
            plan.activation_bytes + kArenaAlignment * (int64_t)p.instances.size());
}

TEST(Executor, TimeAloneCoversEveryInstanceAndLeavesTheModelCorrect) {
  Graph g = tiny_transformer(4, 16, 2);
  prepare_graph(g);
  Partition p = partition_graph(g);
  CompiledModel m = compile_model(g, p);
  std::vector<Tensor> ins = random_inputs(g, 3);
  AloneOptions o;
  o.repeat = 2;
  o.flush_bytes = 1 << 20;
  o.pause_us = 10;
  std::vector<double> ms = m.time_alone(ins, o);
  ASSERT_EQ(ms.size(), p.instances.size());
  for (double x : ms) EXPECT_GE(x, 0.0);
  // Instances re-run out of order leave the next whole run right.
  std::vector<Tensor> out = m.run(ins), want = interpret(g, ins);
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < out.size(); i++)
    EXPECT_LE(max_rel_violation(out[i], want[i], kAtol, kRtol), 1.0);
  o.repeat = 0;
  EXPECT_THROW(m.time_alone(ins, o), UserError);
}

// Compile errors in one thread surface as an exception in the caller, not a crash.
TEST(Executor, ScheduleFailureIsRethrown) {
  Graph g = tiny_transformer(4, 16, 2);
  prepare_graph(g);
  Partition p = partition_graph(g);
  CompileOptions o;
  o.compile_threads = 2;
  o.schedule = [&](int task_id, LoweredTask&) {
    if (task_id == p.tasks.back().id) TLM_USER_ERROR() << "no schedule for task " << task_id;
  };
  EXPECT_THROW(compile_model(g, p, o), UserError);
}

// Several programs per task in one arena: the hook sees every (task, program) once, a program
// after the first that fails to compile is data (it cannot be selected), any selection of the
// programs that compiled computes the model, and a failing first program is still an error.
TEST(Executor, VariantsShareTheArenaAndAFailedVariantCannotBeSelected) {
  Graph g = tiny_transformer(4, 16, 2);
  prepare_graph(g);
  Partition p = partition_graph(g);
  const int n = (int)p.tasks.size();
  ASSERT_GE(n, 2);
  std::mutex mu;
  std::set<std::pair<int, int>> seen;
  CompileOptions o;
  o.compile_threads = 2;
  o.variants.assign(n, 2);
  o.variants[0] = 3;
  const int bad_task = n - 1;
  o.variant_schedule = [&](int task_id, int v, LoweredTask& t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.insert({task_id, v});
    }
    if (task_id == p.tasks[bad_task].id && v == 1) TLM_USER_ERROR() << "no such program";
    apply_default_schedule(t, host_target());
  };
  CompiledModel m = compile_model(g, p, o);
  EXPECT_EQ(seen.size(), (size_t)(2 * n + 1));
  EXPECT_EQ(m.variants(0), 3);
  EXPECT_EQ(m.variants(bad_task), 2);
  EXPECT_TRUE(m.variant_error(0, 2).empty());
  EXPECT_NE(m.variant_error(bad_task, 1).find("no such program"), std::string::npos);

  std::vector<Tensor> ins = random_inputs(g, 11);
  const std::vector<Tensor> want = interpret(g, ins);
  for (int v : {0, 1, 2}) {
    std::vector<int> choice(n, v % 2);
    choice[0] = v;
    choice[bad_task] = 0;
    m.select(choice);
    std::vector<Tensor> got = m.run(ins);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++)
      EXPECT_LE(max_rel_violation(got[i], want[i], kAtol, kRtol), 1.0) << "selection " << v;
  }
  std::vector<int> choice(n, 0);
  choice[bad_task] = 1;
  EXPECT_THROW(m.select(choice), InternalError);
  choice[bad_task] = 2;
  EXPECT_THROW(m.select(choice), InternalError);
  EXPECT_THROW(m.select(std::vector<int>(n + 1, 0)), InternalError);

  o.variant_schedule = [&](int task_id, int, LoweredTask&) {
    TLM_USER_ERROR() << "no schedule for task " << task_id;
  };
  EXPECT_THROW(compile_model(g, p, o), UserError);
}

}  // namespace
}  // namespace tlm
