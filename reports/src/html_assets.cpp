#include "html_assets.h"

namespace nodeprobe::html {

const char* const kCss = R"CSS(
:root{--fg:#1d232a;--muted:#5b6570;--bg:#fff;--line:#d8dde3;--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;--skip:#6e7781}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg);margin:0}
header{padding:18px 28px;border-bottom:1px solid var(--line);display:flex;gap:18px;align-items:center;flex-wrap:wrap}
header h1{font-size:20px;margin:0}
header .meta{color:var(--muted)}
nav{padding:6px 28px;border-bottom:1px solid var(--line);font-size:13px}
nav a{margin-right:14px;color:#0969da;text-decoration:none}
main{padding:8px 28px 40px;max-width:1280px}
h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;width:100%}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-weight:600;font-size:12px;color:#fff;background:var(--skip);text-transform:uppercase}
.s-pass,.v-better{background:var(--pass)}.s-warn,.v-ambiguous{background:var(--warn)}
.s-fail,.s-error,.s-timeout,.s-unknown,.v-worse{background:var(--fail)}.s-skip,.v-same,.v-na{background:var(--skip)}
header .badge{font-size:15px;padding:3px 14px}
.finding{border-left:4px solid var(--warn);padding:6px 12px;margin:8px 0;background:#fffbea}
.finding.sev-error{border-color:var(--fail);background:#fff1f0}.finding.sev-info{border-color:var(--skip);background:#f6f8fa}
.finding ol{margin:4px 0 0 18px;padding:0}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:6px}
figcaption{color:var(--muted);font-size:12px;padding:0 6px}
svg.chart{width:100%;height:auto;display:block}
svg .ct{font-size:14px;font-weight:600;fill:#1d232a}
svg .tk{font-size:11px;fill:#5b6570}
svg .al{font-size:12px;fill:#1d232a}
svg .lg{font-size:11.5px;fill:#1d232a}
svg .grid{stroke:#eef1f4;stroke-width:1}
svg .axis{stroke:#8c959f;stroke-width:1}
svg .ref{stroke:#1d232a;stroke-width:2;stroke-dasharray:6 3}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}
input[type=search]{padding:4px 8px;width:320px;border:1px solid var(--line);border-radius:4px}
.muted{color:var(--muted)}
table.cmp td:nth-child(2){word-break:break-all}
table.cmp td.why{min-width:220px}
footer{color:var(--muted);font-size:12px;padding:12px 28px;border-top:1px solid var(--line)}
)CSS";

const char* const kScript = R"JS(
(function () {
  'use strict';
  var box = document.getElementById('metric-filter');
  if (box) {
    box.addEventListener('input', function () {
      var q = box.value.toLowerCase();
      var rows = document.querySelectorAll('table.metrics tbody tr');
      for (var i = 0; i < rows.length; i++) {
        rows[i].style.display = rows[i].textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
      }
    });
  }
  document.documentElement.setAttribute('data-render', 'ok');
})();
)JS";

}  // namespace nodeprobe::html
