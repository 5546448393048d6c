#include "runtime/executor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "support/cache_flush.h"
#include "support/huge_pages.h"
#include "support/parallel.h"
#include "support/threads.h"

namespace tlm {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  TLM_CHECK(!v.empty()) << "median of nothing";
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string type_str(DType t, const Shape& s) { return std::string(dtype_name(t)) + shape_str(s); }

// The arena: one allocation, aligned for vector loads (on huge pages), freed with the model.
struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using ArenaPtr = std::unique_ptr<uint8_t, FreeDeleter>;

ArenaPtr allocate_arena(int64_t bytes) {
  if (bytes == 0) return nullptr;
  static_assert(kArenaAlignment <= 64, "huge_alloc aligns to 64 bytes");
  void* p = huge_alloc((size_t)bytes);  // on 2 MiB pages when large (support/huge_pages.h)
  TLM_USER_CHECK(p != nullptr) << "cannot allocate an activation arena of " << format_bytes(bytes);
  std::memset(p, 0, (size_t)bytes);
  return ArenaPtr(static_cast<uint8_t*>(p));
}

// Every task's programs (one, or CompileOptions::variants of them), compiled `threads` at a time.
struct CompiledTasks {
  std::vector<std::vector<CompiledTask>> programs;  // [task][variant]
  std::vector<std::vector<std::string>> errors;     // [task][variant]: "" when it compiled
};

// The first failure of a task's program 0 is rethrown here; a later variant's is kept as data.
CompiledTasks compile_tasks(const Partition& p, const CompileOptions& o) {
  const int n = (int)p.tasks.size();
  TLM_CHECK(o.variants.empty() || (int)o.variants.size() == n)
      << o.variants.size() << " variant counts for " << n << " tasks";
  TLM_CHECK(o.variants.empty() || o.variant_schedule) << "variants without a variant_schedule";
  CompiledTasks c;
  c.programs.resize(n);
  c.errors.resize(n);
  std::vector<std::pair<int, int>> jobs;  // (task, variant)
  for (int i = 0; i < n; i++) {
    const int k = o.variants.empty() ? 1 : o.variants[i];
    TLM_CHECK(k >= 1) << "task " << i << " has " << k << " programs";
    c.programs[i].resize(k);
    c.errors[i].resize(k);
    for (int v = 0; v < k; v++) jobs.emplace_back(i, v);
  }
  const int total = (int)jobs.size();
  int threads = o.compile_threads > 0 ? o.compile_threads : compute_threads();
  threads = std::max(1, std::min(threads, total));
  const bool tty = isatty(STDERR_FILENO);

  std::mutex mu;  // guards `done` and the progress line
  int done = 0;
  parallel_for(total, threads, [&](int64_t j) {
    const auto [i, v] = jobs[j];
    auto compile = [&] {
      LoweredTask lowered = lower_subgraph(p.tasks[i].sub);
      if (!o.variants.empty())
        o.variant_schedule(p.tasks[i].id, v, lowered);
      else if (o.schedule)
        o.schedule(p.tasks[i].id, lowered);
      else
        apply_default_schedule(lowered, o.target);
      c.programs[i][v] = compile_task(lowered, o.target);
    };
    if (v == 0) {
      compile();
    } else {
      try {
        compile();
      } catch (const std::exception& e) {
        c.errors[i][v] = e.what();
        if (c.errors[i][v].empty()) c.errors[i][v] = "failed to compile";
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    ++done;
    if (o.progress && tty) std::fprintf(stderr, "\rcompiling %d/%d programs", done, total);
  });
  if (o.progress && tty && total > 0) std::fprintf(stderr, "\r\033[K");
  return c;
}

}  // namespace

// One task instance with its buffers bound: constants and activations once at compile time,
// graph inputs (slot >= 0) rebound on every run. One input list per program of the task: the
// activations are the same views, constants the program's own (packed) copies.
struct InstanceBinding {
  int task = 0;
  std::vector<std::vector<Halide::Buffer<>>> inputs;  // [variant][input]
  std::vector<int> graph_input;                       // per input: index into Graph::inputs, or -1
  Halide::Buffer<> output;
};

struct CompiledModel::Impl {
  Graph graph;  // holds the constant tensors the bindings point into
  Partition partition;
  MemoryPlan plan;
  std::vector<std::vector<CompiledTask>> tasks;  // [task][variant]
  std::vector<std::vector<std::string>> errors;  // [task][variant]: "" when it compiled
  std::vector<int> chosen;                       // per task: the variant that runs
  ArenaPtr arena;
  std::vector<InstanceBinding> bindings;
  double compile_seconds = 0;

  void bind_inputs(const std::vector<Tensor>& inputs);
  void unbind_inputs();
  // A view instance (memory_plan.h) does not run: its output already is its input's bytes.
  void run_instance(size_t k) {
    if (plan.view[k]) return;
    InstanceBinding& b = bindings[k];
    const int v = chosen[b.task];
    tasks[b.task][v].run(b.inputs[v], b.output);
  }
  // Reads instance k's inputs that are not activations (outside the arena: constants, packed
  // weights; graph inputs too) into the caches.
  void touch_constants(size_t k) {
    InstanceBinding& b = bindings[k];
    const uint8_t* lo = arena.get();
    const uint8_t* hi = lo + plan.arena_bytes;
    for (const Halide::Buffer<>& in : b.inputs[chosen[b.task]]) {
      const uint8_t* p = static_cast<const uint8_t*>(in.data());
      if (p && (p < lo || p >= hi)) touch(p, (int64_t)in.size_in_bytes());
    }
  }
  void execute(const std::vector<Tensor>& inputs, std::vector<double>* instance_ms);
  std::vector<Tensor> collect_outputs(const std::vector<Tensor>& inputs) const;
};

void CompiledModel::Impl::bind_inputs(const std::vector<Tensor>& inputs) {
  check_model_inputs(graph, inputs);
  // Halide reads inputs and never writes them; the views alias the caller's tensors.
  std::vector<Halide::Buffer<>> views;
  for (size_t i = 0; i < inputs.size(); i++)
    views.push_back(
        halide_view(inputs[i].dtype(), const_cast<uint8_t*>(inputs[i].raw()), inputs[i].shape()));
  for (InstanceBinding& b : bindings)
    for (std::vector<Halide::Buffer<>>& in : b.inputs)
      for (size_t j = 0; j < in.size(); j++)
        if (b.graph_input[j] >= 0) in[j] = views[b.graph_input[j]];
}

void CompiledModel::Impl::unbind_inputs() {
  // Drop the aliases so no binding outlives the caller's tensors.
  for (InstanceBinding& b : bindings)
    for (std::vector<Halide::Buffer<>>& in : b.inputs)
      for (size_t j = 0; j < in.size(); j++)
        if (b.graph_input[j] >= 0) in[j] = Halide::Buffer<>();
}

void CompiledModel::Impl::execute(const std::vector<Tensor>& inputs,
                                  std::vector<double>* instance_ms) {
  bind_inputs(inputs);
  for (size_t k = 0; k < bindings.size(); k++) {
    if (plan.view[k]) {  // nothing runs (memory_plan.h)
      if (instance_ms) (*instance_ms)[k] = 0.0;
      continue;
    }
    Clock::time_point t0 = Clock::now();
    run_instance(k);
    if (instance_ms) (*instance_ms)[k] = ms_since(t0);
  }
  unbind_inputs();
}

std::vector<Tensor> CompiledModel::Impl::collect_outputs(const std::vector<Tensor>& inputs) const {
  std::vector<Tensor> outs;
  for (ValueId v : graph.outputs) {
    const Value& val = graph.value(v);
    if (val.is_constant()) {
      outs.push_back(*val.data);
      continue;
    }
    auto in = std::find(graph.inputs.begin(), graph.inputs.end(), v);
    if (in != graph.inputs.end()) {
      outs.push_back(inputs[in - graph.inputs.begin()]);
      continue;
    }
    TLM_CHECK(plan.offset[v] >= 0) << "graph output '" << val.name << "' is never computed";
    Tensor t(val.dtype, val.shape);
    if (t.nbytes()) std::memcpy(t.raw(), arena.get() + plan.offset[v], t.nbytes());
    outs.push_back(std::move(t));
  }
  return outs;
}

void check_model_inputs(const Graph& graph, const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph.inputs.size()) {
    std::string names;
    for (ValueId v : graph.inputs) names += (names.empty() ? "" : ", ") + graph.value(v).name;
    TLM_USER_ERROR() << "model expects " << graph.inputs.size() << " input(s) (" << names
                     << "), got " << inputs.size();
  }
  for (size_t i = 0; i < inputs.size(); i++) {
    const Value& v = graph.value(graph.inputs[i]);
    const Tensor& t = inputs[i];
    TLM_USER_CHECK(t.dtype() == v.dtype && t.shape() == v.shape)
        << "input '" << v.name << "' expects " << type_str(v.dtype, v.shape) << ", got "
        << type_str(t.dtype(), t.shape());
  }
}

CompiledModel::CompiledModel() = default;
CompiledModel::~CompiledModel() = default;
CompiledModel::CompiledModel(CompiledModel&&) noexcept = default;
CompiledModel& CompiledModel::operator=(CompiledModel&&) noexcept = default;

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs) {
  TLM_CHECK(impl_) << "run() on an empty CompiledModel";
  impl_->execute(inputs, nullptr);
  return impl_->collect_outputs(inputs);
}

