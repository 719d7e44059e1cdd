"""The site's one stylesheet (``style.css``) and one small script (inline in the index): the site
opens from ``file://`` and offline, so no CDN, no remote font, nothing fetched. Plain CSS and a dozen lines of
JavaScript for the index filters; no framework is worth bundling for that."""

CSS = """
:root { --in: #d6f5d6; --near: #ffe9b3; --out: #f9c9c9; --na: #f2f2f2; --ink: #1d2330; --mute: #5b6473;
        --line: #d7dbe2; --link: #1f5fbf; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink);
       margin: 0; background: #fff; }
header.top { background: #1d2330; color: #fff; padding: 10px 24px; display: flex; gap: 24px; align-items: baseline; }
header.top a { color: #fff; text-decoration: none; }
header.top .brand { font-weight: 700; font-size: 17px; }
main { max-width: 1280px; margin: 0 auto; padding: 16px 24px 48px; }
a { color: var(--link); }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 20px 0 6px; }
.sub { color: var(--mute); margin: 0 0 12px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13.5px; }
th, td { border: 1px solid var(--line); padding: 4px 7px; vertical-align: top; text-align: left; }
th { background: #f5f6f8; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.wrap { overflow-x: auto; max-width: 100%; }
.badge { display: inline-block; padding: 1px 7px; border-radius: 9px; font-size: 12px; font-weight: 600;
         white-space: nowrap; border: 1px solid transparent; }
.st-reproduced { background: #d6f5d6; } .st-partial { background: #e3ecff; } .st-analogue { background: #efe3ff; }
.st-planned { background: #fff1c7; } .st-not-implemented { background: #eee; color: #555; }
.claim-yes { background: var(--in); } .claim-no { background: var(--out); } .claim-none { background: var(--na); color: #555; }
.pv-same { background: #d6f5d6; } .pv-other-split { background: #e3ecff; } .pv-subset { background: #fff1c7; }
.pv-stand-in { background: #efe3ff; } .pv-absent { background: #eee; color: #555; }
td.in { background: var(--in); } td.near { background: var(--near); } td.out { background: var(--out); }
td.na { background: var(--na); color: #444; }
td.indicative { opacity: .6; font-style: italic; }
td .ours { font-weight: 600; } td .paper, td .ds { display: block; color: #3a4250; font-size: 12px; white-space: nowrap; }
.legend span { display: inline-block; padding: 1px 8px; margin-right: 6px; border: 1px solid var(--line); font-size: 12.5px; }
.filters { display: flex; gap: 18px; align-items: center; margin: 10px 0 4px; flex-wrap: wrap; }
.filters label { font-weight: 600; }
select { font: inherit; padding: 2px 6px; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 14px; }
figure { margin: 0; border: 1px solid var(--line); padding: 6px; background: #fff; }
figure img { width: 100%; height: auto; display: block; }
figcaption { font-size: 12px; color: var(--mute); margin-top: 4px; word-break: break-all; }
pre, code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12.5px; }
pre { background: #f6f8fa; border: 1px solid var(--line); padding: 10px; overflow-x: auto; }
pre.cmd { background: #1d2330; color: #e8edf5; }
.md { max-width: 100%; overflow-x: auto; }
.md table { font-size: 12.5px; }
nav.toc { font-size: 13.5px; margin: 6px 0 14px; }
nav.toc a { margin-right: 12px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 8px 0; }
dl.meta dt { font-weight: 600; color: var(--mute); } dl.meta dd { margin: 0; }
tr.hidden { display: none; }
.count { color: var(--mute); font-size: 13px; }
"""

# index filters: show the rows whose paper and status match the two selects
JS = """
(function () {
  var paper = document.getElementById('f-paper'), status = document.getElementById('f-status');
  if (!paper || !status) { return; }
  function apply() {
    var rows = document.querySelectorAll('tr[data-paper]'), shown = 0;
    rows.forEach(function (r) {
      var ok = (!paper.value || r.dataset.paper === paper.value) && (!status.value || r.dataset.status === status.value);
      r.classList.toggle('hidden', !ok);
      if (ok) { shown += 1; }
    });
    document.querySelectorAll('section[data-paper]').forEach(function (s) {
      s.hidden = s.querySelectorAll('tr[data-paper]:not(.hidden)').length === 0;
    });
    document.getElementById('f-count').textContent = shown + ' of ' + rows.length + ' items';
  }
  paper.addEventListener('change', apply);
  status.addEventListener('change', apply);
  apply();
})();
"""
