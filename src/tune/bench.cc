// TaskBench construction and the measurement of one candidate in a forked worker.
//
// Child -> parent payload (one line of text, parsed by the parent):
//   "ok COMPILE_S SAMPLE_S..."      measured; per-call seconds of each timing sample
//   "wrong COMPILE_S VIOLATION"     compiled and ran, but disagreed with the reference
// Exceptions, crashes and timeouts arrive as the worker's status (measure/worker.h).
#include "tune/bench.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "graph/interpreter.h"
#include "measure/worker.h"

namespace tlm {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Ops that carry index values from their first input to their output unchanged.
bool passes_indices_through(Op op) {
  return op == Op::Reshape || op == Op::Flatten || op == Op::Squeeze || op == Op::Unsqueeze ||
         op == Op::Transpose || op == Op::Expand || op == Op::Slice;
}

// The exclusive upper bound for random values of i64 input `input` of g.
int64_t index_range(const Graph& g, ValueId input) {
  constexpr int64_t kDefault = 100;
  std::vector<std::vector<int>> consumers = g.consumers();
  int64_t best = -1;
  std::vector<ValueId> todo = {input};
  std::vector<bool> seen(g.values.size(), false);
  while (!todo.empty()) {
    ValueId v = todo.back();
    todo.pop_back();
    if (seen[v]) continue;
    seen[v] = true;
    for (int c : consumers[v]) {
      const Node& n = g.nodes[c];
      if (n.op == Op::Gather && n.inputs.size() == 2 && n.inputs[1] == v) {
        const Shape& data = g.value(n.inputs[0]).shape;
        int64_t axis = n.i("axis", 0);
        if (axis >= 0 && axis < (int64_t)data.size() && data[axis] > 0)
          best = best < 0 ? data[axis] : std::min(best, data[axis]);
      } else if (passes_indices_through(n.op) && !n.inputs.empty() && n.inputs[0] == v) {
        todo.push_back(n.outputs[0]);
      }
    }
  }
  return best > 0 ? best : kDefault;
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

// The child's work: build, check, time. Throws for compile/run errors (the worker reports them).
std::string measure_in_child(const TaskBench& bench, const Candidate& c, const MeasureOptions& o,
                             const EndPhase& end_phase1) {
  if (o.quiet_children) {
    int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
      ::close(null_fd);
    }
  }
  if (o.child_hook) o.child_hook(1);
  double t0 = now_s();
  LoweredTask t = lower_subgraph(bench.sub);
  Halide::Target target = host_target();
  if (c.autoscheduled)
    apply_halide_autoscheduler(t, c.autoscheduler, bench.hw, target);
  else
    apply_program(t, bench.space, c.program);
  CompiledTask ct = compile_task(t, target);
  double compile_s = now_s() - t0;
  end_phase1();
  if (o.child_hook) o.child_hook(2);

  // The child owns copies of the parent's pages: aliasing the inputs is safe, and programs never
  // write them.
  std::vector<Halide::Buffer<>> in;
  for (const Tensor& x : bench.inputs)
    in.push_back(halide_view(x.dtype(), const_cast<uint8_t*>(x.raw()), x.shape()));
  const Tensor& ref = bench.reference;
  Tensor out(ref.dtype(), ref.shape());
  if (out.dtype() == DType::F32)  // an element the program never writes then shows up as NaN
    std::fill(out.data<float>(), out.data<float>() + out.numel(),
              std::numeric_limits<float>::quiet_NaN());
  Halide::Buffer<> ob = halide_view(out.dtype(), out.raw(), out.shape());
  ct.run(in, ob);
  double violation = max_rel_violation(out, ref, o.atol, o.rtol);
  if (!(violation <= 1.0)) return "wrong " + fmt(compile_s) + " " + fmt(violation);

  TimingStats st = time_function([&] { ct.run(in, ob); }, o.timing);
  std::string s = "ok " + fmt(compile_s);
  for (double x : st.samples_s) s += " " + fmt(x);
  return s;
}

}  // namespace

std::vector<Tensor> subgraph_inputs(const Subgraph& sub, uint64_t seed) {
  const Graph& g = sub.graph;
  std::vector<Tensor> ins;
  for (size_t i = 0; i < g.inputs.size(); i++) {
    const Value& v = g.value(g.inputs[i]);
    uint64_t s = seed * 1000003u + i + 1;
    if (v.dtype == DType::I64)
      ins.push_back(random_tensor(v.dtype, v.shape, s, 0.0, (double)index_range(g, g.inputs[i])));
    else
      ins.push_back(random_tensor(v.dtype, v.shape, s));
  }
  return ins;
}