Timing CompiledModel::time(const std::vector<Tensor>& inputs, int warmup, int repeat) {
  TLM_CHECK(impl_) << "time() on an empty CompiledModel";
  TLM_USER_CHECK(repeat >= 1) << "the number of timed runs must be at least 1, got " << repeat;
  for (int i = 0; i < warmup; i++) impl_->execute(inputs, nullptr);
  const size_t n = impl_->bindings.size();
  std::vector<std::vector<double>> per_instance(n, std::vector<double>(repeat));
  std::vector<double> run_ms(n), e2e(repeat);
  for (int r = 0; r < repeat; r++) {
    Clock::time_point t0 = Clock::now();
    impl_->execute(inputs, &run_ms);
    e2e[r] = ms_since(t0);
    for (size_t k = 0; k < n; k++) per_instance[k][r] = run_ms[k];
  }
  Timing t;
  t.repeat = repeat;
  t.view = impl_->plan.view;
  t.end_to_end_ms = median(e2e);
  for (size_t k = 0; k < n; k++) t.instance_ms.push_back(median(per_instance[k]));
  return t;
}

std::vector<double> CompiledModel::time_alone(const std::vector<Tensor>& inputs,
                                              const AloneOptions& o) {
  TLM_CHECK(impl_) << "time_alone() on an empty CompiledModel";
  TLM_USER_CHECK(o.repeat >= 1) << "the number of timed runs must be at least 1, got " << o.repeat;
  impl_->bind_inputs(inputs);
  // One whole run first: every activation holds numbers the model computed.
  for (size_t k = 0; k < impl_->bindings.size(); k++) impl_->run_instance(k);
  CacheFlusher flusher(o.flush_bytes);
  std::vector<double> out;
  std::vector<double> ms(o.repeat);
  for (size_t k = 0; k < impl_->bindings.size(); k++) {
    if (impl_->plan.view[k]) {  // nothing runs
      out.push_back(0.0);
      continue;
    }
    impl_->run_instance(k);  // untimed: code and first-touch costs
    for (int r = 0; r < o.repeat; r++) {
      if (!flusher.empty()) flusher.flush();
      if (o.touch_constants) impl_->touch_constants(k);
      if (o.pause_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(o.pause_us));
      Clock::time_point t0 = Clock::now();
      impl_->run_instance(k);
      ms[r] = ms_since(t0);
    }
    out.push_back(median(ms));
  }
  impl_->unbind_inputs();
  return out;
}

