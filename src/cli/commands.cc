#include "cli/commands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/model_source.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"
#include "partition/partition.h"
#include "runtime/executor.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

std::string type_str(const Value& v) {
  return std::string(dtype_name(v.dtype)) + shape_str(v.shape);
}

std::string describe_inputs(const Graph& g) {
  std::string s;
  for (ValueId v : g.inputs)
    s += (s.empty() ? "" : ", ") + g.value(v).name + " " + type_str(g.value(v));
  return s.empty() ? "none" : s;
}

}  // namespace

int cmd_zoo() {
  std::vector<ZooInfo> models = zoo_models();
  int width = 0;
  for (const ZooInfo& m : models) width = std::max(width, (int)m.name.size());
  for (const ZooInfo& m : models) {
    std::printf("%-*s  %-12s %s\n", width, m.name.c_str(), m.family.c_str(), m.description.c_str());
    for (const ZooParamInfo& p : m.params)
      std::printf("    %-10s default %-6lld range [%lld, %lld]  %s\n", p.name.c_str(),
                  (long long)p.def, (long long)p.min, (long long)p.max, p.help.c_str());
  }
  std::printf("\nUse a model as NAME or NAME:key=value,..., e.g. resnet50:batch=2,image=160\n");
  return 0;
}

int cmd_extract(const ExtractOptions& o) {
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed);
  Partition p = partition_graph(g);
  std::printf("model %s: inputs %s; %zu nodes -> %zu tasks, %zu instances\n", o.model.c_str(),
              describe_inputs(g).c_str(), g.nodes.size(), p.tasks.size(), p.instances.size());
  std::fputs(task_table(p).c_str(), stdout);
  return 0;
}

int cmd_run(const RunOptions& o) {
  // Read and check everything the user gave before the slow part.
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed);
  std::vector<Tensor> inputs =
      o.inputs.empty() ? random_inputs(g, o.seed) : read_inputs(g, o.inputs);
  TLM_USER_CHECK(!g.outputs.empty()) << "model '" << o.model << "' has no outputs";
  Partition p = partition_graph(g);
  std::printf("model %s: inputs %s; %zu nodes -> %zu tasks, %zu instances\n", o.model.c_str(),
              describe_inputs(g).c_str(), g.nodes.size(), p.tasks.size(), p.instances.size());
  std::fflush(stdout);

  CompileOptions co;
  co.compile_threads = o.threads;
  co.progress = true;
  CompiledModel m = compile_model(g, p, co);
  std::vector<Tensor> outputs = m.run(inputs);

  if (o.verify) {
    std::vector<Tensor> ref = interpret(g, inputs);
    TLM_CHECK(ref.size() == outputs.size()) << ref.size() << " reference outputs";
    double worst = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < ref.size(); i++) {
      double v = max_rel_violation(outputs[i], ref[i], o.atol, o.rtol);
      if (!(v <= worst)) {  // NaN-safe: a NaN violation is the worst
        worst = v;
        worst_i = i;
      }
    }
    bool pass = worst <= 1.0;
    const Value& wv = g.value(g.outputs[worst_i]);
    std::printf(
        "verify: %s  worst violation %.3g at output '%s' %s (1 = |got-ref| reaches "
        "atol %g + rtol %g * |ref|)\n",
        pass ? "PASS" : "FAIL", worst, wv.name.c_str(), type_str(wv).c_str(), o.atol, o.rtol);
    if (!pass) {
      std::fflush(stdout);
      std::fprintf(stderr, "error: output '%s' differs from the reference interpreter\n",
                   wv.name.c_str());
      return 1;
    }
  } else {
    std::printf("verify: skipped (--no-verify)\n");
  }

  Timing t = m.time(inputs, o.warmup, o.repeat);
  std::printf("\n%s", latency_table(p, t).c_str());
  std::printf("end-to-end: %.3f ms (median of %d runs after %d warm-up)\n", t.end_to_end_ms,
              t.repeat, o.warmup);
  std::printf("memory: %s\n", memory_plan_summary(m.memory_plan()).c_str());

  if (!o.output.empty()) {
    write_tensor_proto_file(o.output, outputs[0], g.value(g.outputs[0]).name);
    std::printf("wrote output '%s' %s to %s\n", g.value(g.outputs[0]).name.c_str(),
                type_str(g.value(g.outputs[0])).c_str(), o.output.c_str());
  }
  return 0;
}

}  // namespace tlm
