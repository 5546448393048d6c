#include "cli/cli.h"

#include <Halide.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.h"
#include "support/error.h"
#include "support/threads.h"

namespace tlm {
namespace {

const char* kFooter = R"(
MODEL is a zoo spec (`tlm zoo` lists them: resnet50, bert-base:seq=128, ...) or an .onnx file.
Examples:
  tlm run resnet18:image=64
  tlm run model.onnx --dim batch=1 --input x.pb --output y.pb
  tlm extract resnet50
--threads N (before or after the subcommand) sets the threads of everything parallel.
Exit code 0 on success, 1 on any error (bad flag, bad model, failed verification).)";

using AddCommand = Command (*)(CLI::App&);
// Every subcommand, in --help order (cli/commands.h).
constexpr AddCommand kCommands[] = {
    add_zoo_command,   add_extract_command,  add_run_command,      add_sample_command,
    add_show_command,  add_measure_command,  add_tune_command,     add_compile_command,
    add_train_command, add_generate_command, add_finetune_command, add_loop_command,
    add_ranker_command,
};

int dispatch(int argc, char** argv) {
  CLI::App app{
      "tlm: a tensor compiler -- import a model, fuse it into tasks, compile each task "
      "with Halide, run and verify it",
      "tlm"};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.fallthrough();  // global flags (--threads) may come after the subcommand
  int threads = 0;
  app.add_option("--threads", threads,
                 "threads for everything parallel: Halide's thread pool, compiling, measuring "
                 "(default: the cores this process may use)")
      ->check(CLI::Range(1, 1024));
  std::vector<Command> commands;
  for (AddCommand add : kCommands) commands.push_back(add(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, or the error with a hint to --help
    return code == 0 ? 0 : 1;
  }
  // Halide's JIT runtime sizes its thread pool from HL_NUM_THREADS on first use, and nothing has
  // touched Halide yet: the one place the global flag takes effect.
  if (threads > 0) set_compute_threads(threads);
  for (const Command& c : commands)
    if (c.app->parsed()) return c.run();
  TLM_CHECK(false) << "no subcommand ran";
  return 1;
}

}  // namespace

int run_cli(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const UserError& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const InternalError& e) {
    std::cerr << "internal error: " << e.what() << " (please report)\n";
  } catch (const Halide::InternalError& e) {
    std::cerr << "internal error: Halide: " << e.what() << " (please report)\n";
  } catch (const Halide::Error& e) {
    std::cerr << "error: Halide: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "internal error: unknown exception (please report)\n";
  }
  return 1;
}

}  // namespace tlm