void CompiledModel::select(const std::vector<int>& choice) {
  TLM_CHECK(impl_) << "select() on an empty CompiledModel";
  TLM_CHECK(choice.size() == impl_->tasks.size())
      << choice.size() << " choices for " << impl_->tasks.size() << " tasks";
  for (size_t i = 0; i < choice.size(); i++) {
    TLM_CHECK(choice[i] >= 0 && choice[i] < (int)impl_->tasks[i].size())
        << "task " << i << " has no program " << choice[i];
    TLM_CHECK(impl_->errors[i][choice[i]].empty())
        << "task " << i << "'s program " << choice[i] << " did not compile";
  }
  impl_->chosen = choice;
}

int CompiledModel::variants(int task) const {
  TLM_CHECK(impl_ && task >= 0 && task < (int)impl_->tasks.size()) << "no task " << task;
  return (int)impl_->tasks[task].size();
}

const std::string& CompiledModel::variant_error(int task, int v) const {
  TLM_CHECK(impl_ && task >= 0 && task < (int)impl_->tasks.size()) << "no task " << task;
  TLM_CHECK(v >= 0 && v < (int)impl_->errors[task].size())
      << "task " << task << " has no program " << v;
  return impl_->errors[task][v];
}

const Graph& CompiledModel::graph() const { return impl_->graph; }
const Partition& CompiledModel::partition() const { return impl_->partition; }
const MemoryPlan& CompiledModel::memory_plan() const { return impl_->plan; }
double CompiledModel::compile_seconds() const { return impl_->compile_seconds; }

