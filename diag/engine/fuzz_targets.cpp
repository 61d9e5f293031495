#include "fuzz_targets.h"

#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "collector.h"
#include "diagnose.h"
#include "nodeprobe/compare.h"
#include "nodeprobe/exporters.h"
#include "nodeprobe/render_compare.h"
#include "nodeprobe/render_html.h"
#include "nodeprobe/render_markdown.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/report_json.h"
#include "playbook.h"
#include "rule_engine.h"
#include "tar_gz.h"

namespace nodeprobe::diag {

void fuzz_analyze(const std::uint8_t* data, std::size_t size) {
  static RuleEngine engine(default_playbook());
  LineBlockReader reader(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  AnalysisOptions opt;
  opt.time.now = 1.8e9;
  opt.since = 1.7e9;
  opt.efa_expected = size % 2 == 0;
  SourceResult r = engine.analyze(reader, "fuzz", opt);
  Report rep;
  rep.findings = r.findings.render(engine.playbook());
  (void)dump_report(rep);  // the JSON must serialise whatever the bytes were
}

void fuzz_bundle(const std::uint8_t* data, std::size_t size) {
  ByteSource src(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.tar.gz");
  TarReader tar(src);
  TarEntry e;
  char buf[4096];
  int entries = 0;
  while (tar.next(&e) && ++entries < 1000) {
    (void)safe_relative_path(e.name);
    std::string content;
    for (;;) {
      const std::size_t k = tar.read(buf, sizeof buf);
      if (k == 0) break;
      if (content.size() < (1u << 20)) content.append(buf, k);
    }
    if (e.name.size() >= 13 && e.name.compare(e.name.size() - 13, 13, "manifest.json") == 0) {
      try {
        (void)manifest_from_json(Json::parse(content));
      } catch (const std::exception&) {
      }
    }
  }
  (void)tar.error();
}

namespace {

bool load(std::string_view text, const std::string& name, Report* out) {
  try {
    *out = parse_report(std::string(text), name);
    return true;
  } catch (const ReportError&) {
    return false;
  }
}

[[noreturn]] void fuzz_fail(const std::string& why) {
  std::fprintf(stderr, "fuzz property violated: %s\n", why.c_str());
  std::abort();
}

}  // namespace

void fuzz_report(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = all.find('\0');
  Report after, before;
  if (!load(all.substr(0, nul), "after.json", &after)) return;
  const bool two = nul != std::string_view::npos && load(all.substr(nul + 1), "before.json", &before);
  // Written and read again, a report must still load (NaN becomes null and back).
  const std::string doc = dump_report(after);
  Report again;
  if (!load(doc, "again.json", &again)) fuzz_fail("a loaded report does not load again after dump_report");
  std::ostringstream out;
  render_text(after, out, {false, size % 2 == 0});
  render_markdown(after, out);
  render_html(after, out);
  out << to_prometheus(after) << to_cloudwatch_emf(after) << to_junit(after);
  CompareOptions copt;
  copt.threshold_pct = 0.01 + static_cast<double>(size % 997);
  const Report& base = two ? before : again;
  const Comparison c = compare_reports(base, after, copt, "before.json", "after.json");
  render_compare_text(c, out, size % 3 == 0);
  render_compare_markdown(c, out);
  out << compare_to_json(c).dump();
  HtmlOptions h;
  h.before = &base;
  h.comparison = &c;
  render_html(after, out, h);
}

namespace {

constexpr const char* kCanary = "CANARY-7f3a9c";

// A name the tree may hold: relative, no "..", letters, digits, . _ - and /.
bool tree_name(const std::string& n) {
  if (n.empty() || n.size() > 64 || n.front() == '/' || n.back() == '/') return false;
  std::size_t depth = 0, start = 0;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/')) return false;
  while (start <= n.size()) {
    const std::size_t e = n.find('/', start);
    const std::string comp = n.substr(start, e == std::string::npos ? std::string::npos : e - start);
    if (comp.empty() || comp == "." || comp == ".." || ++depth > 4) return false;
    if (e == std::string::npos) break;
    start = e + 1;
  }
  return true;
}

void make_parents(const std::string& root, const std::string& rel) {
  for (std::size_t p = rel.find('/'); p != std::string::npos; p = rel.find('/', p + 1))
    ::mkdir((root + "/" + rel.substr(0, p)).c_str(), 0700);
}

}  // namespace

// Records: kind (1 byte: file, directory, symlink, FIFO, hard link), name
// length (1 byte), name, content length (2 bytes, little endian), content.
// A symlink's content is its target; "@" stands for the canary file outside
// the bundle and "@dir" for its directory. A hard link's content names an
// earlier entry.
void fuzz_bundle_dir(const std::uint8_t* data, std::size_t size) {
  char tmpl[] = "/tmp/nodeprobe-fuzz-dir-XXXXXX";
  const char* base = ::mkdtemp(tmpl);
  if (!base) return;
  const std::string top = base, outside = top + "/outside", bundle = top + "/bundle";
  ::mkdir(outside.c_str(), 0700);
  ::mkdir(bundle.c_str(), 0700);
  {
    const std::string canary = std::string("Nov 29 16:39:36 h kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, ") +
                               kCanary + " GPU has fallen off the bus.\n";
    std::FILE* f = std::fopen((outside + "/canary.log").c_str(), "w");
    if (f) {
      std::fwrite(canary.data(), 1, canary.size(), f);
      std::fclose(f);
    }
  }
  std::size_t i = 0, entries = 0;
  while (i + 4 <= size && entries++ < 64) {
    const int kind = data[i] % 5;
    const std::size_t nlen = data[i + 1];
    if (i + 2 + nlen + 2 > size) break;
    const std::string name(reinterpret_cast<const char*>(data + i + 2), nlen);
    const std::size_t clen = data[i + 2 + nlen] | (static_cast<std::size_t>(data[i + 3 + nlen]) << 8);
    const std::size_t cstart = i + 4 + nlen;
    const std::string content(reinterpret_cast<const char*>(data + cstart), std::min(clen, size - cstart));
    i = cstart + content.size();
    if (!tree_name(name)) continue;
    make_parents(bundle, name);
    const std::string path = bundle + "/" + name;
    switch (kind) {
      case 0: {
        std::FILE* f = std::fopen(path.c_str(), "w");
        if (f) {
          std::fwrite(content.data(), 1, content.size(), f);
          std::fclose(f);
        }
        break;
      }
      case 1: ::mkdir(path.c_str(), 0700); break;
      case 2: {
        const std::string target = content == "@" ? outside + "/canary.log" : content == "@dir" ? outside : content;
        if (!target.empty() && target.find('\0') == std::string::npos) (void)::symlink(target.c_str(), path.c_str());
        break;
      }
      case 3: ::mkfifo(path.c_str(), 0600); break;
      default:
        if (tree_name(content)) (void)::link((bundle + "/" + content).c_str(), path.c_str());
    }
  }
  static RuleEngine engine(default_playbook());  // compiled once: the target measures the reading
  Report report;
  DiagInputs in;
  in.engine = &engine;
  in.bundle = bundle;
  in.now = 1.8e9;
  in.tmp_dir = top;
  in.input.read_timeout_s = 1;
  (void)diagnose(report, in);
  const std::string doc = dump_report(report);
  std::error_code ec;
  std::filesystem::remove_all(top, ec);
  // The input may spell the marker itself (libFuzzer learns it from this
  // very comparison): only a marker the input does not hold came from outside.
  const bool spelled = std::string_view(reinterpret_cast<const char*>(data), size).find(kCanary) != std::string_view::npos;
  if (!spelled && doc.find(kCanary) != std::string::npos) fuzz_fail("a file outside the bundle reached the report");
}

}  // namespace nodeprobe::diag
