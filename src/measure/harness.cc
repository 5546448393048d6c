// TaskHarness construction, candidates and their sentences. The measurement itself is in
// measurer.cc.
#include "measure/harness.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "graph/interpreter.h"
#include "runtime/random_inputs.h"

namespace tlm {

std::vector<Tensor> subgraph_inputs(const Subgraph& sub, uint64_t seed) {
  return random_inputs(sub.graph, seed);
}

std::unique_ptr<TaskHarness> make_task_harness(const Subgraph& sub, const HardwareInfo& hw,
                                               const std::string& workload, uint64_t seed) {
  auto b = std::make_unique<TaskHarness>();
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

std::string candidate_sentence(const TaskHarness& harness, const Candidate& c) {
  return c.autoscheduled ? autoscheduler_marker(c.autoscheduler) : harness.printer->text(c.program);
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
    const Slot& slot = space.slots[k];
    for (int a = 0; a < slot.arity; a++) {
      int64_t v = 0;
      if (!value_from_token(slot, p.values.data() + p.values.size() - a, a, tok[i++], &v))
        return false;
      p.values.push_back(v);
    }
  }
  if (!is_valid_program(space, p)) return false;
  *out = std::move(p);
  return true;
}

}  // namespace tlm
