#include "compare_cmd.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <iostream>
#include <sstream>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/compare.h"
#include "nodeprobe/fleet_compare.h"
#include "nodeprobe/fleet_json.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/render_compare.h"
#include "nodeprobe/render_html.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/status.h"

namespace nodeprobe::diag {

CLI::App* setup_compare(CLI::App& app, CompareCmdOptions& opt) {
  CLI::App* sub = app.add_subcommand("compare", "Did my tuning help? Compare two reports, noise-aware");
  sub->add_option("BEFORE", opt.before, "Report before the change")->required();
  sub->add_option("AFTER", opt.after, "Report after the change")->required();
  // finite_range refuses NaN and infinities at parse time (before the missing
  // BEFORE/AFTER is noticed); check_options stays for callers of the library.
  sub->add_option("--threshold", opt.threshold_pct,
                  "Smallest change in % that counts (default 5); worse/better also need the spreads to separate")
      ->check(finite_range(0.0, 1e6));
  sub->add_option("--format", opt.format, "text, md, json or html")
      ->check(CLI::IsMember({"text", "md", "json", "html"}));
  sub->add_option("--out", opt.out, "Write to FILE instead of stdout");
  add_input_flags(*sub, opt.input);
  return sub;
}

namespace {

// The rendered comparison to --out or stdout; exit 1 when something got worse.
int emit_comparison(const CompareCmdOptions& opt, const std::string& doc, bool worse) {
  if (opt.out.empty()) {
    std::cout << doc << std::flush;
  } else {
    try {
      write_file_atomic(opt.out, doc);
    } catch (const std::exception& e) {
      std::cerr << "nodeprobe compare: " << e.what() << "\n";
      return exit_code::kError;
    }
  }
  return worse ? exit_code::kFail : exit_code::kOk;
}

// Two fleet reports: nodes paired by host (fleet_compare.h).
int compare_fleet_reports(const CompareCmdOptions& opt, const std::string& before_text, const std::string& after_text) {
  FleetReport before, after;
  try {
    before = parse_fleet_report(before_text, opt.before);
    after = parse_fleet_report(after_text, opt.after);
  } catch (const ReportError& e) {
    std::cerr << "nodeprobe compare: " << e.what() << "\n";
    return exit_code::kError;
  }
  if (opt.format == "html") {
    std::cerr << "nodeprobe compare: fleet reports compare as text, md or json (each has its own --html page)\n";
    return exit_code::kUsage;
  }
  CompareOptions copt;
  copt.threshold_pct = opt.threshold_pct;
  const FleetComparison c = compare_fleets(before, after, copt, opt.before, opt.after);
  std::ostringstream doc;
  if (opt.format == "md") render_fleet_compare_markdown(c, doc);
  else if (opt.format == "json") doc << fleet_compare_to_json(c).dump(2) << "\n";
  else render_fleet_compare_text(c, doc);
  return emit_comparison(opt, doc.str(), c.any_worse());
}

bool is_fleet(const std::string& schema) { return schema.rfind("nodeprobe.fleet/", 0) == 0; }

}  // namespace

int run_compare(const CompareCmdOptions& opt) {
  CompareOptions copt;
  copt.threshold_pct = opt.threshold_pct;
  if (const std::string why = check_options(copt); !why.empty()) {
    std::cerr << "nodeprobe compare: " << why << "\n";
    return exit_code::kUsage;
  }
  if (auto why = check_output_path(opt.out); !why.empty()) {
    std::cerr << "nodeprobe compare: " << why << "\n";
    return exit_code::kError;
  }
  Report before, after;
  try {
    const std::string before_text = read_report_text(opt.before, opt.input);
    const std::string after_text = read_report_text(opt.after, opt.input);
    const bool fleet_before = is_fleet(document_schema(before_text)), fleet_after = is_fleet(document_schema(after_text));
    if (fleet_before && fleet_after) return compare_fleet_reports(opt, before_text, after_text);
    if (fleet_before != fleet_after)
      throw ReportError((fleet_before ? opt.before : opt.after) + " is a fleet report and " +
                        (fleet_before ? opt.after : opt.before) + " is not: compare a fleet with a fleet");
    before = parse_report(before_text, opt.before == "-" ? "stdin" : opt.before);
    after = parse_report(after_text, opt.after == "-" ? "stdin" : opt.after);
  } catch (const ReportError& e) {
    std::cerr << "nodeprobe compare: " << e.what() << "\n";
    return exit_code::kError;
  }
  const Comparison c = compare_reports(before, after, copt, opt.before, opt.after);

  std::ostringstream doc;
  const bool color = opt.out.empty() && opt.format == "text" && ::isatty(STDOUT_FILENO);
  if (opt.format == "text") render_compare_text(c, doc, color);
  else if (opt.format == "md") render_compare_markdown(c, doc);
  else if (opt.format == "json") doc << compare_to_json(c).dump(2) << "\n";
  else {
    HtmlOptions h;
    h.before = &before;
    h.comparison = &c;
    h.title = "nodeprobe compare: " + after.host.hostname;
    render_html(after, doc, h);
  }
  return emit_comparison(opt, doc.str(), c.any_worse());
}

}  // namespace nodeprobe::diag
