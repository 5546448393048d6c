// The tuning subcommands, registered on the CLI11 app by cli.cc (like language_commands.h):
//
//   tlm tune MODEL --strategy S --trials-per-task N --records FILE [...]
//              tune every task of a model (tune/tuner.h), print the final table
//   tlm measure SENTENCES --records FILE [...]
//              measure sentences (one per line) and append their records (tune/measure_file.h)
//   tlm compile MODEL --records FILE -o DIR [--no-build]
//              a deployable artifact with the best recorded schedules (tune/artifact.h), built
//              and verified with its own runner
//
// Each add_*_command() adds the subcommand with a callback that runs it when chosen and stores
// its exit code in *exit_code; errors propagate as exceptions to run_cli(). The global --threads
// flag, when given, sets HL_NUM_THREADS for the timed runs (default: the cores of this process).
#pragma once

#include <CLI/CLI.hpp>

namespace tlm {

void add_tune_command(CLI::App& app, int* exit_code);
void add_measure_command(CLI::App& app, int* exit_code);
void add_compile_command(CLI::App& app, int* exit_code);

}  // namespace tlm
