#include "cli/cli.h"

#include <Halide.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/language_commands.h"
#include "cli/tune_commands.h"
#include "support/error.h"

namespace tlm {
namespace {

const char* kFooter = R"(
MODEL is a zoo spec (`tlm zoo` lists them: resnet50, bert-base:seq=128, ...) or an .onnx file.
Examples:
  tlm run resnet18:image=64
  tlm run model.onnx --dim batch=1 --input x.pb --output y.pb
  tlm extract resnet50
--threads N (before or after the subcommand) sets the worker threads.
Exit code 0 on success, 1 on any error (bad flag, bad model, failed verification).)";

int dispatch(int argc, char** argv) {
  CLI::App app{
      "tlm: a tensor compiler -- import a model, fuse it into tasks, compile each task "
      "with Halide, run and verify it",
      "tlm"};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.fallthrough();  // global flags (--threads) may come after the subcommand
  int threads = 0;
  app.add_option(
         "--threads", threads,
         "worker threads for Halide's thread pool and for compiling (default: one per core)")
      ->check(CLI::Range(1, 1024));

  app.add_subcommand("zoo", "list the built-in zoo models and their parameters");

  ExtractOptions ex;
  CLI::App* extract = app.add_subcommand("extract", "print the task table of a model");
  add_model_flags(extract, &ex.model, &ex.dims, &ex.seed);

  RunOptions ro;
  CLI::App* run = app.add_subcommand(
      "run", "compile with default schedules, verify against the reference interpreter, time");
  add_model_flags(run, &ro.model, &ro.dims, &ro.seed);
  run->add_option("--input", ro.inputs,
                  "input TensorProto .pb file, in graph-input order (repeatable)")
      ->take_all()
      ->check(CLI::ExistingFile);
  run->add_option("--output", ro.output, "write the first output as a TensorProto .pb file");
  run->add_option("--repeat", ro.repeat, "timed runs; the median is reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  run->add_option("--warmup", ro.warmup, "untimed runs before timing")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  run->add_option("--atol", ro.atol, "absolute tolerance of the verification")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run->add_option("--rtol", ro.rtol, "relative tolerance of the verification")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  bool no_verify = false;
  run->add_flag("--no-verify", no_verify, "skip the comparison with the reference interpreter");

  int language_code = -1;  // set by the callback of `tlm sample` / `tlm show` when they ran
  add_sample_command(app, &language_code);
  add_show_command(app, &language_code);
  int tune_code = -1;  // set by `tlm tune` / `tlm measure` / `tlm compile` when they ran
  add_tune_command(app, &tune_code);
  add_measure_command(app, &tune_code);
  add_compile_command(app, &tune_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, or the error with a hint to --help
    return code == 0 ? 0 : 1;
  }

  // Halide's JIT runtime sizes its thread pool from HL_NUM_THREADS on first use: nothing has
  // touched Halide yet.
  apply_global_threads(app);

  if (language_code >= 0) return language_code;
  if (tune_code >= 0) return tune_code;
  if (app.got_subcommand("zoo")) return cmd_zoo();
  if (app.got_subcommand("extract")) return cmd_extract(ex);
  ro.threads = threads;
  ro.verify = !no_verify;
  return cmd_run(ro);
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
