#pragma once
/// The one emit path: every executable (probes through run_probes, the
/// allreduce ranks and launcher, accept, diag) hands its finished report
/// here, which writes the JSON (a file, or stdout with `--json -`), every
/// exporter asked for (--prometheus, --cloudwatch-emf, --junit) through the
/// safe file writer, and the people's text (stdout, or stderr with `--json -`).

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "nodeprobe/probe_main.h"
#include "nodeprobe/report.h"

namespace nodeprobe {

/// People's text of a report (the default is render_text); `rc` is the exit
/// code the command is about to return.
using TextRenderer = std::function<void(const Report& r, std::ostream& out, bool color, int rc)>;

/// Writes `r` where `opt` says and prints its text unless --quiet. Returns
/// `rc`, or 2 when a file could not be written (the reason is on stderr,
/// prefixed with `tool`).
int emit_report(const Report& r, const CommonOptions& opt, int rc, const std::string& tool,
                const TextRenderer& text = {});

/// Where the people's text goes: stderr with `--json -` (or text_to_stderr), else stdout.
std::ostream& text_stream(const CommonOptions& opt);
/// True when that stream is a terminal (colour).
bool text_is_tty(const CommonOptions& opt);

/// "" when every output named in `opt` can be written, else the first reason.
std::string check_output_paths(const CommonOptions& opt);

/// Findings from the checks and probe statuses, then `extra` (the probes' and
/// the diagnosis' own; one with the same id and probe gets their evidence and
/// remedy instead of a second entry), the verdict and the finish time.
void finalize_report(Report& r, std::vector<Finding> extra = {});

/// The exit code of a finished run (DESIGN.md's table, the same for every
/// executable): 124 when a probe timed out (its --timeout or a deadline it
/// was given passed; the verdict aggregates that as error), else the
/// verdict's code.
int report_exit_code(const Report& r);

/// A probe cut short by the stop (stop.h): status timeout after the
/// deadline, error after a signal, the reason saying so; what it measured
/// stays. Does nothing while no stop was requested.
void mark_stopped(ProbeResult& p);

/// An entry for a step the stop ended before it reported anything
/// (`running`: it was in flight) or before it started.
ProbeResult stopped_probe(const std::string& name, bool running);

/// Makes `checkpoint` (the report as it stands, in-flight steps listed in
/// `in_flight`, steps not started in `not_started`) what the stop handlers
/// write when the work does not stop in time: finalized when the stop comes,
/// then emitted without the people's text.
void set_emergency_report(Report checkpoint, std::vector<std::string> in_flight,
                          std::vector<std::string> not_started, const CommonOptions& opt,
                          const std::string& tool, std::vector<Finding> extra = {});

}  // namespace nodeprobe
