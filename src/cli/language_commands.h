// The tensor-language subcommands, registered on the CLI11 app by cli.cc:
//
//   tlm sample --out DIR [--sentences N] [--seed S] [--threads T] [--workloads W...]
//              write a dataset of random tensor sentences (language/dataset.h)
//   tlm show FILE|- [--line N] [--loop-nest]
//              render sentences in words (language/show.h)
//
// Each add_*_command() adds the subcommand with a callback that runs it when chosen and stores
// its exit code in *exit_code; errors propagate as exceptions to run_cli().
#pragma once

#include <CLI/CLI.hpp>

namespace tlm {

void add_sample_command(CLI::App& app, int* exit_code);
void add_show_command(CLI::App& app, int* exit_code);

}  // namespace tlm
