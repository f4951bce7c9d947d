"""Open an HTML report in headless Chromium, as a reader would: how long until the Gantt chart
is painted, what it painted, what went wrong, and a screenshot.

Used by the test that looks at the report, by benchmarks/bench_views.py and by
scripts/screenshots.py. It drives the system's Chromium (Debian's ``chromium`` package) with
playwright (the dev extra); :func:`browser_missing` says why none can be had.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = os.environ.get("SITESIM_CHROMIUM", "/usr/bin/chromium")
#: Headless Chromium in a closed network: no sandbox as root, no background connections.
CHROMIUM_ARGS = (
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)  # fmt: skip

#: The share of the Bokeh plot ``name``'s frame (inside its axes) painted, 0 until it has
#: rendered: Bokeh draws each plot on canvases inside its element's shadow DOM.
PAINTED = """(name) => {
  if (!window.Bokeh || !Bokeh.documents.length) return 0;
  const plot = Bokeh.documents[0].get_model_by_name(name);
  const view = plot && Bokeh.index.get_one(plot);
  if (!view || !view.canvas_view) return 0;
  const layer = view.canvas_view.compose();
  const canvas = layer.canvas || layer;
  const scale = canvas.width / view.canvas_view.bbox.width;
  const b = view.frame.bbox;
  const [x, y] = [Math.round(b.x * scale), Math.round(b.y * scale)];
  const [w, h] = [Math.round(b.width * scale), Math.round(b.height * scale)];
  if (w < 10 || h < 10) return 0;
  const data = canvas.getContext('2d').getImageData(x, y, w, h).data;
  let painted = 0;
  for (let i = 0; i < data.length; i += 4)
    if (data[i + 3] > 0 && (data[i] < 245 || data[i + 1] < 245 || data[i + 2] < 245)) painted++;
  return painted / (w * h);
}"""


@dataclass(frozen=True)
class Opened:
    """What opening a report showed: seconds until the Gantt chart was painted, the share of
    its frame painted, and the console errors, page errors and requests beyond the file."""

    seconds: float
    painted: float
    problems: list[str]


def browser_missing() -> str | None:
    """Why no headless Chromium can be driven here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "needs playwright (the dev extra: pip install -e '.[dev]')"
    if not Path(CHROMIUM).exists():
        return f"needs Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    return None


def open_report(
    page: str | Path,
    *,
    screenshot: str | Path | None = None,
    size: tuple[int, int] = (1280, 1400),
    full_page: bool = False,
    timeout_s: float = 60.0,
) -> Opened:
    """Open ``page`` and wait until its Gantt chart is painted; optionally save a screenshot
    (PNG) of the window, or of the ``full_page``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            tab = browser.new_page(viewport={"width": size[0], "height": size[1]})
            problems: list[str] = []
            tab.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda err: problems.append(str(err)))
            tab.on("request", lambda r: None if r.url.startswith(("file:", "data:", "blob:"))
                   else problems.append(f"fetched {r.url}"))  # fmt: skip
            start = time.perf_counter()
            tab.goto(Path(page).resolve().as_uri())
            tab.wait_for_function(PAINTED, arg="gantt", timeout=timeout_s * 1000)
            seconds = time.perf_counter() - start
            painted = float(tab.evaluate(PAINTED, "gantt"))
            if screenshot is not None:
                tab.screenshot(path=str(screenshot), full_page=full_page)
        finally:
            browser.close()
    return Opened(seconds, painted, problems)
