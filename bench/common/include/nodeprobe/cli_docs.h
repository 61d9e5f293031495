#pragma once
/// Man page and bash completion written from a program's own CLI11 option
/// definitions (the hidden --help-man / --help-completion of every
/// executable), so the installed documentation cannot drift from the flags.

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace nodeprobe {

/// Values completion offers for an option beyond its IsMember choices
/// (`nodeprobe accept --only`: the probe names of the plan).
using CompletionValues = std::map<const CLI::Option*, std::vector<std::string>>;

/// roff man page, section 1, for `app` and all its subcommands.
void write_man_page(const CLI::App& app, std::ostream& out);

/// bash completion script for `app`: subcommands, every flag of the command
/// being typed, IsMember choices and `values` after an option, files after
/// other options that take a value.
void write_bash_completion(const CLI::App& app, const CompletionValues& values, std::ostream& out);

/// The choices of an option ("quick", "full" for IsMember({"quick","full"}))
/// parsed from its validator description; empty when it has none.
std::vector<std::string> option_choices(const CLI::Option& opt);

}  // namespace nodeprobe
