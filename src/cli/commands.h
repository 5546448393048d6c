// The `tlm` subcommands. Every one lives in its own file, cli/<name>_cmd.cc, and is added the same
// way:
//
//   Command add_<name>_command(CLI::App& app);
//
// adds the subcommand and its flags to `app` and returns it with the function that runs it. The
// function is called after parsing, once the global --threads has been applied (cli.cc), and
// returns the exit code: 0, or 1 for a failure that is not an exception (a failed verification).
// Bad input is a UserError, which run_cli() prints once and turns into exit code 1.
//
// To add a command: write cli/<name>_cmd.cc, declare its add_ function here and list it in
// kCommands (cli.cc).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace tlm {

struct Command {
  CLI::App* app = nullptr;   // the subcommand
  std::function<int()> run;  // runs it with the parsed flags
};

Command add_zoo_command(CLI::App& app);       // list zoo models and their parameters
Command add_extract_command(CLI::App& app);   // the task table of a model
Command add_run_command(CLI::App& app);       // compile with default schedules, verify, time
Command add_sample_command(CLI::App& app);    // a dataset of random tensor sentences
Command add_show_command(CLI::App& app);      // sentences in words
Command add_measure_command(CLI::App& app);   // measure sentences, append records
Command add_tune_command(CLI::App& app);      // tune every task of a model
Command add_compile_command(CLI::App& app);   // a deployable AOT artifact
Command add_train_command(CLI::App& app);     // pre-train the language model
Command add_generate_command(CLI::App& app);  // programs written by the language model
Command add_finetune_command(CLI::App& app);  // fine-tune the base on the best measured programs
Command add_loop_command(CLI::App& app);      // the iterative generate-measure-fine-tune loop
Command add_ranker_command(CLI::App& app);    // the zero-shot ranker: train, evaluate

}  // namespace tlm
