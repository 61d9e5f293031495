#include "fuzz_targets.h"

#include <string>
#include <string_view>

#include "collector.h"
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

}  // namespace nodeprobe::diag
