"""A real headless Chromium for tests that look at a page: which images loaded, which sections
exist. Debian's `chromium` (installed by .ci/run); tests skip without one."""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]

# Set on <body> once the page has loaded: images, the broken ones, the ids of its sections.
PROBE = """<script>
window.addEventListener("load", () => {
  const imgs = [...document.images];
  document.body.setAttribute("data-probe", JSON.stringify({
    images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt),
    sections: [...document.querySelectorAll("section[id]")].map(s => s.id)}));
});
</script>"""


def find_chromium() -> str:
    """The browser's path, or skip the test saying how to get one."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium: install Debian's `chromium` (.ci/run does) to render the report")


def probe_page(page: Path, tmp_path: Path) -> dict:
    """Load a copy of `page` with PROBE added in Chromium; what PROBE found."""
    copy = tmp_path / f"probe_{page.name}"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                    encoding="utf-8")
    res = subprocess.run([find_chromium(), *FLAGS, "--virtual-time-budget=10000", "--dump-dom",
                          copy.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'data-probe="([^"]*)"', res.stdout)
    assert found, f"Chromium did not run the probe (exit {res.returncode}): {res.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))

