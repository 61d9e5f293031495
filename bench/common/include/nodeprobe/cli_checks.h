#pragma once
/// Command-line checks every executable shares (include only where
/// <CLI/CLI.hpp> is included already: CLI11 is heavy).
///
/// One numeric validator: every number a flag takes is finite and inside
/// its range; "nan", "inf", "1e999" or an out-of-range value stops the
/// program with exit 64 and a one-line reason naming the flag.

#include <CLI/CLI.hpp>

#include "nodeprobe/input.h"

namespace nodeprobe {

/// A finite number in [lo, hi] (NaN and infinities are refused).
CLI::Validator finite_range(double lo, double hi);

/// Adds the finite check to every floating-point option of `app` and its
/// subcommands that lacks one (parse_command_line calls it): a flag added
/// without a range still refuses NaN and infinities.
void guard_numeric_options(CLI::App& app);

/// --max-input-size SIZE (the size cap of the files this command reads;
/// K, M, G = powers of 1024) and --read-timeout SECONDS (longest wait for
/// data from a pipe) into `o`.
void add_input_flags(CLI::App& app, InputOverrides& o);

}  // namespace nodeprobe
