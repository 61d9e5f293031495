#include "nodeprobe/cli_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "nodeprobe/size.h"

namespace nodeprobe {
namespace {

constexpr const char* kFiniteName = "FINITE";

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "" when `s` is a finite number in [lo, hi], else why not.
std::string check_number(const std::string& s, double lo, double hi) {
  const char* b = s.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(b, &end);
  if (end == b || *end != '\0') return "'" + s + "' is not a number";
  if (!std::isfinite(v) || errno == ERANGE) return "'" + s + "' is not a finite number";
  if (v < lo || v > hi) return "'" + s + "' is outside " + number_text(lo) + " .. " + number_text(hi);
  return {};
}

}  // namespace

CLI::Validator size_range(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        std::string why;
        const auto v = parse_size(s, &why);
        if (!v) return why;
        if (*v < lo || *v > hi)
          return "'" + s + "' is outside " + format_size(lo) + " .. " + format_size(hi);
        return {};
      },
      "SIZE (" + std::string(kSizeUnitsHelp) + ")", "SIZE");
}

CLI::Validator finite_range(double lo, double hi) {
  CLI::Validator v([lo, hi](std::string& s) { return check_number(s, lo, hi); },
                   "NUMBER in " + number_text(lo) + " .. " + number_text(hi), kFiniteName);
  return v;
}

void guard_numeric_options(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_type_name().find("FLOAT") == std::string::npos) continue;
    try {
      (void)o->get_validator(kFiniteName);
      continue;  // has finite_range already
    } catch (const CLI::OptionNotFound&) {
    }
    o->check(CLI::Validator(
        [](std::string& s) { return check_number(s, -HUGE_VAL, HUGE_VAL); }, "", kFiniteName));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) guard_numeric_options(*sub);
}

void show_defaults(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (!o->get_default_str().empty() || o->get_expected_min() == 0) continue;  // flags show none
    if (o->get_description().find("default") != std::string::npos) continue;    // said in words
    o->capture_default_str();
    const std::string d = o->get_default_str();
    if (d == "-1" || d == "[]" || d == "\"\"") o->default_str("");
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) show_defaults(*sub);
}

void add_input_flags(CLI::App& app, InputOverrides& o) {
  app.add_option_function<std::string>(
         "--max-input-size", [&o](const std::string& s) { o.max_bytes = parse_size(s).value_or(0); },
         "Largest input file read (default: reports 64 MiB, logs and bundles 8 GiB)")
      ->type_name("SIZE")
      ->check(size_range(1, 1ULL << 50));
  app.add_option("--read-timeout", o.read_timeout_s, "Longest wait for data from a pipe or stdin, seconds (default 30)")
      ->check(finite_range(0.01, 86400));
}

}  // namespace nodeprobe
