#include "report_cmd.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/compare.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/render_compare.h"
#include "nodeprobe/render_html.h"
#include "nodeprobe/render_markdown.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/fleet_json.h"
#include "nodeprobe/fleet_render.h"
#include "nodeprobe/error.h"
#include "nodeprobe/status.h"

namespace nodeprobe::diag {

CLI::App* setup_report(CLI::App& app, ReportCmdOptions& opt) {
  CLI::App* sub = app.add_subcommand("report", "Render a saved report (text, Markdown, JSON, HTML)");
  sub->add_option("RUN", opt.run, "Report file ('-' reads stdin)")->required();
  sub->add_option("--compare", opt.compare, "Baseline report: show RUN against it (before = baseline)");
  sub->add_option("--html", opt.html, "Write a self-contained HTML page to FILE");
  sub->add_option("--format", opt.format, "stdout rendering: text (default), md or json")
      ->check(CLI::IsMember({"text", "md", "json"}))
      ->each([&opt](const std::string&) { opt.format_given = true; });
  // Checked by check_options in run_report: a Range check lets NaN through.
  sub->add_option("--threshold", opt.threshold_pct, "Comparison threshold in % (default 5)")
      ->check(finite_range(0.0, 1e6));
  sub->add_flag("-v,--verbose", opt.verbose, "Text: every check and metric");
  add_input_flags(*sub, opt.input);
  return sub;
}

int run_report(const ReportCmdOptions& opt) {
  CompareOptions copt;
  copt.threshold_pct = opt.threshold_pct;
  if (const std::string why = check_options(copt); !why.empty()) {
    std::cerr << "nodeprobe report: " << why << "\n";
    return exit_code::kUsage;
  }
  if (auto why = check_output_path(opt.html); !why.empty()) {
    std::cerr << "nodeprobe report: " << why << "\n";
    return exit_code::kError;
  }
  Report run, base;
  try {
    // A fleet report renders as the fleet's text or page.
    if (opt.compare.empty()) {
      const std::string text = read_report_text(opt.run, opt.input);
      if (document_schema(text).rfind("nodeprobe.fleet/", 0) == 0) {
        const FleetReport fleet = parse_fleet_report(text, opt.run);
        if (!opt.html.empty()) {
          std::ostringstream page;
          render_fleet_html(fleet, page);
          write_file_atomic(opt.html, page.str());
          if (!opt.format_given) {
            std::cerr << "nodeprobe report: wrote " << opt.html << "\n";
            return exit_code::kOk;
          }
        }
        if (opt.format == "json") std::cout << dump_fleet_report(fleet);
        else render_fleet_text(fleet, std::cout);
        std::cout << std::flush;
        return exit_code::kOk;
      }
      run = parse_report(text, opt.run == "-" ? "stdin" : opt.run);
    } else {
      run = load_report(opt.run, opt.input);
    }
    if (!opt.compare.empty()) base = load_report(opt.compare, opt.input);
  } catch (const ReportError& e) {
    std::cerr << "nodeprobe report: " << e.what() << "\n";
    return exit_code::kError;
  } catch (const ApiError& e) {
    std::cerr << "nodeprobe report: " << e.what() << "\n";
    return exit_code::kError;
  }
  std::unique_ptr<Comparison> cmp;
  if (!opt.compare.empty()) {
    cmp = std::make_unique<Comparison>(compare_reports(base, run, copt, opt.compare, opt.run));
  }
  if (!opt.html.empty()) {
    std::ostringstream page;
    HtmlOptions h;
    if (cmp) {
      h.before = &base;
      h.comparison = cmp.get();
    }
    render_html(run, page, h);
    try {
      write_file_atomic(opt.html, page.str());
    } catch (const std::exception& e) {
      std::cerr << "nodeprobe report: " << e.what() << "\n";
      return exit_code::kError;
    }
    if (!opt.format_given) {
      std::cerr << "nodeprobe report: wrote " << opt.html << "\n";
      return exit_code::kOk;
    }
  }
  if (opt.format == "json") {
    std::cout << (cmp ? compare_to_json(*cmp).dump(2) + "\n" : dump_report(run));
  } else if (opt.format == "md") {
    render_markdown(run, std::cout);
    if (cmp) {
      std::cout << "\n";
      render_compare_markdown(*cmp, std::cout);
    }
  } else {
    TextOptions t;
    t.color = ::isatty(STDOUT_FILENO) != 0;
    t.verbose = opt.verbose;
    render_text(run, std::cout, t);
    if (cmp) {
      std::cout << "\n";
      render_compare_text(*cmp, std::cout, t.color);
    }
  }
  std::cout << std::flush;
  return exit_code::kOk;
}

}  // namespace nodeprobe::diag
