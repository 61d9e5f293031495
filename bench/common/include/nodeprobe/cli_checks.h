#pragma once
/// Command-line checks every executable shares (include only where
/// <CLI/CLI.hpp> is included already: CLI11 is heavy).
///
/// One numeric validator: every number a flag takes is finite and inside
/// its range; "nan", "inf", "1e999" or an out-of-range value stops the
/// program with exit 64 and a one-line reason naming the flag.

#include <CLI/CLI.hpp>
#include <cstdint>

#include "nodeprobe/input.h"

namespace nodeprobe {

/// A finite number in [lo, hi] (NaN and infinities are refused).
CLI::Validator finite_range(double lo, double hi);

/// A size (nodeprobe/size.h: K, M, G, T, KiB.. = powers of 1024; kB, MB,
/// GB, TB = powers of 1000) from lo to hi bytes; anything else stops the
/// program with exit 64 and the one-line reason, naming the flag.
CLI::Validator size_range(std::uint64_t lo = 0, std::uint64_t hi = UINT64_MAX);

/// Adds the finite check to every floating-point option of `app` and its
/// subcommands that lacks one (parse_command_line calls it): a flag added
/// without a range still refuses NaN and infinities.
void guard_numeric_options(CLI::App& app);

/// Makes --help (and the man page) show every option's default: captures
/// the bound value of each option of `app` and its subcommands that has no
/// default text yet, unless its description says the default in words or
/// the value is empty or a "-1" meaning "the profile decides".
void show_defaults(CLI::App& app);

/// --max-input-size SIZE (the size cap of the files this command reads;
/// nodeprobe/size.h) and --read-timeout SECONDS (longest wait for
/// data from a pipe) into `o`.
void add_input_flags(CLI::App& app, InputOverrides& o);

}  // namespace nodeprobe
