// `tlm show`: reads sentences (one per line) from a file or stdin and renders them in words.
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "hardware/hardware.h"
#include "language/show.h"
#include "lower/lower.h"
#include "space/space.h"

namespace tlm {
namespace {

struct ShowOptions {
  std::string file;        // sentence file, "-" for stdin
  int64_t line = 0;        // 1-based line to show; 0: every line
  bool loop_nest = false;  // also print the Halide loop nest of the applied program
  std::string emit_dir;    // write <line>.stmt and <line>.s of each program here
};

// The target a sentence's program is compiled for when its code is written: the host when the
// sentence was written for the host's ISA, else a generic x86-64 target with that ISA.
Halide::Target target_for(const HardwareInfo& hw) {
  Halide::Target host = host_target();
  if (hw.isa == detect_hardware().isa) return host;
  Halide::Target t("x86-64-linux-sse41-avx-f16c-fma-avx2");
  if (hw.isa == "avx512")
    t = t.with_feature(Halide::Target::AVX512).with_feature(Halide::Target::AVX512_Skylake);
  return t;
}

int run_show(const ShowOptions& o) {
  std::ifstream file;
  if (o.file != "-") {
    file.open(o.file);
    TLM_USER_CHECK(file.good()) << "show: cannot read " << o.file;
  }
  std::istream& in = o.file == "-" ? std::cin : file;
  std::string text;
  int64_t n = 0, shown = 0;
  while (std::getline(in, text)) {
    n++;
    if (o.line > 0 && n != o.line) continue;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    ParsedSentence ps;
    try {
      ps = parse_sentence(text);
    } catch (const UserError& e) {
      TLM_USER_ERROR() << o.file << ":" << n << ": " << e.what();
    }
    if (shown++) std::cout << "\n";
    std::cout << "# " << o.file << ":" << n << "\n" << render_sentence(ps, o.loop_nest);
    if (!o.emit_dir.empty()) {
      LoweredTask fresh = lower_subgraph(ps.sub);
      apply_program(fresh, ps.space, ps.program);
      std::string prefix = o.emit_dir + "/" + std::to_string(n);
      write_task_code(fresh, target_for(ps.hw), prefix);
      std::cout << "code: " << prefix << ".stmt, " << prefix << ".s\n";
    }
    if (o.line > 0) break;
  }
  TLM_USER_CHECK(o.line == 0 || shown == 1)
      << "show: " << o.file << " has no line " << o.line << " (" << n << " lines)";
  TLM_USER_CHECK(shown > 0) << "show: " << o.file << " has no sentence";
  return 0;
}

}  // namespace

Command add_show_command(CLI::App& app) {
  auto o = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand(
      "show", "render tensor sentences (one per line, e.g. a dataset shard) in words");
  cmd->add_option("FILE", o->file, "sentence file, or - for standard input")->required();
  cmd->add_option("--line", o->line, "show only this line (1-based)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 60));
  cmd->add_flag("--loop-nest", o->loop_nest, "also print the Halide loop nest of each program");
  cmd->add_option("--emit-dir", o->emit_dir,
                  "write each program's lowered Halide statement (<line>.stmt) and assembly "
                  "(<line>.s) into this existing directory")
      ->check(CLI::ExistingDirectory);
  return {cmd, [o] { return run_show(*o); }};
}

}  // namespace tlm