std::unique_ptr<TaskBench> make_task_bench(const Subgraph& sub, const HardwareInfo& hw,
                                           const std::string& workload, uint64_t seed) {
  auto b = std::make_unique<TaskBench>();
  b->sub = sub;
  b->hw = hw;
  b->hardware_key = hardware_key(hw);
  b->workload = workload;
  b->lowered = lower_subgraph(sub);
  b->space = build_space(b->lowered, hw);
  b->printer = std::make_unique<TaskPrinter>(b->sub, hw, b->space);
  b->inputs = subgraph_inputs(sub, seed);
  std::vector<Tensor> ref = interpret(sub.graph, b->inputs);
  TLM_CHECK(ref.size() == 1) << "a task has one output, got " << ref.size();
  b->reference = std::move(ref[0]);
  return b;
}

void warm_halide_jit() {
  static bool done = false;
  if (done) return;
  Halide::Var x;
  Halide::Func f("tlm_warm_up");
  f(x) = x * 2;  // serial: starts no thread pool
  Halide::Buffer<int32_t> out = f.realize({8}, host_target());
  TLM_CHECK(out(3) == 6) << "Halide JIT warm-up";
  done = true;
}

Candidate program_candidate(Program p, const std::string& strategy) {
  Candidate c;
  c.program = std::move(p);
  c.strategy = strategy;
  return c;
}

Candidate autoscheduler_candidate(HalideAutoscheduler which) {
  Candidate c;
  c.autoscheduled = true;
  c.autoscheduler = which;
  c.strategy = autoscheduler_info(which).strategy;
  return c;
}

std::string candidate_sentence(const TaskBench& bench, const Candidate& c) {
  return c.autoscheduled ? autoscheduler_marker(c.autoscheduler) : bench.printer->text(c.program);
}

MeasureRecord measure_candidate(const TaskBench& bench, const Candidate& c,
                                const MeasureOptions& o) {
  MeasureRecord r;
  r.task_key = bench.sub.key;
  r.task_kind = bench.sub.kind;
  r.workload = bench.workload;
  r.sentence = candidate_sentence(bench, c);
  r.hardware = bench.hardware_key;
  r.strategy = c.strategy;
  if (c.autoscheduled) load_halide_autoscheduler(c.autoscheduler);  // once, in the parent
  WorkerResult w = run_isolated_phases(
      [&](const EndPhase& end) { return measure_in_child(bench, c, o, end); },
      c.autoscheduled ? o.autoschedule_timeout_s : o.compile_timeout_s, o.run_timeout_s);
  r.timestamp_ms = unix_time_ms();
  ErrorKind kind = error_kind_for(w);
  if (kind != ErrorKind::None) {
    r.error = error_field(kind);
    r.error_msg = w.describe();
    return r;
  }
  std::istringstream is(w.payload);
  std::string tag;
  is >> tag >> r.compile_s;
  if (tag == "wrong") {
    double violation = 0;
    is >> violation;
    r.error = error_field(ErrorKind::WrongResult);
    r.error_msg = "output differs from the reference: max violation " + fmt(violation) +
                  " (1 = atol " + fmt(o.atol) + " + rtol " + fmt(o.rtol) + " * |ref|)";
    return r;
  }
  TLM_CHECK(tag == "ok") << "unexpected worker payload '" << w.payload.substr(0, 80) << "'";
  double x;
  while (is >> x) r.latencies_s.push_back(x);
  TLM_CHECK(!r.latencies_s.empty()) << "worker sent no timing samples";
  r.median_s = stats_from_samples(r.latencies_s).median_s;
  return r;
}

bool program_from_sentence(const TaskPrinter& printer, const std::string& sentence, Program* out) {
  std::vector<std::string> tok = split_tokens(sentence);
  const std::vector<std::string>& prompt = printer.prompt();
  if (tok.size() != printer.sentence_size()) return false;
  if (!std::equal(prompt.begin(), prompt.end(), tok.begin())) return false;
  size_t i = prompt.size();
  Program p;
  const TaskSpace& space = printer.space();
  for (size_t k = 0; k < space.slots.size(); k++) {
    for (const std::string& h : printer.header(k))
      if (tok[i++] != h) return false;
    for (int a = 0; a < space.slots[k].arity; a++) {
      const std::string& t = tok[i++];
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(t.c_str(), &end, 10);
      if (errno || end != t.c_str() + t.size() || value_token(v) != t) return false;
      p.values.push_back(v);
    }
  }
  if (!is_valid_program(space, p)) return false;
  *out = std::move(p);
  return true;
}

}  // namespace tlm
