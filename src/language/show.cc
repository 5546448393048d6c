// `tlm show`: the task, the hardware and every decision in words (describe_decision: the Describe
// column of the space's step table).
#include "language/show.h"

#include <cstdio>
#include <sstream>

namespace tlm {
namespace {

std::string type_str(const Value& v) {
  return std::string(dtype_name(v.dtype)) + shape_str(v.shape);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string attr_str(const AttrValue& a) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>)
          os << x;
        else if constexpr (std::is_same_v<T, float>)
          os << num(x);
        else if constexpr (std::is_same_v<T, std::string>)
          os << '"' << x << '"';
        else {
          os << "[";
          for (size_t i = 0; i < x.size(); i++) os << (i ? "," : "") << num((double)x[i]);
          os << "]";
        }
      },
      a);
  return os.str();
}

// Readable listing of a task: "n0 = Conv(in0, w0, w1) group=1 strides=[1,1] -> f32[1,64,56,56]".
std::string task_str(const Subgraph& sub) {
  const Graph& g = sub.graph;
  std::ostringstream os;
  os << "task " << sub.kind << " (" << num(sub.flops / 1e6) << " MFLOP)\n";
  for (ValueId in : g.inputs)
    os << "  " << g.value(in).name << ": " << type_str(g.value(in)) << "\n";
  auto ref = [&](ValueId id) -> std::string {
    if (id == kNoValue) return "_";
    const Value& v = g.value(id);
    if (v.is_constant() && v.data->numel() == 1) return num(v.data->get_f(0));
    return v.name.substr(0, v.name.find(':'));
  };
  for (const Node& n : g.nodes) {
    os << "  " << n.name << " = " << op_name(n.op) << "(";
    for (size_t i = 0; i < n.inputs.size(); i++) os << (i ? ", " : "") << ref(n.inputs[i]);
    os << ")";
    for (const auto& [k, a] : n.attrs) os << " " << k << "=" << attr_str(a);
    os << " -> " << type_str(g.value(n.outputs[0])) << "\n";
  }
  return os.str();
}

}  // namespace

std::string render_sentence(ParsedSentence& ps, bool loop_nest) {
  std::ostringstream os;
  os << task_str(ps.sub);
  const HardwareInfo& hw = ps.hw;
  os << "hardware " << hw.isa << ", " << hw.cores << " core(s), " << hw.vector_bits / 32
     << " floats per vector, L1 " << format_size_token(hw.l1d_bytes) << ", L2 "
     << format_size_token(hw.l2_bytes) << ", L3 " << format_size_token(hw.l3_bytes) << "\n";
  os << "decisions (" << ps.space.slots.size() << ", space ~10^" << num(ps.space.log10_size) << ", "
     << ps.sentence.size() << " tokens)\n";
  size_t pos = 0;
  for (const Slot& s : ps.space.slots) {
    os << "  " << step_kind_name(s.kind) << " " << s.subject;
    if (s.kind == StepKind::Tile) os << " (" << s.extent << ")";
    os << " -> " << describe_decision(ps.space, s, ps.program.values.data() + pos) << "\n";
    pos += s.arity;
  }
  if (loop_nest) {
    apply_program(ps.task, ps.space, ps.program);
    os << "loop nest\n" << loop_nest_str(ps.task);
  }
  return os.str();
}

}  // namespace tlm