CompiledModel compile_model(const Graph& g, const Partition& p, const CompileOptions& o) {
  Clock::time_point t0 = Clock::now();
  auto impl = std::make_unique<CompiledModel::Impl>();
  impl->graph = g;
  impl->partition = p;
  CompiledTasks compiled = compile_tasks(p, o);
  impl->tasks = std::move(compiled.programs);
  impl->errors = std::move(compiled.errors);
  impl->chosen.assign(p.tasks.size(), 0);
  impl->plan = plan_memory(impl->graph, p, o.reshape_views);
  impl->arena = allocate_arena(impl->plan.arena_bytes);

  const Graph& graph = impl->graph;
  for (const TaskInstance& inst : p.instances) {
    TLM_CHECK(inst.task >= 0 && inst.task < (int)p.tasks.size()) << "instance task " << inst.task;
    const Graph& sub = p.tasks[inst.task].sub.graph;
    TLM_CHECK(inst.inputs.size() == sub.inputs.size())
        << "instance of task " << inst.task << " has " << inst.inputs.size() << " inputs, task "
        << sub.inputs.size();
    InstanceBinding b;
    b.task = inst.task;
    const std::vector<CompiledTask>& programs = impl->tasks[inst.task];
    b.inputs.resize(programs.size());
    for (size_t j = 0; j < inst.inputs.size(); j++) {
      ValueId v = inst.inputs[j];
      TLM_CHECK(v >= 0 && v < (ValueId)graph.values.size()) << "instance input " << v;
      const Value& val = graph.value(v);
      const Value& formal = sub.value(sub.inputs[j]);
      TLM_CHECK(val.dtype == formal.dtype && val.shape == formal.shape)
          << "value '" << val.name << "' is " << type_str(val.dtype, val.shape) << " but task "
          << inst.task << " expects " << type_str(formal.dtype, formal.shape);
      auto in = std::find(graph.inputs.begin(), graph.inputs.end(), v);
      int slot = in == graph.inputs.end() ? -1 : (int)(in - graph.inputs.begin());
      b.graph_input.push_back(slot);
      for (size_t pv = 0; pv < programs.size(); pv++) {
        std::vector<Halide::Buffer<>>& bound = b.inputs[pv];
        if (slot >= 0 || !impl->errors[inst.task][pv].empty()) {
          bound.emplace_back();  // bound per run (or never: the program did not compile)
        } else if (val.is_constant()) {
          // Constants are immutable and shared; Halide only reads them. A program that wants a
          // weight in another storage order gets its packed copy now, once (lower.h).
          bound.push_back(programs[pv].prepare_input(
              j, halide_view(val.dtype, const_cast<uint8_t*>(val.data->raw()), val.shape)));
        } else {
          int64_t off = impl->plan.offset[v];
          TLM_CHECK(off >= 0) << "activation '" << val.name << "' has no arena slot";
          bound.push_back(halide_view(val.dtype, impl->arena.get() + off, val.shape));
        }
      }
    }
    const Value& out = graph.value(inst.output);
    b.output =
        halide_view(out.dtype, impl->arena.get() + impl->plan.offset[inst.output], out.shape);
    impl->bindings.push_back(std::move(b));
  }
  impl->compile_seconds = ms_since(t0) / 1000.0;
  if (o.progress)
    std::fprintf(stderr, "compiled %zu tasks in %.1f s\n", p.tasks.size(), impl->compile_seconds);

  CompiledModel m;
  m.impl_ = std::move(impl);
  return m;
}

std::string latency_table(const Partition& p, const Timing& t) {
  TLM_CHECK(t.instance_ms.size() == p.instances.size())
      << t.instance_ms.size() << " timings for " << p.instances.size() << " instances";
  const size_t nt = p.tasks.size();
  std::vector<std::vector<double>> by_task(nt);
  const std::vector<bool> all_views = view_only_tasks(p, t.view);
  double sum = 0;
  for (size_t k = 0; k < p.instances.size(); k++) {
    by_task[p.instances[k].task].push_back(t.instance_ms[k]);
    sum += t.instance_ms[k];
  }
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line, "%4s  %-28s %9s %12s %10s %7s\n", "task", "kind", "instances",
                "ms/instance", "total ms", "share");
  s += line;
  for (size_t i = 0; i < nt; i++) {
    if (by_task[i].empty()) continue;
    double total = 0;
    for (double x : by_task[i]) total += x;
    const std::string kind = p.tasks[i].sub.kind + (all_views[i] ? " (view)" : "");
    std::snprintf(line, sizeof line, "%4d  %-28.28s %9zu %12.3f %10.3f %6.1f%%\n", p.tasks[i].id,
                  kind.c_str(), by_task[i].size(), median(by_task[i]), total,
                  sum > 0 ? 100.0 * total / sum : 0.0);
    s += line;
  }
  std::snprintf(line, sizeof line, "%4s  %-28s %9zu %12s %10.3f %6.1f%%\n", "", "sum",
                p.instances.size(), "", sum, 100.0);
  s += line;
  return s;
}

}  // namespace tlm
