"""Headless Chromium for the HTML report's browser tests and its load benchmark (issue 21, issue 31).

`chromium()` finds the browser (`chromium` on PATH, else `/usr/bin/chromium`; CI installs it with
`scripts/install.sh --with-chromium`); `run` starts it headless on a local file with a private profile and no
network services; `probe` writes a page with a script appended that stores what it measured in a `<pre>`,
and reads it back from the DOM Chromium dumps. `LOAD_PROBE` measures, at the end of the page after its own
script ran, the milliseconds since navigation start with a layout forced, the page's height and the cards in it.
Nothing here is timed against a limit: the benchmark reports the figures, the tests assert positions only.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

WIDTH = 1280
HEIGHT = 800  # the first screen of the screenshot test and the benchmark


def chromium() -> str | None:
    found = shutil.which("chromium")
    return found or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


def run(page: Path, profile: Path, *args: str, width: int = WIDTH, height: int = 2400, fragment: str = "") -> str:
    """Chromium headless on `page` (with `#fragment`, if given); its stdout (the DOM with `--dump-dom`)."""
    exe = chromium()
    if exe is None:
        raise RuntimeError("Chromium is not installed (Debian package `chromium`; scripts/install.sh installs it)")
    argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
            f"--window-size={width},{height}", f"--user-data-dir={profile}", *args,
            page.resolve().as_uri() + (f"#{fragment}" if fragment else "")]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, check=True).stdout


def probe(page_html: str, where: Path, name: str, script: str, before: str = "", **kw: Any) -> dict[str, Any]:
    """`page_html` with `before` put ahead of its own script and `script` appended to its body, loaded in
    Chromium; the JSON the appended script wrote into `<pre id="probe">`."""
    if before:
        page_html = page_html.replace("<script>", before + "<script>", 1)
    page = where / f"{name}.html"
    page.write_text(page_html.replace("</body>", script + "</body>"), encoding="utf-8")
    dom = run(page, where / "profile", "--dump-dom", **kw)
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    if not found:
        raise RuntimeError(f"{name}: the probe did not run")
    return json.loads(html.unescape(found.group(1)))


LOAD_PROBE = """<script>(function(){
  var h=document.documentElement.scrollHeight, t=performance.now();
  var r={ms:t,height:h,cards:document.querySelectorAll('section.card').length,
    timelines:document.querySelectorAll('svg.timeline').length};
  var p=document.createElement('pre');p.id='probe';p.textContent=JSON.stringify(r);document.body.appendChild(p);
})();</script>"""
